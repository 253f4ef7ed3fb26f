"""Link prediction on heterogeneous graphs (train_link with etype): R-GCN / HGT embeddings,
the predicted type's pairs held out with their reverses, batches that never see their own
links, and clear refusals."""

from __future__ import annotations

import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("torch_geometric", reason="needs torch_geometric (graphshard[pyg])")
from graphshard.train import split_edges, train_link

BUYS, BOUGHT = ("u", "buys", "i"), ("i", "bought_by", "u")


@pytest.fixture(scope="module")
def shop_split(shop_hetero):
    return split_edges(shop_hetero, etype="buys", reverse_etype="bought_by",
                       val_fraction=0.1, test_fraction=0.1, num_negatives=10, seed=0)


@pytest.mark.parametrize(("model", "epochs"), [("rgcn", 4), ("hgt", 3)])
def test_users_buying_their_class_are_learned(shop_split, model, epochs):
    """Users mostly buy items of their class: both encoders rank held-out purchases above
    random items (AUC 0.5; about 90 held-out links of 10 negatives each) after a few
    epochs, and the loss falls; a seeded run repeats."""
    kw = dict(reverse_etype="bought_by", model=model, fanouts=[5, 5], hidden=16, heads=2,
              batch_size=128, lr=2e-2, seed=0, hits=(3,), monitor="auc")
    res = train_link(shop_split, epochs=epochs, **kw)
    assert res.losses[-1] < res.losses[0]
    assert res.test_at_best_val["auc"] > 0.6, (res.val, res.test)  # random: 0.5
    assert train_link(shop_split, epochs=1, **kw).losses == res.losses[:1]


def test_acm_paper_author_links(acm):
    """HGB ACM, paper -> author links held out with their author -> paper reverses: R-GCN
    over all 8 link types ranks the held-out authors of a paper above random authors."""
    et, rev = ("paper", "paper2author", "author"), ("author", "author2paper", "paper")
    s = split_edges(acm, etype=et, reverse_etype=rev, val_fraction=0.05, test_fraction=0.05,
                    num_negatives=5, seed=0)
    res = train_link(s, reverse_etype=rev, fanouts=[4, 4], hidden=16, epochs=1,
                     batch_size=1024, seed=0, hits=(1,), monitor="auc")
    assert res.test_at_best_val["auc"] > 0.6, (res.val, res.test)


def test_refusals(shop_hetero, shop_split):
    with pytest.raises(gs.ValidationError, match="scored by the dot product"):
        train_link(shop_split, decoder="mlp", epochs=1)
    with pytest.raises(gs.ValidationError, match="needs the path of a partition config"):
        train_link(shop_split, num_trainers=2, epochs=1)
    with pytest.raises(gs.ValidationError, match="needs reverse_etype"):
        train_link(shop_split, exclude="reverse", epochs=1)
    with pytest.raises(gs.ValidationError, match="must be a multiple of heads"):
        train_link(shop_split, model="hgt", hidden=10, heads=4, epochs=1)
    with pytest.raises(gs.ValidationError, match="does not join 'i' back to 'u'"):
        train_link(shop_split, reverse_etype="buys", epochs=1)
    with pytest.raises(gs.ValidationError, match="model must be one of"):
        train_link(shop_split, model="gat", epochs=1)
    with pytest.raises(gs.ValidationError, match=r"held-out edges are of \('u', 'buys', 'i'\)"
                       r", but etype is \('i', 'bought_by', 'u'\)"):
        train_link(shop_split, etype="bought_by", epochs=1)
