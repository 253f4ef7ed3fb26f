"""The Euler meta file: loaded and checked once, before any data is parsed.

Euler's own keys are counts (``node_type_num``, ``node_float_feature_num``, ...): each must be
an integer in ``0..MAX_META_COUNT``, since the reader builds a column per feature slot and a
name per type.  The ``"graphshard"`` key that :func:`~graphshard.io.write_euler` adds (type
names, relations, edge types, weight dtypes and feature specs) is checked against the same
counts, so a hand-edited or damaged meta ends in a FormatError naming the meta file and the
key, never in a KeyError or TypeError deep in the reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ._common import PathLike, fail
from ._euler_parse import KINDS, MAX_META_COUNT

META_NAMES = ("meta.json", "meta", "meta.txt")


def load_meta(meta: PathLike | dict | None, files: list[Path]) -> tuple[dict | None, str]:
    """The meta (a path, a parsed dict, or ``None`` to look next to the data) and the name
    its errors use (the file, or ``"meta"`` for a dict)."""
    if isinstance(meta, dict):
        check_meta(meta, "meta")
        return meta, "meta"
    if meta is None:
        found = [files[0].parent / n for n in META_NAMES if (files[0].parent / n).is_file()]
        if not found:
            return None, "meta"
        meta = found[0]
    mpath = Path(meta)
    if not mpath.is_file():
        raise fail(mpath, "meta file does not exist")
    try:
        obj = json.loads(mpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise fail(mpath, f"malformed JSON ({exc})", line=getattr(exc, "lineno", None)) from None
    if not isinstance(obj, dict):
        raise fail(mpath, "expected a JSON object")
    check_meta(obj, mpath)
    return obj, str(mpath)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_META_COUNT


def check_meta(meta: dict, where: PathLike) -> None:
    """Refuse a ``*_num`` count outside ``0..MAX_META_COUNT`` and a malformed
    ``"graphshard"`` key (see the module docstring)."""
    for k, v in meta.items():
        if isinstance(k, str) and k.endswith("_num") and not _count(v):
            raise fail(where, f"expected a count 0..{MAX_META_COUNT}, got {v!r:.40}", field=k,
                       value=v)
    gsm = meta.get("graphshard")
    if gsm is None:
        return
    problem = _graphshard_problem(gsm, meta)
    if problem:
        fld, _, msg = problem.partition(": ")
        raise fail(where, msg, field=f"graphshard.{fld}" if fld else "graphshard")


def _names(v: Any, n: int | None) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x for x in v) and \
        len(set(v)) == len(v) and (n is None or len(v) == n)


def _graphshard_problem(gsm: Any, meta: dict) -> str | None:
    """What is wrong with the ``"graphshard"`` key, as ``"field: message"``, or None."""
    if not isinstance(gsm, dict):
        return ": expected an object"
    ntypes, rels = gsm.get("node_types"), gsm.get("relations")
    for key, names, num in (("node_types", ntypes, "node_type_num"),
                            ("relations", rels, "edge_type_num")):
        if names is not None and not _names(names, meta.get(num)):
            return f"{key}: expected {meta.get(num, 'a list of')} distinct non-empty names " \
                   f"(the meta's {num}), got {names!r:.60}"
    ets = gsm.get("edge_types")
    if ets is not None and (not isinstance(ets, list) or not all(
            isinstance(e, list) and len(e) == 3 and e[0] in (ntypes or ()) and
            e[1] in (rels or ()) and e[2] in (ntypes or ()) for e in ets)):
        return f"edge_types: expected [src, relation, dst] lists over node_types and " \
               f"relations, got {ets!r:.60}"
    for key in ("node_weight", "edge_weight"):
        w = gsm.get(key, {})
        if not isinstance(w, dict):
            return f"{key}: expected an object {{type: dtype or null}}"
        for t, dt in w.items():
            if dt is not None and not _numeric_dtype(dt):
                return f"{key}[{t!r}]: {dt!r:.40} is not a numeric dtype"
    for key, side in (("node_features", "node"), ("edge_features", "edge")):
        feats = gsm.get(key, {})
        if not isinstance(feats, dict):
            return f"{key}: expected an object {{type: [feature specs]}}"
        for t, specs in feats.items():
            if not isinstance(specs, list):
                return f"{key}[{t!r}]: expected a list of feature specs"
            for i, spec in enumerate(specs):
                bad = _spec_problem(spec, meta, side)
                if bad:
                    return f"{key}[{t!r}][{i}]{'' if bad.startswith(':') else '.'}{bad}"
    return None


def _numeric_dtype(dt: Any) -> bool:
    try:
        return isinstance(dt, str) and np.dtype(dt).kind in "biuf"
    except (TypeError, ValueError):
        return False


def _spec_problem(spec: Any, meta: dict, side: str) -> str | None:
    if not isinstance(spec, dict):
        return ": expected an object"
    if not isinstance(spec.get("name"), str) or not spec["name"]:
        return "name: expected a non-empty string"
    if spec.get("kind") not in KINDS:
        return f"kind: expected one of {list(KINDS)}, got {spec.get('kind')!r:.40}"
    if not _numeric_dtype(spec.get("dtype")):
        return f"dtype: {spec.get('dtype')!r:.40} is not a numeric dtype"
    slot, slots = spec.get("slot"), meta.get(f"{side}_{spec['kind']}_feature_num", 0)
    named = isinstance(slot, str) and 0 < len(slot) <= 255  # Euler 2 names its features
    if not named and (not _count(slot) or slot >= slots):
        return f"slot: expected a slot number below the meta's " \
               f"{side}_{spec['kind']}_feature_num={slots} (or an Euler 2 feature name), " \
               f"got {slot!r:.40}"
    if not isinstance(spec.get("ragged", False), bool):
        return "ragged: expected true or false"
    shape = spec.get("shape", [])
    if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape) or \
            int(np.prod(shape, dtype=np.float64)) > MAX_WIDTH:
        return f"shape: expected a list of sizes with at most {MAX_WIDTH} values a row, got " \
               f"{shape!r:.40}"
    return None


#: The most values a dense feature row may declare through a spec's ``shape``.
MAX_WIDTH = 1 << 24
