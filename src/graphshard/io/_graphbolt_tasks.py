"""The tasks of a GraphBolt ``metadata.yaml`` (for :mod:`graphshard.io._graphbolt_read`): one
task's node sets become the masks ``train_mask`` / ``val_mask`` / ``test_mask`` and, where a
node type has no ``label`` feature, their labels become it."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..graph import DEFAULT_NTYPE, Graph
from ._graphbolt_meta import LABEL, SETS, MetaFile, check_ids, show

__all__ = ["SEED_NAMES", "pick_task", "task_sets"]

log = logging.getLogger(__name__)

#: Item names of a task set that hold node IDs (DGL 2.1 writes seed_nodes, later DGL seeds).
SEED_NAMES = ("seed_nodes", "seeds")


def pick_task(meta: MetaFile, tasks: list[dict[str, Any]], task: str | int | None
              ) -> int | None:
    """Index of the task to read (None: no task)."""
    names = [t.get("name") for t in tasks]
    if task is None:
        pick: int | None = 0 if tasks else None
    elif task in names:
        pick = names.index(task)
    elif isinstance(task, int) or (isinstance(task, str) and task.isdigit()):
        pick = int(task)
    elif task == "none":
        pick = None
    else:
        pick = -1
    if pick is not None and not 0 <= pick < len(tasks):
        raise ValidationError(f"{meta.path}: no task {task!r}; it has {len(tasks)} tasks "
                              f"named {names} (or task='none' for the graph alone)",
                              path=str(meta.path), field="task", value=task)
    skipped = [n if n is not None else i for i, n in enumerate(names) if i != pick]
    if skipped:
        log.warning("%s: tasks %s not read (one task becomes masks; choose it with task=)",
                    meta.path, skipped)
    return pick


def task_sets(meta: MetaFile, g: Graph, typed: bool, task: dict[str, Any], field: str) -> None:
    """The task's node sets -> ``train_mask`` / ``val_mask`` / ``test_mask`` (bool) per
    node type listed, and ``label`` where the type has no such feature."""
    labels: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for set_name, mask_name in SETS.items():
        seen: set[str] = set()
        entries = meta.entries(task.get(set_name), f"{field}.{set_name}")
        if not typed and len(entries) > 1:
            raise meta.fail(f"{field}.{set_name}", "several sets, but the graph has no types")
        for j, entry in enumerate(entries):
            where = f"{field}.{set_name}[{j}]"
            nt = meta.string(entry, "type", where) if typed else DEFAULT_NTYPE
            if not typed and "type" in entry:
                raise meta.fail(f"{where}.type", "the graph has no types", entry["type"])
            if nt not in g.ntypes:
                raise meta.fail(f"{where}.type", f"{nt!r} is not a node type ({g.ntypes})", nt)
            if nt in seen:
                raise meta.fail(f"{where}.type", f"{nt!r} has two {set_name} entries", nt)
            seen.add(nt)
            items = _items(meta, entry, where)
            seeds = check_ids(meta, items["seeds"][0], g.num_nodes(nt), items["seeds"][1],
                              "seed node IDs")
            frame = g.nodes[nt].data
            if mask_name in frame:
                raise meta.fail(where, f"node type {nt!r} already has a feature {mask_name!r}, "
                                f"which this set would be")
            mask = np.zeros(g.num_nodes(nt), dtype=bool)
            mask[seeds] = True
            frame[mask_name] = mask
            if "labels" in items:
                lab, lab_field = items["labels"]
                if lab.ndim == 0 or lab.shape[0] != len(seeds) or lab.dtype.kind not in "biuf":
                    raise meta.fail(lab_field, f"expected {len(seeds)} labels (numbers, one "
                                    f"per seed node), got {lab.dtype} of shape {lab.shape}")
                labels.setdefault(nt, []).append((seeds, lab))
    for nt, pairs in labels.items():
        if LABEL not in g.nodes[nt].data:
            g.nodes[nt].data[LABEL] = _label_column(meta, g.num_nodes(nt), pairs, field)


def _items(meta: MetaFile, entry: dict[str, Any], where: str
           ) -> dict[str, tuple[np.ndarray, str]]:
    """A set's ``data``: node IDs (``seeds``) and optional ``labels`` -> (array, field)."""
    items: dict[str, tuple[np.ndarray, str]] = {}
    for k, item in enumerate(meta.entries(entry.get("data"), f"{where}.data")):
        field = f"{where}.data[{k}]"
        name = item.get("name")
        key = "seeds" if name in SEED_NAMES else "labels" if name == "labels" else None
        if key is None:
            raise meta.fail(f"{field}.name", f"{show(name)}: graphshard reads node sets "
                            f"({', '.join(SEED_NAMES)}, labels) as masks; for other tasks "
                            "(node pairs, negatives) read the graph alone with task='none'",
                            name)
        if key in items:
            raise meta.fail(f"{field}.name", f"{name!r} is given twice in this set", name)
        arr = meta.array(item, field)
        if key == "seeds" and arr.ndim != 1:
            raise meta.fail(f"{field}.path", f"{name} must be 1-D node IDs, got shape "
                            f"{arr.shape} (node pairs are not node sets)")
        items[key] = (arr, f"{field}.path")
    if "seeds" not in items:
        raise meta.fail(f"{where}.data", "no seed_nodes (the set's node IDs)")
    return items


def _label_column(meta: MetaFile, num: int, pairs: list[tuple[np.ndarray, np.ndarray]],
                  field: str) -> np.ndarray:
    """Labels of the set nodes, -1 (integers) or NaN (floats) elsewhere."""
    shapes = {lab.shape[1:] for _, lab in pairs}
    if len(shapes) > 1:
        raise meta.fail(field, f"the sets' labels have different shapes per row: {shapes}")
    floats = [lab.dtype for _, lab in pairs if lab.dtype.kind == "f"]
    dtype = np.result_type(*floats) if floats else np.dtype(np.int64)
    col = np.full((num, *shapes.pop()), np.nan if floats else -1, dtype=dtype)
    for seeds, lab in pairs:
        if lab.dtype == np.uint64 and lab.size and lab.max() > np.iinfo(np.int64).max:
            raise meta.fail(field, "a label exceeds int64")
        col[seeds] = lab
    return col
