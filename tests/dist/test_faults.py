"""Server failures: restart and retry, bounded errors, clean shutdown (real Ray)."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

import graphshard as gs


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_killed_server_restarts_and_the_request_is_answered(ray_cluster, make_parts,
                                                            tmp_path):
    p = make_parts(1, "faulty", 2, str(tmp_path / "parts"))
    handle = gs.dist.serve(p.config, tensor_dir=str(tmp_path / "tensors"))
    try:
        dg = gs.dist.DistGraph(p.config, colocate=(), timeout=60.0)
        t = gs.dist.DistTensor((90,), "float32", "kept", graph=dg, part_policy="node:u",
                               persistent=True)
        t[np.arange(90)] = np.arange(90, dtype=np.float32)
        ids = np.arange(90)
        want = p.whole.nodes["u"].data["feat"][ids]
        os.kill(handle.pids[1], signal.SIGKILL)
        np.testing.assert_array_equal(dg.nodes["u"].data["feat"][ids], want)  # retried
        np.testing.assert_array_equal(t[ids], np.arange(90))  # tensor file reopened
        infos = ray_cluster.get([a.info.remote() for a in handle.actors()])
        assert infos[1]["pid"] != handle.pids[1]
    finally:
        handle.shutdown()
    for pid in handle.pids:
        assert not _alive(pid)


def test_dead_server_gives_a_clear_error_not_a_hang(ray_cluster, make_parts, tmp_path):
    p = make_parts(2, "fragile", 2, str(tmp_path / "parts"))
    handle = gs.dist.serve(p.config, max_restarts=0)
    try:
        dg = gs.dist.DistGraph(p.config, colocate=(), timeout=5.0)
        dg.nodes["u"].data["feat"][[0]]
        ray_cluster.kill(handle.actors()[0], no_restart=True)
        start = time.monotonic()
        with pytest.raises(gs.dist.ServerError, match="graph server of partition 0"):
            dg.nodes["u"].data["feat"][np.arange(90)]
        # bounded by the 5 s timeout plus retries, with slack for a loaded 2-core machine
        assert time.monotonic() - start < 30.0
    finally:
        handle.shutdown()
    assert gs.dist.find_servers(p.config) is None
    for pid in handle.pids:
        assert not _alive(pid)


def test_serving_twice_is_refused(ray_cluster, shop_parts, shop_dist):
    with pytest.raises(gs.ConfigError, match="graph servers are already running"):
        gs.dist.serve(shop_parts[2].config)
