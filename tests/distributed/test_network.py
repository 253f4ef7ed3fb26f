"""What a local Ray started by graphshard exposes: loopback only (real Ray, one fresh start)."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

import graphshard.runtime.ray
from graphshard.runtime.executor import start_ray
from graphshard.runtime.ray import LOOPBACK, is_loopback
from waiting import run_while_busy

# Runs in a fresh interpreter (one Ray per process; the session's shared Ray is another one):
# DistGraph starts a local Ray and the graph servers, then the listening TCP sockets of this
# process and all its descendants (GCS, raylet, agents, server workers) are listed.
_SCRIPT = textwrap.dedent("""
    import json, sys
    import psutil
    import graphshard as gs

    dg = gs.distributed.DistGraph(sys.argv[1], colocate=())
    dg.degrees([0, 1], "follows")  # both servers answer: their workers are up
    me = psutil.Process()
    ours = {me.pid} | {p.pid for p in me.children(recursive=True)}
    names = {}
    for pid in ours:
        try:
            names[pid] = psutil.Process(pid).name()
        except psutil.Error:
            pass
    listen = [[c.laddr.ip, c.laddr.port, names.get(c.pid, "?")]
              for c in psutil.net_connections(kind="inet")
              if c.status == psutil.CONN_LISTEN and c.pid in ours]
    import ray
    print(json.dumps({"listen": listen, "node_ip": ray.util.get_node_ip_address()}))
    dg.close()
    ray.shutdown()
""")


@pytest.mark.skipif(sys.platform != "linux", reason="lists other processes' sockets (Linux)")
def test_a_local_run_listens_on_loopback_only(make_parts, tmp_path):
    pytest.importorskip("ray", reason="needs ray (pip install 'graphshard[ray]')")
    pytest.importorskip("psutil", reason="needs psutil")
    p = make_parts(3, "net", 2, str(tmp_path / "parts"))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    run = run_while_busy([sys.executable, "-c", _SCRIPT, p.config], "the listing run",
                         env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    names = {name for _, _, name in out["listen"]}
    assert {"gcs_server", "raylet"} <= names, out  # the listing sees Ray's servers
    exposed = [s for s in out["listen"] if not is_loopback(s[0])]
    assert not exposed, f"listening beyond loopback: {exposed}"
    assert out["node_ip"] == LOOPBACK


class _FakeRay:
    """Records ``ray.init``'s arguments."""

    def __init__(self) -> None:
        self.up, self.calls = False, []

    def is_initialized(self) -> bool:
        return self.up

    def init(self, **kwargs: object) -> None:
        self.up = True
        self.calls.append(kwargs)


def test_the_pipeline_starts_a_loopback_ray_and_joins_a_cluster_as_told(monkeypatch):
    pytest.importorskip("ray", reason="needs ray (pip install 'graphshard[ray]')")
    monkeypatch.setattr(graphshard.runtime.ray, "cluster_found", lambda: False)  # no `ray start`
    local = _FakeRay()
    assert start_ray(local, num_cpus=2)
    assert local.calls == [{"address": None, "_node_ip_address": LOOPBACK, "num_cpus": 2,
                            "include_dashboard": False, "log_to_driver": False}]
    cluster = _FakeRay()
    assert start_ray(cluster, "ray://head:10001")
    assert cluster.calls == [{"address": "ray://head:10001", "include_dashboard": False,
                              "log_to_driver": False}]
