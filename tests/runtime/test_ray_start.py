"""Starting a local Ray on a busy machine (issue 40 item 4): a failed start is retried
once, and every process it left is stopped, found by this process's tree."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphshard.runtime import ray as ray_start

psutil = pytest.importorskip("psutil")


class _FlakyRay:
    """A ray module whose init starts a daemon (a child process) and fails ``fails`` times."""

    def __init__(self, fails: int) -> None:
        self.fails, self.calls, self.daemons = fails, 0, []
        self.shutdowns = 0

    def init(self, **kwargs):
        self.calls += 1
        self.daemons.append(subprocess.Popen([sys.executable, "-c",
                                              "import time; time.sleep(600)"]))
        if self.calls <= self.fails:
            raise Exception("The current node timed out during startup. This could happen "
                            "because some of the raylet failed to startup.")

    def shutdown(self):
        self.shutdowns += 1


def _running(proc) -> bool:
    return proc.poll() is None


def test_a_failed_start_is_stopped_and_retried(monkeypatch, caplog):
    monkeypatch.setattr(ray_start, "cluster_found", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    fake = _FlakyRay(fails=1)
    try:
        ray_start.init_ray(fake)
        assert fake.calls == 2 and fake.shutdowns == 1
        assert not _running(fake.daemons[0])  # the failed attempt's daemon: stopped
        assert _running(fake.daemons[1])  # the good one's: left to Ray
        assert "a local Ray did not start (The current node timed out during startup." \
            in caplog.text and "stopped the 1 processes it left, trying once more" \
            in caplog.text
    finally:
        for d in fake.daemons:
            d.kill()
            d.wait()


def test_two_failed_starts_are_one_clear_error(monkeypatch):
    monkeypatch.setattr(ray_start, "cluster_found", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    fake = _FlakyRay(fails=5)
    try:
        with pytest.raises(RuntimeError, match=r"a local Ray did not start in 2 attempts \(the "
                           r"machine may be too busy for Ray's fixed start-up waits\): The "
                           r"current node timed out during startup\..*stopped \(1 the last "
                           r"time\)"):
            ray_start.init_ray(fake)
        assert fake.calls == 2
        assert not any(_running(d) for d in fake.daemons)
    finally:
        for d in fake.daemons:
            d.kill()
            d.wait()
