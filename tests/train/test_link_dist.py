"""Link prediction over partitions: one DistGraph trainer equals the local run, and two
trainers (Ray actors, DDP) train from a partition config."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import load_link_split, partition_for_link, train_link
from graphshard.train.ddp import RayTeam

from .test_link import KW, symmetric


@pytest.fixture(scope="module")
def link_parts(ray_cluster, sbm_graph, tmp_path_factory):
    """A symmetric SBM split for link prediction, its training graph in 2 METIS parts,
    served for the module."""
    out = tmp_path_factory.mktemp("link2")
    res = partition_for_link(symmetric(sbm_graph), "sbm", 2, out, num_negatives=30, seed=0,
                             part_method="metis")
    handle = gs.distributed.serve(res.config_path)
    yield res.config_path
    handle.shutdown()


def test_dist_graph_run_equals_the_local_run(link_parts):
    whole = gs.distributed.assemble_graph(link_parts)
    held = load_link_split(link_parts)
    kw = {**KW, "batch_size": 512}
    local = train_link(whole, eval_edges=held, epochs=1, **kw)
    with gs.distributed.DistGraph(link_parts, colocate=()) as dg:
        dist = train_link(dg, epochs=1, **kw)  # finds the split beside its config
    np.testing.assert_allclose(dist.losses, local.losses, rtol=1e-5)
    for m in local.test:
        np.testing.assert_allclose(dist.test[m], local.test[m], atol=1e-3)
    assert local.test["auc"][-1] > 0.6


def test_two_trainers_share_the_edges(link_parts, tmp_path):
    res = train_link(str(link_parts), epochs=2, num_trainers=2, checkpoint_dir=tmp_path, **KW)
    whole = gs.distributed.assemble_graph(link_parts)
    assert res.samples == [whole.num_edges()] * 2
    assert res.losses[1] < res.losses[0] and res.test_at_best_val["auc"] > 0.7
    assert res.model.encoder.self_lins[0].in_features == 8
    with pytest.raises(gs.ValidationError, match="trainer must be one of"):
        RayTeam(link_parts, 2, {}, trainer="gcn")
