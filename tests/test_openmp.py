"""``import graphshard`` shortens OpenMP's idle spinning (``GOMP_SPINCOUNT``) before torch
loads libgomp; a user's own ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` wins, and peers get the
environment without our choice."""

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
seen = {}  # what libgomp reads when torch loads it
for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
    value = libc.getenv(name.encode())
    seen[name] = value.decode() if value else None
peer = peer_environ()
print(json.dumps({"torch_loaded_by_graphshard": "torch" in sys.modules, "c_environ": seen,
                  "peer": {n: peer.get(n) for n in seen}}))
"""


def _clean_env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    return {**env, **settings}


def _probe(**settings: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], env=_clean_env(**settings),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_sets_a_short_spin_before_torch_loads_and_peers_do_not_inherit_it() -> None:
    out = _probe()
    assert out["torch_loaded_by_graphshard"] is False  # so the setting precedes libgomp
    assert out["c_environ"] == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "1000"}
    assert out["peer"] == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None}


@pytest.mark.parametrize("setting", [{"OMP_WAIT_POLICY": "ACTIVE"},
                                     {"OMP_WAIT_POLICY": "passive"},
                                     {"GOMP_SPINCOUNT": "50000"}])
def test_a_users_own_setting_wins_and_reaches_peers(setting: dict[str, str]) -> None:
    out = _probe(**setting)
    expected = {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None, **setting}
    assert out["c_environ"] == expected  # nothing added beside it
    assert out["peer"] == expected


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

    def idle_cpu(**settings: str) -> float:
        done = subprocess.run([sys.executable, "-c", IDLE], env=_clean_env(**settings),
                              capture_output=True, text=True, check=True)
        return float(done.stdout.strip().splitlines()[-1])

    # the sleeping main thread uses no CPU: what is counted is torch's idle OpenMP thread
    assert idle_cpu() < 0.05
    assert idle_cpu(OMP_WAIT_POLICY="ACTIVE") > 0.1  # the control: the probe sees spinning
