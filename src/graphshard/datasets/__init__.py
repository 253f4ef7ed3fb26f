"""Synthetic graphs (R-MAT, a stochastic block model) and loaders of downloaded datasets.

Generators are vectorised NumPy, seeded, and registered by name in :data:`GENERATORS` so
that the CLI's ``--generate NAME:key=value,...`` reads its choices from here.  Loaders read
local files only (:func:`load_shchur_npz`: the gnn-benchmark ``.npz`` files of Amazon
Computers/Photo, Coauthor CS/Physics, Cora...; :func:`load_hgb`: the Heterogeneous Graph
Benchmark's node-classification files; :func:`load_planetoid`: Planetoid's raw ``ind.*``
files; :func:`load_ogb`: an OGB node-property dataset's raw CSV folder); nothing is
downloaded.  Each is also a reader of ``graphshard.io.read_graph`` and the CLI
(``--format shchur|hgb|planetoid|ogb``), with the splits the data carries as node masks;
:func:`shchur_split` draws Shchur et al.'s per-class split for the files that carry none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError
from ..graph import Graph, graph
from ..typing import IdArray
from ._spec import parse_spec
from .hgb import HGBDataset, load_hgb
from .ogb import OGBDataset, load_ogb
from .planetoid import PlanetoidDataset, load_planetoid
from .shchur import load_shchur_npz
from .splits import NodeSplit, shchur_split

__all__ = ["GENERATORS", "HGBDataset", "NodeSplit", "OGBDataset", "PlanetoidDataset",
           "from_spec", "load_hgb", "load_ogb", "load_planetoid", "load_shchur_npz", "rmat",
           "sbm", "shchur_split"]


def _dedup(src: IdArray, dst: IdArray, num_nodes: int) -> tuple[IdArray, IdArray]:
    keep = src != dst
    key = np.unique(src[keep] * np.int64(num_nodes) + dst[keep])
    return key // num_nodes, key % num_nodes


def _labels_and_features(g: Graph, labels: IdArray, num_classes: int, num_features: int,
                         rng: np.random.Generator) -> None:
    if num_features > 0:
        centroids = rng.normal(size=(max(num_classes, 1), num_features)).astype(np.float32)
        noise = rng.normal(scale=1.5, size=(g.num_nodes(), num_features)).astype(np.float32)
        g.ndata["feat"] = centroids[labels] + noise
    if num_classes > 0:
        g.ndata["label"] = labels
        split = rng.random(g.num_nodes())
        g.ndata["train_mask"] = split < 0.6
        g.ndata["val_mask"] = (split >= 0.6) & (split < 0.8)
        g.ndata["test_mask"] = split >= 0.8


def rmat(num_nodes: int, num_edges: int, *, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 0, num_features: int = 0, num_classes: int = 0) -> Graph:
    """An R-MAT graph (Chakrabarti et al.): skewed degrees, like web and social graphs.

    ``num_edges`` directed edges are drawn, quadrant by quadrant over ``ceil(log2 n)``
    levels, with node IDs randomly permuted; self loops and duplicates are then dropped, so
    the result has somewhat fewer edges.  Labels, when asked for, are random classes.

    Example:
        >>> g = rmat(1000, 5000, seed=1)
        >>> g.num_nodes(), 4000 < g.num_edges() <= 5000
        (1000, True)
    """
    _check_positive(num_nodes=num_nodes, num_edges=num_edges)
    if not (a > 0 and b >= 0 and c >= 0 and a + b + c < 1):
        raise ValidationError(f"R-MAT probabilities need a > 0, b, c >= 0, a + b + c < 1; got "
                              f"a={a}, b={b}, c={c}", field="a")
    rng = np.random.default_rng(seed)
    levels = max(1, int(np.ceil(np.log2(num_nodes))))
    src = np.zeros(num_edges, dtype=np.int64)
    dst = np.zeros(num_edges, dtype=np.int64)
    for _ in range(levels):
        r = rng.random(num_edges)
        src = src * 2 + (r >= a + b)
        dst = dst * 2 + (((r >= a) & (r < a + b)) | (r >= a + b + c))
    perm = rng.permutation(np.int64(1) << levels) % num_nodes
    src, dst = _dedup(perm[src], perm[dst], num_nodes)
    g = graph((src, dst), num_nodes=num_nodes)
    labels = rng.integers(0, max(num_classes, 1), num_nodes)
    _labels_and_features(g, labels, num_classes, num_features, rng)
    return g


def sbm(num_nodes: int, num_edges: int, *, num_blocks: int = 8, p_in: float = 0.8,
        seed: int = 0, num_features: int = 16, num_classes: int | None = None) -> Graph:
    """A planted-partition stochastic block model: communities, features, labels.

    Each edge picks a uniform source; with probability ``p_in`` its destination is in the
    source's block, else anywhere.  The label of a node is its block; features are the
    block's centroid plus Gaussian noise, so a GNN can learn the labels.

    Example:
        >>> g = sbm(600, 3000, num_blocks=3, num_features=4, seed=2)
        >>> g.ndata["feat"].shape, int(g.ndata["label"].max())
        ((600, 4), 2)
    """
    _check_positive(num_nodes=num_nodes, num_edges=num_edges, num_blocks=num_blocks)
    if not 0 <= p_in <= 1:
        raise ValidationError(f"p_in must be in [0, 1], got {p_in}", field="p_in")
    rng = np.random.default_rng(seed)
    block = rng.integers(0, num_blocks, num_nodes)
    members = np.argsort(block, kind="stable")
    starts = np.searchsorted(block[members], np.arange(num_blocks + 1))
    src = rng.integers(0, num_nodes, num_edges)
    b = block[src]
    size = starts[b + 1] - starts[b]
    inside = members[starts[b] + (rng.random(num_edges) * size).astype(np.int64)]
    dst = np.where(rng.random(num_edges) < p_in, inside, rng.integers(0, num_nodes, num_edges))
    src, dst = _dedup(src, dst, num_nodes)
    g = graph((src, dst), num_nodes=num_nodes)
    _labels_and_features(g, block.astype(np.int64), num_blocks if num_classes is None
                         else num_classes, num_features, rng)
    return g


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValidationError(f"{name} must be a positive integer, got {value!r}",
                                  field=name, value=value)


@dataclass(frozen=True)
class Generator:
    """A registered generator: its function, description and the keys it takes."""

    fn: Callable[..., Graph]
    description: str
    keys: dict[str, type]


GENERATORS: dict[str, Generator] = {
    "rmat": Generator(rmat, "R-MAT power-law graph", {
        "nodes": int, "edges": int, "a": float, "b": float, "c": float, "seed": int,
        "features": int, "classes": int}),
    "sbm": Generator(sbm, "stochastic block model with features and labels", {
        "nodes": int, "edges": int, "blocks": int, "p_in": float, "seed": int,
        "features": int, "classes": int}),
}

_RENAME = {"nodes": "num_nodes", "edges": "num_edges", "blocks": "num_blocks",
           "features": "num_features", "classes": "num_classes"}


def from_spec(spec: str) -> Graph:
    """Generate a graph from ``"name:key=value,..."`` (e.g. ``"rmat:nodes=1000,edges=8000"``).

    Example:
        >>> from_spec("sbm:nodes=100,edges=400,blocks=2,features=3").num_nodes()
        100
    """
    name, _, _ = spec.partition(":")
    if name not in GENERATORS:
        raise ValidationError(f"unknown generator {name!r}; choose one of {sorted(GENERATORS)}",
                              field="generate", value=name)
    gen = GENERATORS[name]
    kwargs = {_RENAME.get(k, k): v for k, v in parse_spec(spec, gen.keys).items()}
    missing = [k for k in ("nodes", "edges") if _RENAME[k] not in kwargs]
    if missing:
        raise ValidationError(f"{spec!r}: missing {', '.join(missing)}", field="generate")
    return gen.fn(**kwargs)
