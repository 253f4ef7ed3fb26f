"""Bounds on the sizes a dataset file declares, by what the files hold.

A declared count (nodes, feature columns) costs memory the moment an array is built over
it, whatever the file holds; so, as the edge-list reader bounds an ID space it infers
(``graphshard.io.edgelist``: at most max(2^20, 64 x edges)), the loaders here refuse a
declared count above ``max(MIN_SPACE, PER_ENTRY x entries)``, entries being what the
files really hold (edges, stored feature values).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError

#: Any count up to this is accepted (8 MB per int64 array): the edge-list reader's floor.
MIN_SPACE = 1 << 20
#: A count above MIN_SPACE may be at most this many per entry the files hold.
PER_ENTRY = 64


def check_declared(path: Path | str, field: str, declared: int, entries: int, *,
                   what: str, per: str) -> None:
    """Refuse ``declared`` ``what`` for ``entries`` ``per`` above the bound.

    Raises:
        FormatError: naming ``path``, ``field``, the declared size and the bound.

    Example:
        >>> check_declared("x.npz", "attr_shape", 10**8, 1, what="columns", per="values")
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: x.npz: field 'attr_shape': 100,000,000 columns \
declared for 1 values; at most max(1,048,576, 64 x values) = 1,048,576
    """
    limit = max(MIN_SPACE, PER_ENTRY * entries)
    if declared > limit:
        raise FormatError(f"{path}: field {field!r}: {declared:,} {what} declared for "
                          f"{entries:,} {per}; at most max({MIN_SPACE:,}, {PER_ENTRY} x {per}) "
                          f"= {limit:,}", path=str(path), field=field, value=declared)
