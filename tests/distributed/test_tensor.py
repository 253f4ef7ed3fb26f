"""DistTensor and DistEmbedding on real Ray servers."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import FormatError, ValidationError


def test_dist_tensor_reads_writes_and_policies(shop_dist):
    dg = shop_dist[4]
    t = gs.distributed.DistTensor((90, 2), "float32", "t1", part_policy="node:u", graph=dg)
    assert t.part_policy == "node:u" and len(t) == 90
    ids = np.array([3, 80, 3, 41])
    t[ids] = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_array_equal(t[[80, 3, 0]], [[2, 3], [4, 5], [0, 0]])  # last wins
    same = gs.distributed.DistTensor((90, 2), "float32", "t1", graph=dg)  # attach by name
    np.testing.assert_array_equal(same[[41]], [[6, 7]])
    with pytest.raises(ValidationError, match="exists with shape/dtype"):
        gs.distributed.DistTensor((90, 3), "float32", "t1", part_policy="node:u", graph=dg)
    e = gs.distributed.DistTensor((400,), "int64", init_func=lambda s, d: np.full(s, 7, d),
                           part_policy="edge:buys", graph=dg)
    assert e[np.arange(400)].sum() == 2800 and e.part_policy == "edge:u:buys:i"
    dg.nodes["u"].data["h"] = t
    assert dg.nodes["u"].data["h"] is t and "h" in dg.nodes["u"].data
    with pytest.raises(ValidationError, match="cannot infer the partition policy"):
        gs.distributed.DistTensor((7, 2), "float32", graph=dg)
    t.delete()


@pytest.mark.parametrize("opt_cls", [gs.distributed.SparseSGD, gs.distributed.SparseAdagrad,
                                     gs.distributed.SparseAdam])
def test_embedding_updates_equal_dense_reference(shop_dist, tmp_path, opt_cls):
    dg = shop_dist[2]
    rng = np.random.default_rng(3)
    w0 = rng.normal(size=(50, 3)).astype(np.float32)
    emb = gs.distributed.DistEmbedding(50, 3, f"emb_{opt_cls.__name__}", graph=dg)
    emb.weight[np.arange(50)] = w0
    opt = opt_cls([emb], lr=0.05)
    ref, state = w0.astype(np.float64), np.zeros((50, 3))
    m, v = np.zeros((50, 3)), np.zeros((50, 3))
    for step in range(1, 5):
        ids = rng.integers(0, 50, 30)
        grads = rng.normal(size=(30, 3)).astype(np.float32)
        opt.step(ids, grads)
        dense = np.zeros((50, 3))
        np.add.at(dense, ids, grads.astype(np.float64))
        hit = np.unique(ids)
        if opt_cls is gs.distributed.SparseSGD:
            ref[hit] -= 0.05 * dense[hit]
        elif opt_cls is gs.distributed.SparseAdam:  # lazy Adam, one step count (PGL's shared_adam)
            m[hit] = 0.9 * m[hit] + 0.1 * dense[hit]
            v[hit] = 0.999 * v[hit] + 0.001 * dense[hit] ** 2
            rate = 0.05 * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
            ref[hit] -= rate * m[hit] / (np.sqrt(v[hit]) + 1e-8)
        else:
            state[hit] += dense[hit] ** 2
            ref[hit] -= 0.05 * dense[hit] / (np.sqrt(state[hit]) + 1e-10)
    np.testing.assert_allclose(emb(np.arange(50)), ref, rtol=1e-4, atol=1e-5)
    for suffix in (".safetensors", ".npy"):
        path = tmp_path / f"emb{suffix}"
        emb.save(path)
        emb.weight[np.arange(50)] = np.zeros((50, 3), np.float32)
        emb.load(path)
        np.testing.assert_allclose(emb(np.arange(50)), ref, rtol=1e-4, atol=1e-5)
    if opt.state:
        opt.save(tmp_path / "opt.safetensors")
        opt.load(tmp_path / "opt.safetensors")
    np.save(tmp_path / "bad.npy", np.zeros((3, 3), np.float32))
    with pytest.raises(FormatError, match=r"shape \(3, 3\) does not match \(50, 3\)"):
        emb.load(tmp_path / "bad.npy")
    for t in [emb.weight, *opt.state.values()]:
        t.delete()


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "a/b", ""])
def test_tensor_names_take_the_shared_path_name_check(tmp_path, name):
    from graphshard.distributed._tensors import TensorShard

    shard = TensorShard(tmp_path / "shard")
    with pytest.raises(ValidationError, match="name must be a plain file name"):
        shard.create(name, (2,), "float32")
    assert list((tmp_path / "shard").iterdir()) == []


def test_a_tensor_named_like_a_temp_file_is_its_own(tmp_path):
    """The temp file of tensor "x" used to be x.tmp.npy: the file of tensor "x.tmp"."""
    from graphshard.distributed._tensors import TensorShard

    shard = TensorShard(tmp_path / "shard")
    shard.create("x.tmp", (3,), "float32")
    shard.get("x.tmp")[:] = 7
    shard.create("x", (3,), "float32")
    assert shard.get("x.tmp").tolist() == [7, 7, 7]
    assert shard.exists("x.tmp") == ((3,), "float32")
    assert sorted(p.name for p in (tmp_path / "shard").iterdir()) == ["x.npy", "x.tmp.npy"]
