"""``import graphshard`` makes OpenMP's idle threads wait passively, before torch loads libgomp;
a user's own ``OMP_WAIT_POLICY`` wins, and peers get the environment without our choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import ctypes, json, sys
import graphshard
from graphshard._util.openmp import peer_environ
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
value = libc.getenv(b"OMP_WAIT_POLICY")  # what libgomp reads when torch loads it
print(json.dumps({"torch_loaded_by_graphshard": "torch" in sys.modules,
                  "c_environ": value.decode() if value else None,
                  "peer": peer_environ().get("OMP_WAIT_POLICY")}))
"""


def _probe(policy: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_sets_passive_wait_before_torch_loads_and_peers_do_not_inherit_it() -> None:
    out = _probe(None)
    assert out["torch_loaded_by_graphshard"] is False  # so the setting precedes libgomp
    assert out["c_environ"] == "PASSIVE"
    assert out["peer"] is None


@pytest.mark.parametrize("policy", ["ACTIVE", "passive"])
def test_a_users_wait_policy_wins_and_reaches_peers(policy: str) -> None:
    out = _probe(policy)
    assert out["c_environ"] == policy
    assert out["peer"] == policy


IDLE = r"""
import resource, time
import graphshard, torch
torch.set_num_threads(2)
x = torch.ones(4_000_000)
for _ in range(20):
    x.add_(1)  # a parallel region on torch's OpenMP threads
before = resource.getrusage(resource.RUSAGE_SELF)
time.sleep(0.5)
after = resource.getrusage(resource.RUSAGE_SELF)
print(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
"""


def test_torch_threads_sleep_when_idle_under_graphshard_and_spin_when_told_to() -> None:
    pytest.importorskip("torch")

    def idle_cpu(policy: str | None) -> float:
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        if policy:
            env["OMP_WAIT_POLICY"] = policy
        done = subprocess.run([sys.executable, "-c", IDLE], env=env, capture_output=True,
                              text=True, check=True)
        return float(done.stdout.strip().splitlines()[-1])

    # the sleeping main thread uses no CPU: what is counted is torch's idle OpenMP thread
    assert idle_cpu(None) < 0.05
    assert idle_cpu("ACTIVE") > 0.1  # spinning: the control that shows the probe can see it
