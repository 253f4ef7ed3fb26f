"""Training pairs from walks (skip-gram windows, node-type filters) and negative samples.

Example:
    >>> import numpy as np
    >>> p = skip_gram_pairs(np.array([[4, 5, 6]]), 1)
    >>> p.src.tolist(), p.dst.tolist()
    ([4, 5, 5, 6], [5, 4, 6, 5])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._util.arrays import as_array, as_ids
from ..errors import ValidationError
from ..store import as_store
from ..typing import IdArray
from .backend import get_backend
from .validate import resolve_seed
from .walks import WalkResult

__all__ = ["Pairs", "in_batch_negatives", "negative_sample", "skip_gram_pairs"]

_SALT_NEG = 2_000_003


@dataclass(frozen=True)
class Pairs:
    """(centre, context) node pairs with their node types.

    Attributes:
        src: Centre node IDs (int64).
        dst: Context node IDs (int64).
        src_type: Index into ``ntypes`` of each centre node (int64).
        dst_type: Index into ``ntypes`` of each context node (int64).
        ntypes: Node type names (``["_N"]`` for plain walk arrays).
    """

    src: IdArray
    dst: IdArray
    src_type: npt.NDArray[np.int64]
    dst_type: npt.NDArray[np.int64]
    ntypes: list[str]

    def __len__(self) -> int:
        return len(self.src)

    def __repr__(self) -> str:
        return f"Pairs(num_pairs={len(self.src)}, ntypes={self.ntypes})"


def _type_pair(ntypes: list[str], pair: Any) -> tuple[int, int]:
    """``("u", "i")`` or PGL's ``"u2i"`` -> type indices."""
    if isinstance(pair, str):
        splits = [(pair[:i], pair[i + 1:]) for i, c in enumerate(pair) if c == "2"]
        found = [(a, b) for a, b in splits if a in ntypes and b in ntypes]
        if len(found) != 1:
            raise ValidationError(f"exclude_pairs: cannot read {pair!r} as '<src>2<dst>' with "
                                  f"node types {ntypes}", field="exclude_pairs", value=pair)
        pair = found[0]
    if not isinstance(pair, (tuple, list)) or len(pair) != 2 or any(t not in ntypes for t in pair):
        raise ValidationError(f"exclude_pairs: {pair!r} is not a pair of node types from "
                              f"{ntypes}", field="exclude_pairs", value=pair)
    return ntypes.index(pair[0]), ntypes.index(pair[1])


def skip_gram_pairs(walks: Any, win_size: int, *, random_window: bool = False,
                    exclude_pairs: Sequence[Any] = (), seed: int | None = None,
                    backend: str = "cpu") -> Pairs:
    """Skip-gram (centre, context) pairs within ``win_size`` positions, PGL's window.

    For every valid position ``a`` of a walk, pairs ``(walk[a], walk[b])`` for ``b`` in
    ``[a - w, a + w]`` except where ``walk[b] == walk[a]`` or is padding (-1).  ``w`` is
    ``win_size``, or with ``random_window`` (as PGL's Cython ``skip_gram_gen_pair``) drawn
    uniformly from ``1..win_size`` per position, keyed by (seed, walk row, position).

    Args:
        walks: A :class:`WalkResult` or a 2-D int array of node IDs (-1 = padding).
        win_size: Half window, >= 1.
        random_window: Shrink each window at random.
        exclude_pairs: Node-type pairs to drop (PGL's ``excluded_train_pair``), as
            ``("u", "u")`` or ``"u2u"``; needs a WalkResult for the types.
        seed: Random seed for ``random_window``.
        backend: Kernel backend name.

    Returns:
        Pairs, walk by walk, centre by centre, contexts in position order.

    Raises:
        ValidationError: ``walks`` not 2-D integers, ``win_size < 1``, unknown type pair.

    Example:
        >>> import graphshard as gs
        >>> g = gs.heterograph({("u", "u2i", "i"): ([0], [0]), ("i", "i2u", "u"): ([0], [1])})
        >>> w = gs.sampling.random_walk(g, [0], 3, metapath="u2i-i2u", seed=0)
        >>> p = skip_gram_pairs(w, 2, exclude_pairs=["u2u"])
        >>> list(zip(p.src.tolist(), p.dst.tolist()))
        [(0, 0), (0, 0), (0, 1), (1, 0)]
    """
    if isinstance(walks, WalkResult):
        arr, types, ntypes = walks.traces, walks.types, walks.ntypes
    else:
        arr = as_array(walks)
        if arr.ndim != 2 or arr.dtype.kind not in "iu":
            raise ValidationError(f"walks: expected a 2-D integer array, got shape {arr.shape} "
                                  f"dtype {arr.dtype}", field="walks")
        types, ntypes = np.zeros(arr.shape[1], dtype=np.int64), ["_N"]
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if isinstance(win_size, bool) or not isinstance(win_size, (int, np.integer)) \
            or win_size < 1:
        raise ValidationError(f"win_size must be an int >= 1, got {win_size!r}",
                              field="win_size", value=win_size)
    excl = np.zeros((len(ntypes), len(ntypes)), dtype=np.bool_)
    for pair in exclude_pairs:
        excl[_type_pair(ntypes, pair)] = True
    bk = get_backend(backend)
    keys = np.arange(len(arr), dtype=np.int64)
    s = resolve_seed(seed if random_window else 0)
    counts = bk.skipgram_counts(arr, types, excl, keys, int(win_size), random_window, s)
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    src = np.empty(offsets[-1], dtype=np.int64)
    dst = np.empty(offsets[-1], dtype=np.int64)
    cols = np.empty((offsets[-1], 2), dtype=np.int64)
    bk.skipgram_fill(arr, types, excl, keys, int(win_size), random_window, s, offsets, src, dst,
                     cols)
    types = np.asarray(types, dtype=np.int64)
    return Pairs(src, dst, types[cols[:, 0]], types[cols[:, 1]], list(ntypes))


def negative_sample(g: Any, num: int | tuple[int, ...], *, ntype: str | None = None,
                    distribution: str = "uniform", power: float = 0.75,
                    seed: int | None = None, backend: str = "cpu") -> IdArray:
    """Random node IDs of one node type as negatives.

    Args:
        g: A Graph or GraphStore.
        num: Number (or array shape) of negatives.
        ntype: Node type (None: the only one).
        distribution: ``"uniform"`` or ``"degree"`` (proportional to ``degree ** power``,
            degree = in + out edges over all edge types touching the type, as word2vec's
            unigram^0.75).
        power: Exponent of the degree distribution.
        seed: Random seed (draw ``j`` is keyed by j).
        backend: Kernel backend name.

    Raises:
        ValidationError: unknown node type or distribution, or no node has a degree.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 0, 0], [1, 1, 1]), num_nodes=3)
        >>> sorted(set(negative_sample(g, 50, distribution="degree", seed=1).tolist()))
        [0, 1]
    """
    store = as_store(g)
    nt = store.ntypes[0] if ntype is None and len(store.ntypes) == 1 else ntype
    if nt not in store.ntypes:
        raise ValidationError(f"negative_sample: unknown node type {ntype!r}; node types are "
                              f"{store.ntypes}", field="ntype", value=ntype)
    shape = (num,) if isinstance(num, (int, np.integer)) else tuple(num)
    out = np.empty(int(np.prod(shape)), dtype=np.int64)
    n = store.num_nodes(nt)
    if distribution not in ("uniform", "degree"):
        raise ValidationError(f"negative_sample: distribution must be 'uniform' or 'degree', "
                              f"got {distribution!r}", field="distribution", value=distribution)
    bk = get_backend(backend)
    table = _degree_alias(store, nt, float(power), bk) if distribution == "degree" and n \
        else None
    if n == 0 or (table is not None and table is _NO_WEIGHT):
        raise ValidationError(f"negative_sample: node type {nt!r} has no node to draw",
                              field="ntype", value=nt)
    salt = _SALT_NEG + store.ntypes.index(nt)
    if table is None:
        bk.sample_cdf(np.zeros(0), n, resolve_seed(seed), salt, out)
    else:  # Walker's alias table: O(1) a draw, a CDF search is slow here (benchmarks/TUNING.md)
        bk.sample_alias(table[0], table[1], resolve_seed(seed), salt, out)
    return out.reshape(shape)


_NO_WEIGHT = (np.ones(0), np.zeros(0, dtype=np.int64))


def _degree_alias(store: Any, nt: str, power: float, bk: Any
                  ) -> tuple[np.ndarray, IdArray]:
    """The alias table of ``degree ** power`` over node type ``nt`` (cached on the store);
    ``_NO_WEIGHT`` when no node has a degree."""
    def build() -> tuple[np.ndarray, IdArray]:
        ids = np.arange(store.num_nodes(nt), dtype=np.int64)
        deg = np.zeros(len(ids), dtype=np.float64)
        for et in store.canonical_etypes:
            if et[2] == nt:
                deg += store.degrees(ids, et, edge_dir="in")
            if et[0] == nt:
                deg += store.degrees(ids, et, edge_dir="out")
        weights = deg ** power
        return bk.alias_table(weights) if weights.sum() > 0 else _NO_WEIGHT

    key = ("neg-alias", nt, power, bk.name)
    return store.cached(key, build) if hasattr(store, "cached") else build()


def in_batch_negatives(src: Any, dst: Any, num_neg: int, *, seed: int | None = None) -> IdArray:
    """Negatives from the other pairs of a batch: column k is ``dst`` rolled by a random
    shift in ``1..n-1`` (distinct shifts), so pair i never gets its own ``dst[i]`` position.

    Returns:
        ``(n, num_neg)`` int64 node IDs.

    Raises:
        ValidationError: lengths differ or ``num_neg > n - 1``.

    Example:
        >>> in_batch_negatives([0, 1, 2], [10, 11, 12], 2, seed=0).tolist()
        [[11, 12], [12, 10], [10, 11]]
    """
    s_ids = as_ids(src, "src")
    d_ids = as_ids(dst, "dst")
    if len(s_ids) != len(d_ids):
        raise ValidationError(f"in_batch_negatives: src has {len(s_ids)} IDs but dst has "
                              f"{len(d_ids)}", field="dst")
    n = len(d_ids)
    if not 0 <= num_neg <= max(n - 1, 0):
        raise ValidationError(f"in_batch_negatives: num_neg={num_neg} needs a batch of more "
                              f"than {num_neg} pairs, got {n}", field="num_neg", value=num_neg)
    shifts = 1 + np.random.default_rng(resolve_seed(seed)).choice(max(n - 1, 1), num_neg,
                                                                  replace=False)
    idx = (np.arange(n)[:, None] + shifts[None, :]) % max(n, 1)
    return d_ids[idx]
