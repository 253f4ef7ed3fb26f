"""Two trainers (Ray actors, DDP on gloo) over a partitioned graph."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import load_checkpoint, train_sage
from graphshard.train.ddp import RayTeam
from graphshard.train.sage import _run
from graphshard.train.sage_trainer import SageTrainer, trainer_share

KW = dict(feat="feat", label="label", train_mask="train_mask", val_mask="val_mask",
          test_mask="test_mask", fanouts=[5, 5], hidden=16, batch_size=64, lr=1e-2,
          dropout=0.5, weight_decay=0.0, seed=0)


@pytest.fixture(scope="module")
def balanced(ray_cluster, sbm_graph, tmp_path_factory):
    """2 METIS parts balanced on the train mask, served for the whole module."""
    out = tmp_path_factory.mktemp("sbm_bal")
    gs.partition_graph(sbm_graph, "sbm", 2, str(out), part_method="metis",
                       balance_ntypes=np.asarray(sbm_graph.ndata["train_mask"]))
    handle = gs.distributed.serve(out / "sbm.json")
    yield out / "sbm.json"
    handle.shutdown()


def test_two_trainers_agree_and_resume(balanced, sbm_graph, tmp_path):
    num_train = int(np.asarray(sbm_graph.ndata["train_mask"]).sum())
    params = {**KW, "num_trainers": 2}
    with RayTeam(balanced, 2, KW) as team:
        assert sum(team.counts) == num_train and min(team.counts) > 0.4 * num_train
        res = _run(team, epochs=2, eval_every=1, checkpoint_dir=tmp_path, checkpoint=None,
                   on_epoch=None, params=params)
        assert res.samples == [num_train, num_train]
        (m0, o0), (m1, o1) = team.states()
        for key in m0:  # DDP all-reduced the gradients: identical parameters and moments
            np.testing.assert_array_equal(m0[key], m1[key], err_msg=key)
        for p in o0["state"]:
            np.testing.assert_array_equal(o0["state"][p]["exp_avg"], o1["state"][p]["exp_avg"])
        lost, _ = team.train_epoch(2)  # progress made after the last checkpoint, then lost
        team.train_epoch(3)
        resumed = _run(team, epochs=3, eval_every=1, checkpoint_dir=tmp_path,
                       checkpoint=load_checkpoint(tmp_path), on_epoch=None, params=params)
    assert resumed.losses[:2] == res.losses and resumed.losses[2] == lost / num_train
    assert resumed.losses[2] < 0.8 * resumed.losses[0] and resumed.test_acc[-1] > 0.6


def test_train_sage_with_two_trainers(balanced, tmp_path):
    kw = {k: v for k, v in KW.items() if k not in ("feat", "label") and "mask" not in k}
    seen = []
    res = train_sage(str(balanced), epochs=2, num_trainers=2, checkpoint_dir=tmp_path,
                     eval_every=2, on_epoch=lambda e, m: seen.append((e, m["samples"])), **kw)
    assert [e for e, _ in seen] == [0, 1] and res.samples == [s for _, s in seen]
    assert res.losses[1] < res.losses[0] and res.test_acc[-1] > 0.5
    assert np.isnan(res.val_acc[0]) and res.model.self_lins[0].in_features == 8
    with pytest.raises(gs.ValidationError, match="num_trainers=2, this run has num_trainers=1"):
        train_sage(str(balanced), epochs=3, checkpoint_dir=tmp_path, **kw)


def test_trainer_share_splits_by_partition():
    book = gs.ids.RangePartitionBook(-1, {"_N": [[0, 4], [4, 8], [8, 12]]},
                                     {"_N:_E:_N": [[0, 1], [1, 2], [2, 3]]})
    train = np.array([0, 1, 5, 6, 7, 9, 11])
    assert trainer_share(book, train, 0, 2).tolist() == [0, 1, 9, 11]  # parts 0 and 2
    assert trainer_share(book, train, 1, 2).tolist() == [5, 6, 7]
    shares = [trainer_share(book, train, r, 6).tolist() for r in range(6)]
    assert shares == [[0], [5, 6], [9], [1], [7], [11]]
    with pytest.raises(gs.ValidationError, match="4 trainers cannot share 3 partitions"):
        trainer_share(book, train, 0, 4)
    assert trainer_share(None, train, 1, 2).tolist() == [7, 9, 11]
    with pytest.raises(gs.ValidationError, match="needs the path of a partition config"):
        train_sage(gs.graph(([0], [1])), num_trainers=2)


def test_small_share_still_takes_every_step(sbm_graph):
    trainer = SageTrainer(sbm_graph, **KW)
    trainer.train = np.array([3, 5, 7])
    batches = trainer.epoch_batches(0, 5)  # DDP: as many steps as the largest share
    assert len(batches) == 5 and all(len(b) == 1 for b in batches)
    assert sorted(set(np.concatenate(batches).tolist())) == [3, 5, 7]
    total, count = trainer.train_epoch(0, 5)
    assert count == 5 and np.isfinite(total)


def test_more_trainer_cpus_than_the_cluster_has_is_an_error(balanced):
    """Ray would queue the missing trainers for ever (DDP's rendezvous waiting on them):
    refused up front, naming the CPUs needed and those the cluster has."""
    import ray

    have = ray.cluster_resources()["CPU"]
    with pytest.raises(gs.ValidationError, match=f"need {have + 1:g} CPUs; the Ray cluster "
                                                 f"has {have:g}"):
        RayTeam(balanced, 1, KW, trainer_cpus=have + 1)
    assert gs.distributed.find_servers(balanced) is not None  # the module's servers are untouched
