"""A small heterogeneous test graph shared by the distributed and PyG-backend tests."""

from __future__ import annotations

import numpy as np

import graphshard as gs


def shop_graph(seed: int = 0) -> gs.Graph:
    """Users and items: buys, bought_by (reverse) and follows, with features (dense, Ragged
    ``tags`` of users, sparse ``bow`` of items) and weights."""
    rng = np.random.default_rng(seed)
    nu, ni = 90, 50
    bu, bi = rng.integers(0, nu, 400), rng.integers(0, ni, 400)
    fu, fv = rng.integers(0, nu, 300), rng.integers(0, nu, 300)
    g = gs.heterograph({("u", "buys", "i"): (bu, bi), ("i", "bought_by", "u"): (bi, bu),
                        ("u", "follows", "u"): (fu, fv)}, {"u": nu, "i": ni})
    g.nodes["u"].data["feat"] = rng.normal(size=(nu, 4)).astype(np.float32)
    g.nodes["i"].data["feat"] = rng.normal(size=(ni, 4)).astype(np.float32)
    g.nodes["i"].data["label"] = rng.integers(0, 3, ni)
    g.nodes["u"].data["tags"] = gs.Ragged.from_rows(
        [list(rng.integers(0, 9, rng.integers(0, 4))) for _ in range(nu)], dtype="int64")
    g.edges["buys"].data["w"] = rng.random(400).astype(np.float32)
    g.edges["follows"].data["w"] = (rng.random(300) * (rng.random(300) > 0.3)).astype(
        np.float32)
    # sparse bag-of-words rows (a column may repeat in a row: it adds up, as in SciPy)
    lengths = rng.integers(0, 5, ni)
    nnz = int(lengths.sum())
    g.nodes["i"].data["bow"] = gs.SparseRows(np.concatenate([[0], np.cumsum(lengths)]),
                                             rng.integers(0, 12, nnz).astype(np.int32),
                                             rng.random(nnz).astype(np.float32), 12)
    return g
