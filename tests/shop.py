"""Small heterogeneous test graphs shared by the distributed, PyG-backend and training tests."""

from __future__ import annotations

import json
from pathlib import Path

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


def hetero_graph(seed: int = 0, *, multilabel: bool = False) -> gs.Graph:
    """Items (the target, 4 features) in 3 classes, users (6 features) who mostly buy
    items of their class, and featureless tags (one per class and a few noise tags):
    learnable from features and from the structure.  Multi-label: 3 labels per item, item
    ``i`` has label ``c`` when its class is ``c`` or its second class is ``c``."""
    rng = np.random.default_rng(seed)
    nu, ni, nt = 160, 120, 9
    cls_i, cls_u = rng.integers(0, 3, ni), rng.integers(0, 3, nu)
    center = rng.normal(size=(3, 4)).astype(np.float32)
    bu = rng.integers(0, nu, 900)
    same = rng.random(900) < 0.8
    pick = rng.integers(0, ni, 900)
    by_class = [np.flatnonzero(cls_i == c) for c in range(3)]
    bi = np.where(same, [by_class[c][rng.integers(0, len(by_class[c]))] for c in cls_u[bu]],
                  pick)
    tag = np.where(rng.random(ni) < 0.7, cls_i, rng.integers(3, nt, ni))
    g = gs.heterograph({("u", "buys", "i"): (bu, bi), ("i", "bought_by", "u"): (bi, bu),
                        ("t", "tags", "i"): (tag, np.arange(ni)),
                        ("i", "tagged", "t"): (np.arange(ni), tag)},
                       {"u": nu, "i": ni, "t": nt})
    g.nodes["i"].data["feat"] = (center[cls_i] + rng.normal(scale=1.5, size=(ni, 4))
                                 ).astype(np.float32)
    g.nodes["u"].data["feat"] = np.eye(3, 6, dtype=np.float32)[cls_u] + rng.normal(
        scale=0.5, size=(nu, 6)).astype(np.float32)
    if multilabel:
        label = np.zeros((ni, 3), dtype=np.int8)
        label[np.arange(ni), cls_i] = 1
        second = rng.integers(0, 3, ni)
        label[np.arange(ni), second] = np.where(rng.random(ni) < 0.5, 1, label[
            np.arange(ni), second])
        g.nodes["i"].data["label"] = label
    else:
        g.nodes["i"].data["label"] = cls_i.astype(np.int64)
    split = rng.random(ni)
    g.nodes["i"].data["train_mask"] = split < 0.6
    g.nodes["i"].data["val_mask"] = (split >= 0.6) & (split < 0.8)
    g.nodes["i"].data["test_mask"] = split >= 0.8
    return g


def tiny_hgb(folder: Path) -> Path:
    """A 30-movie, 20-actor HGB folder (movies labelled in 3 classes, 2 features)."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    info = {"node.dat": {"node type": {"0": "movie", "1": "actor"}},
            "link.dat": {"link type": {"0": {"start": 1, "end": 0, "meaning": "actor-movie"},
                                       "1": {"start": 0, "end": 1, "meaning": "movie-actor"}}},
            "label.dat": {"node type": {"0": {"0": "a", "1": "b", "2": "c"}}}}
    nodes = [f"{i}\tm{i}\t0\t{rng.random():.3f},{rng.random():.3f}" for i in range(30)]
    nodes += [f"{i}\ta{i}\t1" for i in range(30, 50)]
    pairs = {(int(a), int(m)) for a, m in zip(rng.integers(30, 50, 90), rng.integers(0, 30, 90),
                                               strict=True)}
    links = [f"{a}\t{m}\t0\t1.0" for a, m in sorted(pairs)]
    links += [f"{m}\t{a}\t1\t1.0" for a, m in sorted(pairs)]
    label = rng.integers(0, 3, 30)
    files = {"info.dat": json.dumps(info), "node.dat": "\n".join(nodes) + "\n",
             "link.dat": "\n".join(links) + "\n",
             "label.dat": "".join(f"{i}\tm{i}\t0\t{label[i]}\n" for i in range(20)),
             "label.dat.test": "".join(f"{i}\tm{i}\t0\t{label[i]}\n" for i in range(20, 30))}
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder
