"""The same training through a DistGraph (2 partitions) gives the local loss curve."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import train_sage, train_walk_embedding


@pytest.fixture(scope="module")
def parted(ray_cluster, sbm_graph, tmp_path_factory):
    """(whole graph in shuffled IDs, DistGraph over 2 remote servers, config path)."""
    out = tmp_path_factory.mktemp("sbm2")
    gs.partition_graph(sbm_graph, "sbm", 2, str(out), part_method="random")
    cfg = out / "sbm.json"
    # generous: the servers compile their kernels on the first call (a cold numba cache)
    dg = gs.distributed.DistGraph(cfg, colocate=())
    yield gs.distributed.assemble_graph(cfg), dg, cfg
    dg.close()


def test_sage_dist_matches_local(parted):
    whole, dg, _ = parted
    kw = dict(fanouts=[4, 4], hidden=8, epochs=2, batch_size=128, lr=1e-2, seed=3)
    local, dist = train_sage(whole, **kw), train_sage(dg, **kw)
    np.testing.assert_allclose(dist.losses, local.losses, rtol=1e-5)
    assert dist.test_acc == pytest.approx(local.test_acc, abs=1e-9)
    assert local.test_acc[-1] > 0.6


def test_walk_embedding_dist_matches_local(parted):
    """The same optimizer on both (by default a local graph trains with pair_sgd, a
    DistGraph with Adagrad)."""
    whole, dg, _ = parted
    kw = dict(walk_len=6, walk_times=1, win_size=2, neg_num=2, emb_size=8, lr=0.1, epochs=2,
              batch_size=512, seed=1, optimizer="adagrad", context_table=False,
              random_window=False, neg_distribution="uniform", subsample=0.0)
    local, dist = train_walk_embedding(whole, **kw), train_walk_embedding(dg, **kw)
    np.testing.assert_allclose(dist.step_losses, local.step_losses, rtol=1e-4)
    np.testing.assert_allclose(dist.embeddings["_N"], local.embeddings["_N"], atol=1e-4)
    assert dist.losses[-1] < dist.losses[0]


def test_config_path_opens_a_dist_graph(parted):
    whole, _, cfg = parted
    kw = dict(fanouts=[3], hidden=4, epochs=1, batch_size=256, seed=0)
    assert train_sage(str(cfg), **kw).losses == train_sage(whole, **kw).losses
    with pytest.raises(gs.ValidationError, match="expected a partition config"):
        train_sage(str(cfg).replace(".json", ".yaml"), **kw)


def test_walk_checkpoint_on_servers_resumes(parted, tmp_path):
    whole, dg, _ = parted
    kw = dict(walk_len=6, walk_times=1, win_size=2, neg_num=2, emb_size=8, lr=0.1, epochs=2,
              batch_size=512, seed=2, optimizer="adagrad", context_table=False,
              random_window=False, neg_distribution="uniform", subsample=0.0)
    local = train_walk_embedding(whole, **kw)
    first = train_walk_embedding(dg, **{**kw, "epochs": 1}, checkpoint_dir=tmp_path)
    rest = train_walk_embedding(dg, **kw, checkpoint_dir=tmp_path)  # new tables, restored
    assert rest.step_losses[:len(first.step_losses)] == first.step_losses
    np.testing.assert_allclose(rest.step_losses, local.step_losses, rtol=1e-4)
    np.testing.assert_allclose(rest.embeddings["_N"], local.embeddings["_N"], atol=1e-4)


def test_graph4rec_model_on_servers_matches_local(parted):
    """hinge loss, lazy Adam on DistEmbeddings and LightGCN over neighbours sampled on the
    servers: the local loss curve on the same (reshuffled) graph."""
    whole, dg, _ = parted
    kw = dict(walk_len=6, walk_times=1, win_size=2, neg_num=2, emb_size=8, lr=0.05, epochs=2,
              batch_size=512, seed=4, loss_type="hinge", margin=1.0, optimizer="adam",
              sage_mode=True, samples=[3, 2], infer_samples=[4, 4], use_degree_norm=True,
              random_window=False, neg_distribution="uniform", subsample=0.0)
    local, dist = train_walk_embedding(whole, **kw), train_walk_embedding(dg, **kw)
    np.testing.assert_allclose(dist.step_losses, local.step_losses, rtol=1e-4)
    np.testing.assert_allclose(dist.embeddings["_N"], local.embeddings["_N"], atol=1e-4)
    assert dist.losses[-1] < dist.losses[0]
