"""Type aliases shared across graphshard.

Example:
    >>> from graphshard.typing import EdgeType
    >>> et: EdgeType = ("user", "buys", "item")
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayLike", "EdgeType", "EdgeTypeLike", "IdArray", "NodeType"]

NodeType = str
#: Canonical edge type ``(src_type, relation, dst_type)``.
EdgeType = tuple[str, str, str]
#: An edge type as users may write it: canonical tuple, ``"src:rel:dst"`` or a relation name.
EdgeTypeLike = EdgeType | str
#: One-dimensional int64 array of IDs.
IdArray = npt.NDArray[np.int64]
#: Anything :func:`numpy.asarray` accepts, plus torch tensors.
ArrayLike = Any
