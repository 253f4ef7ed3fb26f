"""An R-MAT graph written straight to DGL's chunked format, one chunk at a time.

For graphs bigger than memory (Graph500's scale 26: 67M nodes, 1.07B edges): edges are drawn
in blocks of :data:`EDGE_BLOCK`, each from its own generator keyed by ``(seed, block)``, so
the graph is the same for any number of chunks and a chunk is made without the others.  Node
IDs are scrambled by a keyed bijection of ``ceil(log2 n)``-bit integers (no permutation
array held), then taken modulo ``n``.  As in Graph500's generator, duplicate edges and self
loops are kept (:func:`graphshard.datasets.rmat`, in memory, drops them).  With
``num_classes``, each node gets a random label, a feature vector of its class's centroid plus
Gaussian noise, and a 60/20/20 train/val/test split, drawn per block of nodes the same way.

Example:
    >>> import tempfile
    >>> from graphshard.io.chunked import read_chunked
    >>> d = tempfile.mkdtemp()
    >>> write_rmat_chunked(d, 1000, 8000, 3, seed=1, num_features=4, num_classes=3)
    >>> g = read_chunked(d)
    >>> g.num_nodes(), g.num_edges(), g.ndata["feat"].shape, int(g.ndata["label"].max())
    (1000, 8000, (1000, 4), 2)
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ValidationError
from ..io.chunked import ChunkSource, Rows, write_chunked_stream
from ..typing import EdgeType
from ._spec import parse_spec

__all__ = ["EDGE_BLOCK", "NODE_BLOCK", "STREAM_KEYS", "rmat_edges", "write_rmat_chunked",
           "write_spec_chunked"]

#: Edges drawn by one keyed generator.
EDGE_BLOCK = 1 << 20
#: Nodes whose label and features one keyed generator draws.
NODE_BLOCK = 1 << 16
#: Key of each stream of draws (edges, node data, centroids).
_EDGES, _NODES, _CENTROIDS = 0, 1, 2


def _levels(num_nodes: int) -> int:
    return max(1, int(num_nodes - 1).bit_length())


def _scramble(x: np.ndarray, bits: int, seed: int) -> np.ndarray:
    """A keyed bijection of ``bits``-bit integers: odd multiplications, xor-shifts and
    additions modulo ``2**bits`` (each one-to-one), three rounds."""
    mask = np.uint64((1 << bits) - 1)
    keys = np.random.default_rng([seed, _CENTROIDS, 1]).integers(0, 1 << 62, size=(3, 2),
                                                                  dtype=np.uint64)
    shift = np.uint64((bits + 1) // 2)
    y = x.astype(np.uint64)
    for mult, add in keys:
        y = (y * (mult | np.uint64(1))) & mask
        y ^= y >> shift
        y = (y + add) & mask
    return y


def _edge_block(block: int, num_edges: int, num_nodes: int, probs: tuple[float, float, float],
                seed: int) -> tuple[np.ndarray, np.ndarray]:
    a, b, c = probs
    m = min(EDGE_BLOCK, num_edges - block * EDGE_BLOCK)
    rng = np.random.default_rng([seed, _EDGES, block])
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    levels = _levels(num_nodes)
    for _ in range(levels):
        r = rng.random(m)
        src = src * 2 + (r >= a + b)
        dst = dst * 2 + (((r >= a) & (r < a + b)) | (r >= a + b + c))
    n = np.uint64(num_nodes)
    return ((_scramble(src, levels, seed) % n).astype(np.int64),
            (_scramble(dst, levels, seed) % n).astype(np.int64))


def rmat_edges(start: int, stop: int, num_nodes: int, num_edges: int, *,
               a: float = 0.57, b: float = 0.19, c: float = 0.19, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    """Edges ``start..stop-1`` of the streamed R-MAT graph (source and destination IDs).

    Example:
        >>> s, d = rmat_edges(0, 10, 100, 50, seed=3)
        >>> t, e = rmat_edges(5, 10, 100, 50, seed=3)
        >>> bool((s[5:] == t).all() and (d[5:] == e).all()), int(s.max()) < 100
        (True, True)
    """
    _check(num_nodes, num_edges, a, b, c)
    if not 0 <= start <= stop <= num_edges:
        raise ValidationError(f"edges {start}..{stop} are not within 0..{num_edges}",
                              field="start", value=start)
    if start == stop:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    first, last = start // EDGE_BLOCK, (stop - 1) // EDGE_BLOCK
    blocks = [_edge_block(i, num_edges, num_nodes, (a, b, c), seed)
              for i in range(first, last + 1)]
    lo = start - first * EDGE_BLOCK
    src = np.concatenate([s for s, _ in blocks])[lo:lo + stop - start]
    dst = np.concatenate([d for _, d in blocks])[lo:lo + stop - start]
    return src, dst


def _node_block(name: str, block: int, num_nodes: int, num_features: int, num_classes: int,
                centroids: np.ndarray, seed: int) -> np.ndarray:
    """Column ``name`` of one block of nodes: labels and the split are drawn first, then
    the features' noise (drawn only for ``feat``), so every column agrees."""
    m = min(NODE_BLOCK, num_nodes - block * NODE_BLOCK)
    rng = np.random.default_rng([seed, _NODES, block])
    label = rng.integers(0, num_classes, m)
    split = rng.random(m)
    if name == "feat":
        noise = rng.normal(scale=1.5, size=(m, num_features)).astype(np.float32)
        return centroids[label] + noise
    return {"label": label, "train_mask": split < 0.6,
            "val_mask": (split >= 0.6) & (split < 0.8), "test_mask": split >= 0.8}[name]


def _node_rows(name: str, num_nodes: int, num_features: int, num_classes: int, seed: int
               ) -> Rows:
    centroids = np.random.default_rng([seed, _CENTROIDS, 0]).normal(
        size=(num_classes, max(num_features, 1))).astype(np.float32)[:, :num_features]

    def rows(start: int, stop: int) -> np.ndarray:
        first, last = start // NODE_BLOCK, max(start, stop - 1) // NODE_BLOCK
        parts = [_node_block(name, i, num_nodes, num_features, num_classes, centroids, seed)
                 for i in range(first, last + 1)]
        lo = start - first * NODE_BLOCK
        return np.concatenate(parts)[lo:lo + stop - start]

    return rows


def _check(num_nodes: int, num_edges: int, a: float, b: float, c: float) -> None:
    for name, value in (("num_nodes", num_nodes), ("num_edges", num_edges)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValidationError(f"{name} must be a positive integer, got {value!r}",
                                  field=name, value=value)
    if not (a > 0 and b >= 0 and c >= 0 and a + b + c < 1):
        raise ValidationError(f"R-MAT probabilities need a > 0, b, c >= 0, a + b + c < 1; got "
                              f"a={a}, b={b}, c={c}", field="a")


def write_rmat_chunked(out_dir: str | os.PathLike[str], num_nodes: int, num_edges: int,
                       num_chunks: int, *, a: float = 0.57, b: float = 0.19, c: float = 0.19,
                       seed: int = 0, num_features: int = 0, num_classes: int = 0,
                       fmt: str = "numpy", graph_name: str = "rmat") -> None:
    """Write an R-MAT graph of ``num_edges`` directed edges as a chunked graph in
    ``num_chunks`` chunks, holding one chunk at a time (see the module's text).

    Args:
        out_dir: Output folder (new, empty, or an earlier chunked output of graphshard).
        num_nodes: Nodes (Graph500's scale ``s``: ``2**s``).
        num_edges: Edges (Graph500: 16 times the nodes).
        num_chunks: Chunks per type.
        a, b, c: R-MAT's quadrant probabilities (Graph500's 0.57, 0.19, 0.19).
        seed: The seed of every draw.
        num_features: Length of the float32 node feature ``feat`` (needs ``num_classes``).
        num_classes: Classes of the node ``label``; 0 writes no node data.
        fmt: Chunk format: ``numpy``, ``csv`` or ``parquet``.
        graph_name: The graph's name.

    Raises:
        ValidationError: a bad count, probability or option.
    """
    _check(num_nodes, num_edges, a, b, c)
    if num_features and not num_classes:
        raise ValidationError("num_features needs num_classes (a feature is drawn around "
                              "its node's class centroid)", field="num_features")
    if num_features < 0 or num_classes < 0:
        raise ValidationError("num_features and num_classes must be >= 0",
                              field="num_features")
    etype: EdgeType = ("_N", "_E", "_N")
    names = ["label", "train_mask", "val_mask", "test_mask"] if num_classes else []
    if num_features:
        names.insert(0, "feat")
    source = ChunkSource(
        graph_name, {"_N": num_nodes}, {etype: num_edges},
        lambda et, lo, hi: rmat_edges(lo, hi, num_nodes, num_edges, a=a, b=b, c=c, seed=seed),
        {"_N": {name: _node_rows(name, num_nodes, num_features, num_classes, seed)
                for name in names}} if names else {})
    write_chunked_stream(source, out_dir, min(num_chunks, max(num_nodes, num_edges)), fmt=fmt)


#: Keys of ``graphshard chunk --generate rmat:...``.
STREAM_KEYS: dict[str, type] = {
    "scale": int, "edge_factor": int, "nodes": int, "edges": int, "a": float, "b": float,
    "c": float, "seed": int, "features": int, "classes": int}


def write_spec_chunked(spec: str, out_dir: str | os.PathLike[str], num_chunks: int, *,
                       fmt: str = "numpy") -> tuple[int, int]:
    """``graphshard chunk --generate``: the R-MAT graph of ``spec`` (``rmat:`` and
    :data:`STREAM_KEYS`; ``scale=s`` means ``2**s`` nodes and ``edge_factor`` (default 16)
    edges per node, as Graph500; or ``nodes=`` and ``edges=``) written chunk by chunk.
    Returns the nodes and edges written.

    Example:
        >>> import tempfile
        >>> write_spec_chunked("rmat:scale=8,features=2,classes=2", tempfile.mkdtemp(), 2)
        (256, 4096)
    """
    name = spec.partition(":")[0]
    if name != "rmat":
        raise ValidationError(f"{spec!r}: only rmat is generated chunk by chunk (others are "
                              "made in memory: graphshard partition --generate)",
                              field="generate", value=name)
    keys = parse_spec(spec, STREAM_KEYS)
    if ("scale" in keys) == ("nodes" in keys):
        raise ValidationError(f"{spec!r}: give scale= or nodes= (one of them)",
                              field="generate")
    if "scale" in keys and not 1 <= keys["scale"] <= 40:
        raise ValidationError(f"{spec!r}: scale must be in 1..40", field="generate")
    nodes = 1 << keys.pop("scale") if "scale" in keys else keys.pop("nodes")
    if "edges" in keys and "edge_factor" in keys:
        raise ValidationError(f"{spec!r}: give edges= or edge_factor= (one of them)",
                              field="generate")
    edges = keys.pop("edges") if "edges" in keys else nodes * keys.pop("edge_factor", 16)
    rename = {"features": "num_features", "classes": "num_classes"}
    write_rmat_chunked(out_dir, nodes, edges, num_chunks, fmt=fmt,
                       **{rename.get(k, k): v for k, v in keys.items()})
    return nodes, edges
