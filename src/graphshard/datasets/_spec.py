"""The ``--generate NAME:key=value,...`` specs of the CLI, read against a generator's keys."""

from __future__ import annotations

from typing import Any

from ..errors import ValidationError

__all__ = ["parse_spec"]


def parse_spec(spec: str, keys: dict[str, type]) -> dict[str, Any]:
    """The ``key=value`` items after ``name:`` in ``spec``, each converted to its type in
    ``keys`` (an int may be written ``1e6``).

    Raises:
        ValidationError: an unknown key, an item without ``=``, or a value of the wrong type,
            naming the item and the keys taken.

    Example:
        >>> parse_spec("rmat:scale=20,a=0.6", {"scale": int, "a": float})
        {'scale': 20, 'a': 0.6}
    """
    name, _, rest = spec.partition(":")
    out: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key not in keys:
            takes = ", ".join(f"{k}=<{t.__name__}>" for k, t in keys.items())
            raise ValidationError(f"{spec!r}: bad item {item!r}; {name} takes {takes}",
                                  field="generate", value=item)
        kind = keys[key]
        try:
            number = float(value) if kind is int else None
            if number is not None and not number.is_integer():
                raise ValueError(value)
            out[key] = int(number) if number is not None else kind(value)
        except (ValueError, OverflowError) as exc:
            raise ValidationError(f"{spec!r}: {key}={value!r} is not a {kind.__name__}",
                                  field="generate") from exc
    return out
