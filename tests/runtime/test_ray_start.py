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


class _OrphaningRay:
    """A ray module whose init leaves an orphan (a process whose parent exits at once, as a
    crashed raylet leaves its agents) and fails; it records the Ray settings its daemons
    would inherit."""

    def __init__(self) -> None:
        self.orphans: list[int] = []
        self.env: list[dict[str, str | None]] = []

    def init(self, **kwargs):
        import os

        self.env.append({k: os.environ.get(k) for k in ray_start.STARTUP_ENV})
        out = subprocess.run(["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"],
                             capture_output=True, text=True, check=True)
        self.orphans.append(int(out.stdout))
        raise Exception("The current node timed out during startup.")

    def shutdown(self):
        pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux child subreaper")
def test_orphans_of_a_failed_start_are_stopped_and_limits_raised(monkeypatch):
    import os

    monkeypatch.setattr(ray_start, "cluster_found", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for key in ray_start.STARTUP_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("RAY_worker_register_timeout_seconds", "77")  # the user's own
    fake = _OrphaningRay()
    with pytest.raises(RuntimeError, match=r"did not start in 2 attempts.*stopped \(1 the "
                                           r"last time\)"):
        ray_start.init_ray(fake)
    # the orphans were re-parented to this process while Ray started, and stopped
    assert not [pid for pid in fake.orphans if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    # Ray's daemons would have seen the raised limits, the user's own kept ...
    want = {**ray_start.STARTUP_ENV, "RAY_worker_register_timeout_seconds": "77"}
    assert fake.env == [want, want]
    # ... and this process's environment is as it was
    assert {k: os.environ.get(k) for k in ray_start.STARTUP_ENV} == {
        **dict.fromkeys(ray_start.STARTUP_ENV), "RAY_worker_register_timeout_seconds": "77"}


_KILLED_DRIVER = """
import subprocess, sys, time
import psutil
from graphshard.runtime import ray as ray_start

class RaySpawningAgents:
    def init(self, **kwargs):
        # a 'raylet' (not tied to this process, as Ray's agents are not) with an 'agent'
        self.raylet = subprocess.Popen(["sh", "-c", "sleep 3000 & wait"])

ray_start.cluster_found = lambda: False
fake = RaySpawningAgents()
ray_start.init_ray(fake)
raylet = psutil.Process(fake.raylet.pid)
while not raylet.children():  # its agent has started
    time.sleep(0.05)
print(raylet.pid, raylet.children()[0].pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process tree")
def test_what_a_killed_driver_leaves_of_its_ray_is_stopped(monkeypatch):
    """Issue 41 item 7: after ``kill -9`` of the process that started a local Ray, Ray's
    agents lived on; the watcher started with Ray stops them."""
    import os
    import signal

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    import contextlib
    import time

    driver = subprocess.Popen([sys.executable, "-c", _KILLED_DRIVER], stdout=subprocess.PIPE,
                              text=True)
    left: list = []
    try:
        left = [psutil.Process(int(pid)) for pid in driver.stdout.readline().split()]
        assert len(left) == 2
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        # the bound is for a broken watcher only: it stops them once it sees the driver gone
        bound = time.monotonic() + 300
        while [p for p in left if _alive(p)] and time.monotonic() < bound:
            time.sleep(0.2)
        assert not [p for p in left if _alive(p)]
    finally:
        driver.kill()
        for proc in left:
            with contextlib.suppress(psutil.Error):
                proc.kill()


def _alive(proc) -> bool:
    """Running and not a zombie (an orphan that init has not reaped yet is gone)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_workers_of_a_local_ray_run_at_the_drivers_priority(ray_cluster):
    """Ray runs its workers at nice 15 by default; on a machine at load 10-20 a graph server
    or trainer then got ~1% of a core and compiled its kernels for hours."""
    import os

    ray = ray_cluster

    @ray.remote(num_cpus=0)
    class Probe:
        def niceness(self) -> int:
            return os.nice(0)

    @ray.remote(num_cpus=0)
    def niceness() -> int:
        return os.nice(0)

    probe = Probe.remote()
    try:
        assert ray.get(probe.niceness.remote()) == os.nice(0)
        assert ray.get(niceness.remote()) == os.nice(0)
    finally:
        ray.kill(probe)
