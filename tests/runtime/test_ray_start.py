"""A local Ray's start-up: Ray's limits raised for a busy machine, one retry with a clear
message, and a failed start leaves none of the processes it started running."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from graphshard.runtime import ray as gray
from graphshard.runtime.ray import STARTUP_ENV, RayStartError, init_ray


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: it has ended, unreaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


class _FakeRay:
    """Stands in for the ``ray`` module: each ``init`` starts two daemons, a child and an
    orphan (its parent exits at once, as a crashed raylet leaves its agents), and fails
    the first ``fail`` times."""

    def __init__(self, fail: int) -> None:
        self.fail = fail
        self.inits: list[dict[str, str | None]] = []
        self.pids: list[int] = []

    def init(self, **kwargs: object) -> None:
        self.inits.append({k: os.environ.get(k) for k in STARTUP_ENV})
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        orphan = subprocess.run(["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"],
                                capture_output=True, text=True, check=True)
        self.pids += [child.pid, int(orphan.stdout)]
        if len(self.inits) <= self.fail:
            raise RuntimeError("The current node timed out during startup.\nmore lines")

    def shutdown(self) -> None:
        pass


@pytest.fixture
def local_start(monkeypatch):
    """``init_ray(address=None)`` starts a local Ray (no cluster to join), with none of
    STARTUP_ENV in the environment but one a user set."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(gray, "cluster_found", lambda: False)
    for key in STARTUP_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("RAY_worker_register_timeout_seconds", "77")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_a_failed_start_is_stopped_and_tried_once_more(local_start, caplog):
    fake = _FakeRay(fail=2)
    with caplog.at_level(logging.WARNING, logger="graphshard.runtime.ray"), \
            pytest.raises(RayStartError, match=r"a local Ray did not start \(2 attempts; the "
                          r"last: RuntimeError: The current node timed out during startup.\); "
                          r"every process it started was stopped \(2 after the last") as err:
        init_ray(fake, num_cpus=1)
    assert isinstance(err.value, RuntimeError) and "RAY_raylet_start_wait_time_s" in str(err.value)
    assert len(fake.inits) == 2  # one retry, no more
    retries = [r.getMessage() for r in caplog.records if "trying once more" in r.getMessage()]
    assert len(retries) == 1 and "stopped the 2 process(es)" in retries[0]
    # every daemon of both attempts is gone, the orphans included
    assert [pid for pid in fake.pids if _running(pid)] == []
    # Ray's daemons saw the raised limits, except the one the user had set ...
    want = {**STARTUP_ENV, "RAY_worker_register_timeout_seconds": "77"}
    assert fake.inits == [want, want]
    # ... and this process's environment is as it was
    assert {k: os.environ.get(k) for k in STARTUP_ENV} == {
        **dict.fromkeys(STARTUP_ENV), "RAY_worker_register_timeout_seconds": "77"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_a_second_attempt_that_starts_is_kept(local_start, caplog):
    fake = _FakeRay(fail=1)
    with caplog.at_level(logging.WARNING, logger="graphshard.runtime.ray"):
        init_ray(fake, num_cpus=1)
    assert len(fake.inits) == 2
    assert [r for r in caplog.records if "trying once more" in r.getMessage()]
    first, second = fake.pids[:2], fake.pids[2:]
    assert not any(_running(p) for p in first)  # the failed attempt's daemons are stopped
    assert all(_running(p) for p in second)  # the started Ray's are not touched
    for pid in second:
        os.kill(pid, 9)
