"""train_hetero over partitions: a 2-server DistGraph gives the local run's numbers, and two
trainers (Ray actors, DDP) train from the partition config."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("torch_geometric", reason="needs torch_geometric (graphshard[pyg])")
from graphshard.train import train_hetero

KW = dict(model="rgcn", fanouts=[3, 3], hidden=8, epochs=2, batch_size=16, lr=1e-2, seed=1)


@pytest.fixture(scope="module")
def parted(ray_cluster, shop_hetero, tmp_path_factory):
    """(whole graph in shuffled IDs, DistGraph over 2 remote servers, config path)."""
    out = tmp_path_factory.mktemp("hetero2")
    gs.partition_graph(shop_hetero, "shop", 2, str(out), part_method="random")
    cfg = out / "shop.json"
    dg = gs.distributed.DistGraph(cfg, colocate=())
    yield gs.distributed.assemble_graph(cfg), dg, cfg
    dg.close()


def test_dist_graph_matches_local_and_two_trainers_train(parted, shop_hetero):
    whole, dg, cfg = parted
    local, dist = train_hetero(whole, **KW), train_hetero(dg, **KW)
    np.testing.assert_allclose(dist.losses, local.losses, rtol=1e-5)
    assert dist.val_macro_f1 == pytest.approx(local.val_macro_f1, abs=1e-9)
    assert dist.test_micro_f1_history == pytest.approx(local.test_micro_f1_history, abs=1e-9)
    num_train = int(shop_hetero.nodes["i"].data["train_mask"].sum())
    two = train_hetero(str(cfg), num_trainers=2, **{**KW, "epochs": 3})
    assert two.samples == [num_train] * 3 and np.isfinite(two.losses).all()
    assert two.losses[-1] < two.losses[0] and two.model.head.out_features == 3
    assert 0 <= two.best_epoch < 3 and two.test_macro_f1 == two.test_macro_f1_history[
        two.best_epoch]
    with pytest.raises(gs.ValidationError, match="needs the path of a partition config"):
        train_hetero(whole, num_trainers=2, **KW)


def test_link_prediction_on_the_dist_graph_matches_local(parted):
    """train_link on a heterogeneous DistGraph (etype given, eval edges in its IDs): the
    local run's losses and metrics."""
    from graphshard.train import train_link
    from graphshard.train.link_split import EvalEdges, LinkEval

    whole, dg, _ = parted
    rng = np.random.default_rng(0)
    nu, ni = whole.num_nodes("u"), whole.num_nodes("i")
    src, dst = whole.find_edges(np.arange(0, 60, 2), ("u", "buys", "i"))
    held = LinkEval(*(EvalEdges(src, dst, rng.integers(0, ni, (len(src), 4)))
                      for _ in range(2)))
    assert nu and held.val.neg_dst.max() < ni
    kw = dict(etype="buys", reverse_etype="bought_by", eval_edges=held, fanouts=[3, 3],
              hidden=8, epochs=1, batch_size=128, seed=1, hits=(2,))
    local, dist = train_link(whole, **kw), train_link(dg, **kw)
    np.testing.assert_allclose(dist.losses, local.losses, rtol=1e-5)
    for m in ("auc", "mrr", "hits@2"):
        assert dist.val[m] == pytest.approx(local.val[m], abs=1e-6), m


def test_link_prediction_with_two_trainers_from_a_stored_split(ray_cluster, shop_hetero,
                                                              tmp_path):
    """partition_for_link on a heterograph stores the held-out 'buys' pairs in each type's
    reshuffled IDs with their edge type; train_link(config, num_trainers=2) finds the type
    there and two DDP trainers share the training edges and learn the class structure."""
    from graphshard.train import load_link_split, partition_for_link, train_link

    res = partition_for_link(shop_hetero, "shopl", 2, tmp_path, etype="buys",
                             reverse_etype="bought_by", val_fraction=0.1, test_fraction=0.1,
                             num_negatives=10, part_method="random")
    held, split = load_link_split(res.config_path), res.split.held_out
    assert held.etype == ("u", "buys", "i")
    assert (res.orig_nids["u"][held.test.src] == split.test.src).all()
    assert (res.orig_nids["i"][held.test.neg_dst] == split.test.neg_dst).all()
    two = train_link(str(res.config_path), num_trainers=2, reverse_etype="bought_by",
                     fanouts=[5, 5], hidden=16, epochs=4, batch_size=64, lr=2e-2, seed=0,
                     hits=(3,), monitor="auc")
    train_edges = res.split.train_graph.num_edges("buys")
    assert two.samples == [train_edges] * 4 and np.isfinite(two.losses).all()
    assert two.test_at_best_val["auc"] > 0.6, (two.val, two.test)  # random: 0.5
