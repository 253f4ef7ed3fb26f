"""DGL GraphBolt's ``OnDiskDataset`` folder: ``metadata.yaml`` with ``graph``,
``feature_data`` and ``tasks``, beside the ``.npy`` files it names.

The layout is DGL 2.1's (``dgl/graphbolt/impl/ondisk_dataset.py`` and
``ondisk_metadata.py``); every path in ``metadata.yaml`` is relative to its folder::

    dataset_name: "shop"
    graph:
      nodes:                 # one entry; "type" only when the graph has types
        - type: "user"
          num: 3
      edges:                 # "src:rel:dst" types; format numpy: a (2, E) array, or csv
        - type: "user:buys:item"
          format: "numpy"
          path: "edges/0-user_buys_item.npy"
    feature_data:            # every node and edge feature; domain node or edge
      - domain: "node"
        type: "user"
        name: "feat"
        format: "numpy"
        path: "node_data/0-user-feat.npy"
    tasks:                   # the masks train_mask / val_mask / test_mask, as node sets
      - name: "node_classification"
        num_classes: 4
        train_set:
          - type: "user"
            data:
              - name: "seed_nodes"   # node IDs of that type
                format: "numpy"
                path: "set/0-train-user-seed_nodes.npy"
              - name: "labels"       # their rows of the node feature "label"
                format: "numpy"
                path: "set/1-train-user-labels.npy"

``dgl.graphbolt.OnDiskDataset(folder).load()`` preprocesses the folder (into
``folder/preprocessed/``) and gives back this graph (nodes of each type keep their IDs; DGL
numbers the types in sorted order), the features (DGL stores a 1-D one as ``(N, 1)``) and
the task's ``ItemSet``\\ s.  :func:`write_graphbolt` writes it; :func:`read_graphbolt`
(:mod:`graphshard.io._graphbolt_read`) reads it, as we or DGL wrote it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE, Graph
from ..storage.files import (
    atomic_write,
    check_out_dir,
    claim_out_dir,
    mark_complete,
    path_inside,
)
from ._common import PathLike
from ._graphbolt_meta import HEADER, LABEL, SETS, TORCH_DTYPES, dump_yaml
from ._graphbolt_read import read_graphbolt

__all__ = ["check_graphbolt_out", "read_graphbolt", "write_graphbolt"]

log = logging.getLogger(__name__)

_WHAT = "GraphBolt dataset written by graphshard"
_PATH_LINE = re.compile(r'^\s*(?:- )?path: ("[A-Za-z0-9_./-]*")$')


def _is_ours(folder: Path) -> bool:
    try:
        with open(folder / "metadata.yaml", encoding="utf-8") as handle:
            return handle.readline().rstrip("\n") == HEADER
    except (OSError, UnicodeDecodeError):
        return False


def check_graphbolt_out(out_dir: PathLike) -> Path:
    """Refuse an ``out_dir`` that :func:`write_graphbolt` must not write into: one that
    is a file, or a folder holding something other than an earlier output of ours."""
    return check_out_dir(out_dir, _is_ours, _WHAT)


def _listed_files(folder: Path) -> set[Path]:
    """The files an earlier ``metadata.yaml`` of ours names (inside ``folder`` only)."""
    found: set[Path] = set()
    try:
        lines = (folder / "metadata.yaml").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return found
    for line in lines:
        m = _PATH_LINE.match(line)
        if m:
            with contextlib.suppress(ValueError):
                found.add(path_inside(folder, json.loads(m.group(1)), field="path"))
    return found


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]


def _check_types(g: Graph) -> None:
    if not g.canonical_etypes:
        raise ValidationError("GraphBolt's graph needs at least one edge type; this graph "
                              "has none", field="etypes")
    for i, nt in enumerate(g.ntypes):
        if ":" in nt:
            raise ValidationError(f"node type {nt!r} holds ':', which GraphBolt's "
                                  "'src:rel:dst' edge types cannot hold", field=f"ntypes[{i}]")
    for i, et in enumerate(g.canonical_etypes):
        if ":" in et[1]:
            raise ValidationError(f"relation {et[1]!r} of edge type {et} holds ':', which "
                                  "GraphBolt's 'src:rel:dst' edge types cannot hold",
                                  field=f"etypes[{i}]")


def _column(owner: str, name: str, col: Any) -> np.ndarray:
    """A feature column as DGL can load it: dense, numeric, of a dtype torch has, in the
    machine's byte order (values kept)."""
    if not isinstance(col, np.ndarray):
        raise ValidationError(f"{owner}: feature {name!r} is {type(col).__name__}; GraphBolt "
                              "features are dense arrays (store it dense, or drop it)",
                              field=name)
    native = col.astype(col.dtype.newbyteorder("="), copy=False)
    if native.dtype not in TORCH_DTYPES:
        raise ValidationError(f"{owner}: feature {name!r} has dtype {col.dtype}; DGL loads "
                              f"{sorted(str(t) for t in TORCH_DTYPES)} (cast it first)",
                              field=name)
    return native


def _mask(owner: str, name: str, col: Any) -> np.ndarray:
    if not isinstance(col, np.ndarray) or col.ndim != 1 or col.dtype.kind not in "biu":
        raise ValidationError(f"{owner}: {name} must be a 1-D bool (or 0/1 integer) array, one "
                              f"flag per node, to become a GraphBolt task set; got "
                              f"{getattr(col, 'dtype', type(col).__name__)} "
                              f"{getattr(col, 'shape', '')}", field=name)
    return np.flatnonzero(col).astype(np.int64)


class _Plan:
    """The files to write (relative path -> array) and the metadata naming them."""

    def __init__(self) -> None:
        self.files: dict[str, np.ndarray] = {}

    def add(self, folder: str, stem: str, array: np.ndarray) -> str:
        # a unique number first: DGL's preprocessing renames "pt" to "npy" in every path
        rel = f"{folder}/{len(self.files)}-{stem}.npy"
        self.files[rel] = array
        return rel


def _num_classes(labels: list[np.ndarray]) -> int | None:
    """Classes of the task's labels: columns of a 2-D (multi-label) one, else max + 1."""
    if not labels or any(lab.dtype.kind not in "iu" for lab in labels):
        return None
    if labels[0].ndim == 2:
        return int(labels[0].shape[1])
    top = max((int(lab.max()) for lab in labels if lab.size), default=-1)
    return top + 1 if top >= 0 else None


def _tasks(g: Graph, plan: _Plan, typed: bool, task_name: str) -> list[dict[str, Any]]:
    task: dict[str, Any] = {"name": task_name}
    labels = [g.nodes[nt].data[LABEL] for nt in g.ntypes
              if LABEL in g.nodes[nt].data and any(m in g.nodes[nt].data for m in SETS.values())]
    num_classes = _num_classes([np.asarray(lab) for lab in labels])
    if num_classes is not None:
        task["num_classes"] = num_classes
    for set_name, mask_name in SETS.items():
        entries = []
        for nt in g.ntypes:
            frame = g.nodes[nt].data
            if mask_name not in frame:
                continue
            seeds = _mask(f"node type {nt!r}", mask_name, frame[mask_name])
            stem = f"{set_name.split('_')[0]}-{_safe(nt)}"
            data = [{"name": "seed_nodes", "format": "numpy",
                     "path": plan.add("set", f"{stem}-seed_nodes", seeds)}]
            if LABEL in frame:
                lab = _column(f"node type {nt!r}", LABEL, frame[LABEL])
                data.append({"name": "labels", "format": "numpy",
                             "path": plan.add("set", f"{stem}-labels", lab[seeds])})
            entries.append({"type": nt, "data": data} if typed else {"data": data})
        if entries:
            task[set_name] = entries
    return [task] if any(s in task for s in SETS) else []


def write_graphbolt(g: Graph, out_dir: PathLike, *, dataset_name: str = "graph",
                    task_name: str = "node_classification") -> None:
    """Write ``g`` as a GraphBolt ``OnDiskDataset`` folder: ``.npy`` files first,
    ``metadata.yaml`` last.

    Edges of each type are one ``(2, E)`` int64 array; every node and edge feature is a
    ``feature_data`` entry, except the node masks ``train_mask``, ``val_mask`` and
    ``test_mask``, which become one task (``task_name``) whose ``train_set``,
    ``validation_set`` and ``test_set`` hold, per node type that has the mask, the IDs of
    its set nodes (``seed_nodes``) and, when the type has a node feature ``label``, their
    labels (``labels``; ``label`` is also written as a feature).  A homogeneous graph
    (types ``_N`` and ``_N:_E:_N``) is written without types, as DGL's homogeneous
    datasets are.  No pickle: DGL reads ``.npy`` files with ``format: numpy``.

    Args:
        g: The graph.
        out_dir: Output folder: new, empty, or an earlier output of this function, which is
            replaced (its ``metadata.yaml`` first; DGL's ``preprocessed/`` folder stays and
            DGL redoes it, as the files changed).  Anything else is refused.
        dataset_name: ``dataset_name`` in the metadata.
        task_name: The task's ``name``.

    Raises:
        ValidationError: a graph with no edge type, a type name holding ``:``, a feature
            that is not a dense array of a dtype torch has (bool, uint8, int8-64,
            float16-64), a mask that is not 1-D bool or integer; before anything is written.
        ConfigError: ``out_dir`` is a file, or a folder holding something else.

    Example:
        >>> import tempfile, numpy as np, graphshard as gs
        >>> g = gs.graph(([0, 1, 2], [1, 2, 0]))
        >>> g.ndata["label"] = np.array([0, 1, 1])
        >>> g.ndata["train_mask"] = np.array([True, True, False])
        >>> d = Path(tempfile.mkdtemp())
        >>> write_graphbolt(g, d, dataset_name="tiny")
        >>> print("\\n".join((d / "metadata.yaml").read_text().splitlines()[:5]))
        # GraphBolt OnDiskDataset written by graphshard
        dataset_name: "tiny"
        graph:
          nodes:
            - num: 3
        >>> back = read_graphbolt(d)
        >>> back.ndata["train_mask"].tolist(), back.ndata["label"].tolist()
        ([True, True, False], [0, 1, 1])
    """
    for key, value in (("dataset_name", dataset_name), ("task_name", task_name)):
        if not isinstance(value, str):
            raise ValidationError(f"{key} must be a string, got {value!r}", field=key,
                                  value=value)
    _check_types(g)
    typed = not (g.ntypes == [DEFAULT_NTYPE] and g.canonical_etypes == [DEFAULT_ETYPE])
    plan = _Plan()
    nodes, edges, features = [], [], []
    for nt in g.ntypes:
        nodes.append({"type": nt, "num": g.num_nodes(nt)} if typed
                     else {"num": g.num_nodes(nt)})
    for et in g.canonical_etypes:
        rel = plan.add("edges", _safe(":".join(et)), np.stack(g.edges(etype=et)))
        edges.append({"type": ":".join(et), "format": "numpy", "path": rel} if typed
                     else {"format": "numpy", "path": rel})
    kinds = [("node", nt, f"node type {nt!r}", g.nodes[nt].data) for nt in g.ntypes] + \
        [("edge", ":".join(et), f"edge type {et}", g.edges[et].data)
         for et in g.canonical_etypes]
    for domain, tname, owner, frame in kinds:
        for name, col in frame.items():
            if domain == "node" and name in SETS.values():
                continue
            rel = plan.add(f"{domain}_data", f"{_safe(tname)}-{_safe(name)}",
                           _column(owner, name, col))
            features.append({"domain": domain, **({"type": tname} if typed else {}),
                             "name": name, "format": "numpy", "path": rel})
    meta: dict[str, Any] = {"dataset_name": dataset_name,
                            "graph": {"nodes": nodes, "edges": edges}}
    if features:
        meta["feature_data"] = features
    tasks = _tasks(g, plan, typed, task_name)
    if tasks:
        meta["tasks"] = tasks
    meta["graphshard"] = {"format_version": 1}
    text = dump_yaml(meta)
    out = claim_out_dir(check_graphbolt_out(out_dir), _is_ours, _WHAT)
    old = _listed_files(out)
    (out / "metadata.yaml").unlink(missing_ok=True)  # the old output is gone from here on
    for rel, array in plan.files.items():
        (out / rel).parent.mkdir(exist_ok=True)
        with atomic_write(out / rel) as handle:
            np.save(handle, np.ascontiguousarray(array), allow_pickle=False)
    with atomic_write(out / "metadata.yaml", "w") as handle:
        handle.write(text)
    for stale in old - _listed_files(out):
        with contextlib.suppress(OSError):
            stale.unlink()
    mark_complete(out)
    log.info("write_graphbolt %s: %d node types, %d edge types, %d features, %d files",
             out, len(g.ntypes), len(g.canonical_etypes), len(features), len(plan.files))
