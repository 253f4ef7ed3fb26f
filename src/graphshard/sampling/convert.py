"""Convert sampling results to torch tensors (torch is optional).

Example:
    >>> import numpy as np
    >>> to_torch({"a": [np.arange(2)]}, require=False)["a"][0].tolist()
    [0, 1]
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._util.optional import import_optional

__all__ = ["to_torch"]


def to_torch(obj: Any, *, require: bool = True) -> Any:
    """A copy of ``obj`` (a result dataclass, dict, list or tuple, nested) with every NumPy
    array replaced by a ``torch.Tensor`` sharing its memory (``torch.from_numpy``).

    Args:
        obj: What to convert.
        require: Raise MissingDependencyError without torch; if False, return ``obj``
            unchanged when torch is not installed.

    Raises:
        MissingDependencyError: torch is not installed and ``require`` is True.
    """
    try:
        torch = import_optional("torch", "torch output of sampling results")
    except ImportError:
        if require:
            raise
        return obj
    return _convert(obj, torch)


def _convert(obj: Any, torch: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: _convert(getattr(obj, f.name), torch) for f in dataclasses.fields(obj)}
        return dataclasses.replace(obj, **fields)
    if isinstance(obj, dict):
        return {k: _convert(v, torch) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_convert(v, torch) for v in obj)
    return obj
