"""Type and range checks of :class:`~graphshard.train.walk_options.WalkOptions`' fields,
and the refusal of an option set where it does nothing (issue 41 item 9: every option
either changes the result or is refused).

A value of the wrong type is a :class:`~graphshard.errors.ValidationError` naming the
field (never a raw ``ValueError`` from ``int("abc")``, nor ``bool("false") == True``,
nor ``int(1.5) == 1``); the bounds are those of a training config's keys
(:mod:`~graphshard.train.config_check`), far below a ``MemoryError`` or an int64 overflow.

Example:
    >>> check_int("walk_len", 8, 1, 10**4), check_int("walk_len", 8.0, 1, 10**4)
    (8, 8)
    >>> check_bool("random_window", "false")
    Traceback (most recent call last):
        ...
    graphshard.errors.ValidationError: train_walk_embedding: random_window must be true or false, got 'false'
"""  # noqa: E501

from __future__ import annotations

import math
import numbers
from typing import Any

from .. import errors
from ..errors import ValidationError

#: ``{field: (lowest, highest)}`` of the integer options.
INT_RANGES = {"walk_len": (1, 10**4), "walk_times": (1, 10**5), "win_size": (1, 10**3),
              "neg_num": (1, 10**4), "emb_size": (1, 2**16), "epochs": (1, 10**6),
              "batch_size": (1, 2**24), "seed": (0, 2**63 - 1), "walk_buffer": (1, 2**24),
              "infer_batch_size": (1, 2**24)}
#: The boolean options.
BOOLS = ("random_window", "softsign", "sage_mode", "use_degree_norm", "weighted_sample",
         "return_weight", "hcl")

#: ``{field: (what it acts with, whether it acts)}`` for the options that act only with
#: another: set to anything but its default without it, the option is refused.
_NEEDS: dict[str, tuple[str, Any]] = {
    "end_lr": ("lr_decay 'linear'", lambda o: o.lr_decay != "none"),
    "margin": ("loss_type 'hinge'", lambda o: o.loss_type == "hinge"),
    "sage_layer_type": ("sage_mode", lambda o: o.sage_mode),
    "sage_alpha": ("sage_mode", lambda o: o.sage_mode),
    "samples": ("sage_mode", lambda o: o.sage_mode),
    "infer_samples": ("sage_mode", lambda o: o.sage_mode),
    "return_weight": ("sage_mode", lambda o: o.sage_mode),
    "use_degree_norm": ("sage_mode with sage_layer_type 'LightGCN'",
                        lambda o: o.sage_mode and o.sage_layer_type == "LightGCN"),
    "sage_act": ("sage_mode with sage_layer_type 'GraphSAGE'",
                 lambda o: o.sage_mode and o.sage_layer_type == "GraphSAGE"),
    "dense_lr": ("sage_mode with sage_layer_type 'GraphSAGE' (its dense layers)",
                 lambda o: o.sage_mode and o.sage_layer_type == "GraphSAGE"),
    "slot_feature_lr": ("slots", lambda o: bool(o.slots)),
    "hcl": ("sage_mode (its sampled neighbour edges)", lambda o: o.sage_mode),
}


def _bad(name: str, text: str, value: Any) -> ValidationError:
    return ValidationError(f"train_walk_embedding: {name} must be {text}, got {value!r}",
                           field=name, value=value)


def is_int(v: Any) -> bool:
    """Whether ``v`` is an integer (Python or NumPy), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def check_int(name: str, v: Any, lo: int, hi: int) -> int:
    """``v`` as an int in ``[lo, hi]`` (a float only when whole: ``2.0``, never ``1.5``);
    ValidationError naming ``name`` otherwise."""
    whole = isinstance(v, numbers.Real) and not isinstance(v, bool) and (
        is_int(v) or (math.isfinite(float(v)) and float(v).is_integer()))
    if not whole or not lo <= int(v) <= hi:
        raise _bad(name, f"an integer >= {lo} and <= {hi}", v)
    return int(v)


def check_float(name: str, v: Any, text: str, ok: Any) -> float:
    """``v`` as a finite float for which ``ok(x)`` holds (``text`` says which)."""
    x = float(v) if isinstance(v, numbers.Real) and not isinstance(v, bool) else math.nan
    if not (math.isfinite(x) and ok(x)):
        raise _bad(name, text, v)
    return x


def check_bool(name: str, v: Any) -> bool:
    """``v`` as a bool (Python or NumPy, or the integers 0 and 1); ValidationError naming
    ``name`` otherwise (``"false"`` is not true): :func:`graphshard.errors.check_bool`."""
    return errors.check_bool(v, name, where="train_walk_embedding")


def check_hops(name: str, v: Any) -> tuple[int, ...]:
    """A non-empty list of neighbours per hop, each an integer in [1, 2**31 - 1]."""
    if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)) or not v or not all(
            is_int(x) and 1 <= int(x) < 2**31 for x in v):
        raise ValidationError(f"{name} must be a non-empty list of ints >= 1 (neighbours per "
                              f"hop), got {v!r}", field=name, value=v)
    return tuple(int(x) for x in v)


def check_names(name: str, v: Any, *, allow_none: bool = False) -> Any:
    """A string or a list/tuple of strings (``metapath``, ``exclude_pairs``, ``slots``)."""
    if v is None and allow_none:
        return v
    if isinstance(v, str) or (isinstance(v, (list, tuple)) and all(
            isinstance(x, str) or (isinstance(x, (list, tuple)) and all(
                isinstance(y, str) for y in x)) for x in v)):
        return v
    raise _bad(name, "a string or a list of strings", v)


def check_active(options: Any, defaults: dict[str, Any]) -> None:
    """Refuse an option set (to other than its default) where it does nothing.

    Raises:
        ValidationError: naming the option and what it acts with.
    """
    for name, (needs, acts) in _NEEDS.items():
        value = getattr(options, name)
        if value != defaults[name] and value is not None and not acts(options):
            raise ValidationError(
                f"train_walk_embedding: {name}={value!r} acts only with {needs}, which this "
                f"run does not use (optimizer {options.optimizer!r}, lr_decay "
                f"{options.lr_decay!r}, loss_type {options.loss_type!r}, sage_mode "
                f"{options.sage_mode}): it would change nothing; remove it or set what it "
                "needs", field=name, value=value)
