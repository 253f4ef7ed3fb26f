"""Exception types raised by graphshard.

Every error derives from :class:`GraphshardError`; specific errors also derive from the
matching built-in so that ``except ValueError`` keeps working.  Errors carry the place
they describe (``path``, ``line``, ``field``, ``value``) as attributes.

Example:
    >>> from graphshard.errors import FormatError
    >>> err = FormatError("bad count", path="g.json", field="num_nodes")
    >>> isinstance(err, ValueError), err.field
    (True, 'num_nodes')
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "FormatError",
    "GraphshardError",
    "MissingDependencyError",
    "PartitionNotFoundError",
    "ServerError",
    "ServerTimeoutError",
    "ValidationError",
    "check_bool",
    "check_choice",
]


class GraphshardError(Exception):
    """Base class of all graphshard errors.

    Args:
        message: What went wrong, naming the place, the expectation and the finding.
        path: File the error is about, if any.
        line: 1-based line (or row/chunk) number in ``path``, if known.
        field: Name of the field, key or parameter at fault, if any.
        value: The offending value, if useful.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        value: Any = None,
    ) -> None:
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.value = value


class ValidationError(GraphshardError, ValueError):
    """An argument or in-memory input is invalid (bad IDs, lengths, choices)."""


def check_choice(value: Any, choices: Any, field: str, *, where: str = "") -> None:
    """Raise :class:`ValidationError` naming ``field`` unless ``value`` is in ``choices``.

    ``where``: the function the option belongs to, put before the message.

    Example:
        >>> check_choice("mean", ("mean", "sum"), "aggregator")
        >>> check_choice("max", ("mean", "sum"), "agg", where="train")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: train: agg must be one of ['mean', 'sum'], got 'max'
    """
    if value not in choices:
        shown = sorted(choices) if isinstance(choices, (set, frozenset)) else list(choices)
        raise ValidationError(f"{where + ': ' if where else ''}{field} must be one of {shown}, "
                              f"got {value!r}", field=field, value=value)


def check_bool(value: Any, field: str, *, where: str = "") -> bool:
    """``value`` as a bool (Python or NumPy, or the integers 0 and 1); else
    :class:`ValidationError` naming ``field`` (a string such as ``"false"`` or ``"maybe"`` is
    refused, not taken by its truth).

    Example:
        >>> check_bool(1, "undirected")
        True
        >>> check_bool("maybe", "undirected", where="g.npz")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: g.npz: undirected must be true or false, got 'maybe'
    """
    import numpy as np

    if isinstance(value, (bool, np.bool_)) or (
            isinstance(value, (int, np.integer)) and int(value) in (0, 1)):
        return bool(value)
    raise ValidationError(f"{where + ': ' if where else ''}{field} must be true or false, got "
                          f"{value!r}", field=field, value=value)


class ConfigError(GraphshardError, ValueError):
    """Options that cannot work together (for example ``reshuffle=False``)."""


class FormatError(GraphshardError, ValueError):
    """A file does not follow its format: malformed, wrong counts, wrong checksum."""


class PartitionNotFoundError(GraphshardError, FileNotFoundError):
    """A partition config or one of its files is missing."""


class MissingDependencyError(GraphshardError, ImportError):
    """An optional dependency needed by a feature is not installed."""


class ServerError(GraphshardError, RuntimeError):
    """A graph server failed and could not be reached again."""


class ServerTimeoutError(ServerError, TimeoutError):
    """A graph server did not answer within the request timeout."""
