"""Server failures: restart and retry, bounded errors, clean shutdown (real Ray)."""

from __future__ import annotations

import logging
import os
import signal

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
    handle = gs.distributed.serve(p.config, tensor_dir=str(tmp_path / "tensors"))
    try:
        dg = gs.distributed.DistGraph(p.config, colocate=())
        t = gs.distributed.DistTensor((90,), "float32", "kept", graph=dg, part_policy="node:u",
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


class _Counting:
    """An actor handle that counts the calls submitted through it."""

    def __init__(self, actor):
        self.actor, self.calls = actor, 0

    def __getattr__(self, name):
        self.calls += 1
        return getattr(self.actor, name)


def test_server_gone_for_good_fails_at_once(ray_cluster, make_parts, tmp_path, caplog):
    p = make_parts(2, "fragile", 2, str(tmp_path / "parts"))
    handle = gs.distributed.serve(p.config, max_restarts=1)
    try:
        dg = gs.distributed.DistGraph(p.config, colocate=())
        ids = np.arange(90)
        feat = dg.nodes["u"].data["feat"]
        want = p.whole.nodes["u"].data["feat"]
        os.kill(handle.pids[0], signal.SIGKILL)  # Ray's one restart
        np.testing.assert_array_equal(feat[ids], want[ids])
        os.kill(ray_cluster.get(handle.actors()[0].info.remote())["pid"], signal.SIGKILL)
        gone = r"graph server of partition 0 \(fragile-\w+:part0\) is gone for good"
        with pytest.raises(gs.distributed.ServerError, match=gone):
            feat[ids]
        # known dead now: the next request fails without sending anything or retrying
        dg.router.actors[0] = spy = _Counting(dg.router.actors[0])
        with caplog.at_level(logging.INFO, logger="graphshard.distributed._rpc"), \
                pytest.raises(gs.distributed.ServerError, match=gone) as err:
            dg.degrees(ids, "follows")
        assert spy.calls == 0
        assert not [r for r in caplog.records if "retrying" in r.getMessage()]
        assert (err.value.field, err.value.value) == ("part_id", 0)
        on1 = ids[dg.get_partition_book().nid2partid(ids, "u") == 1]
        np.testing.assert_array_equal(feat[on1], want[on1])  # partition 1 still answers
        with pytest.raises(gs.distributed.ServerError, match="partition 0 is not reachable"):
            gs.distributed.DistGraph(p.config, colocate=())  # finds the dead server
    finally:
        handle.shutdown()
    assert gs.distributed.find_servers(p.config) is None
    for pid in handle.pids:
        assert not _alive(pid)


def test_serving_twice_is_refused(ray_cluster, shop_parts, shop_dist):
    with pytest.raises(gs.ConfigError, match="graph servers are already running"):
        gs.distributed.serve(shop_parts[2].config)
