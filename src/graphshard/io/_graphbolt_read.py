"""Reader half of :mod:`graphshard.io.graphbolt`: a GraphBolt ``OnDiskDataset`` folder, as we
or DGL wrote it, into a :class:`~graphshard.graph.Graph` with its task's masks.

Every field is checked for type and value before its file is opened, and every path must
lead inside the folder of ``metadata.yaml``; an error names ``metadata.yaml`` and the field
(``tasks[0].train_set[1].data[0].path``).  ``numpy`` files load without pickle (``.npy``,
memory-mapped for features); ``torch`` files only through ``torch.load(weights_only=True)``
and only when they hold one tensor.  DGL's preprocessed graph (``graph_topology``, a
``torch.save`` of a ``FusedCSCSamplingGraph``) is a pickle of DGL classes that such a load
refuses: it is never read; DGL keeps the raw ``graph`` section beside it, which is.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE, Graph, heterograph
from ._common import PathLike, check_fits_memory, fail
from ._graphbolt_meta import MetaFile, check_ids, load_yaml, show
from ._graphbolt_tasks import pick_task, task_sets

__all__ = ["read_graphbolt"]

log = logging.getLogger(__name__)

#: Top-level keys of DGL's metadata (and ours); others are reported, not read.
_KNOWN = {"dataset_name", "graph", "graph_topology", "feature_data", "tasks",
          "include_original_edge_id", "graphshard"}


def _csv_edges(meta: MetaFile, target: Path, field: str) -> np.ndarray:
    """A headerless ``src,dst`` CSV (how DGL reads it: pandas, names=[src, dst])."""
    if target.stat().st_size == 0:
        return np.zeros((2, 0), np.int64)
    try:
        table = pacsv.read_csv(target, read_options=pacsv.ReadOptions(
            autogenerate_column_names=True), convert_options=pacsv.ConvertOptions(
            column_types={"f0": pa.int64(), "f1": pa.int64()}))
    except (pa.ArrowInvalid, OSError) as exc:
        raise meta.fail(field, f"{target.name} is not a src,dst CSV of integers ({exc})"
                        ) from exc
    if table.num_columns != 2 or table["f0"].null_count or table["f1"].null_count:
        raise meta.fail(field, f"{target.name}: expected two columns (src,dst) of integers "
                        f"and no empty field, got {table.num_columns} columns")
    return np.stack([table["f0"].to_numpy(), table["f1"].to_numpy()])


def _graph(meta: MetaFile, graph: dict[str, Any]) -> tuple[Graph, bool]:
    """The ``graph`` section: node counts and edge files -> (Graph, typed)."""
    nodes = meta.entries(graph.get("nodes"), "graph.nodes")
    edges = meta.entries(graph.get("edges"), "graph.edges")
    if not nodes or not edges:
        raise meta.fail("graph.nodes" if not nodes else "graph.edges", "missing or empty")
    typed = not (len(nodes) == 1 and len(edges) == 1 and "type" not in nodes[0]
                 and "type" not in edges[0])
    num: dict[str, int] = {}
    for i, node in enumerate(nodes):
        field = f"graph.nodes[{i}]"
        nt = meta.string(node, "type", field) if typed else DEFAULT_NTYPE
        count = node.get("num")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise meta.fail(f"{field}.num", f"{show(count)}, not an integer >= 0", count)
        if nt in num:
            raise meta.fail(f"{field}.type", f"node type {nt!r} is listed twice", nt)
        num[nt] = count
    check_fits_memory(8 * sum(num.values()), path=meta.path, field="graph.nodes",
                      what="an int64 per node")
    data: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
    for i, edge in enumerate(edges):
        field = f"graph.edges[{i}]"
        et = DEFAULT_ETYPE
        if typed:
            text = meta.string(edge, "type", field)
            parts = text.split(":")
            if len(parts) != 3 or not all(parts) or parts[0] not in num or parts[2] not in num:
                raise meta.fail(f"{field}.type", f"{text!r} is not 'src:rel:dst' with node "
                                f"types of graph.nodes ({list(num)})", text)
            et = (parts[0], parts[1], parts[2])
            if et in data:
                raise meta.fail(f"{field}.type", f"edge type {text!r} is listed twice", text)
        fmt = meta.choice(edge, "format", field, ("numpy", "csv"))
        if fmt == "csv":
            arr = _csv_edges(meta, meta.file(edge, field), f"{field}.path")
        else:
            arr = meta.array(edge, field)
        if arr.ndim != 2 or arr.shape[0] != 2:
            raise meta.fail(f"{field}.path", f"edges must be a (2, E) array, got shape "
                            f"{arr.shape}")
        data[et] = (check_ids(meta, arr[0], num[et[0]], f"{field}.path", "src"),
                    check_ids(meta, arr[1], num[et[2]], f"{field}.path", "dst"))
    return heterograph(data, num_nodes_dict=num), typed


def _features(meta: MetaFile, g: Graph, typed: bool, specs: list[dict[str, Any]],
              prefix: str) -> None:
    """``feature_data`` entries into node and edge data (domain ``graph``: reported)."""
    etypes = {":".join(et): et for et in g.canonical_etypes}
    for i, spec in enumerate(specs):
        field = f"{prefix}[{i}]"
        domain = meta.choice(spec, "domain", field, ("node", "edge", "graph"))
        name = meta.string(spec, "name", field)
        if domain == "graph":
            log.warning("%s: %s is a graph-level feature %r, which a graphshard Graph does "
                        "not hold: not read", meta.path, field, name)
            continue
        tname = meta.string(spec, "type", field) if typed else meta.opt_string(spec, "type",
                                                                                 field)
        known = list(g.ntypes) if domain == "node" else list(etypes)
        if not typed and tname is not None:
            raise meta.fail(f"{field}.type", f"{tname!r}: the graph has no types (its nodes "
                            "and edges have none)", tname)
        if typed and tname not in known:
            raise meta.fail(f"{field}.type", f"{tname!r} is not a {domain} type of the graph "
                            f"({known})", tname)
        if "/" in name:
            raise meta.fail(f"{field}.name", f"{name!r}: a feature name holds no '/'", name)
        et = etypes[tname] if domain == "edge" and tname else DEFAULT_ETYPE
        frame = g.nodes[tname or DEFAULT_NTYPE].data if domain == "node" else g.edges[et].data
        if name in frame:
            owner = repr(tname) if tname else "the graph"
            raise meta.fail(f"{field}.name", f"{domain} feature {name!r} of {owner} is given "
                            "twice", name)
        arr = meta.array(spec, field, mmap=True)
        rows = g.num_nodes(tname or DEFAULT_NTYPE) if domain == "node" else g.num_edges(et)
        if arr.ndim == 0 or arr.shape[0] != rows or arr.dtype.kind not in "biuf":
            raise meta.fail(f"{field}.path", f"expected {rows} rows of numbers (one per "
                            f"{domain}), got {arr.dtype} of shape {arr.shape}")
        frame[name] = arr


def _locate(path: PathLike) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    meta = path / "metadata.yaml" if path.is_dir() else path
    if not meta.is_file():
        raise fail(path, "a folder without metadata.yaml is no GraphBolt dataset")
    return meta


def read_graphbolt(path: PathLike, *, task: str | int | None = None) -> Graph:
    """Read a GraphBolt ``OnDiskDataset`` (a folder with ``metadata.yaml``, or that file).

    The ``graph`` section gives node counts and edges (``numpy``: a ``(2, E)`` array;
    ``csv``: headerless ``src,dst`` lines), ``feature_data`` (and ``graph.feature_data``)
    node and edge features (domain ``graph`` is logged and skipped).  One task (``task``)
    becomes node masks: its ``train_set``, ``validation_set`` and ``test_set`` give
    ``train_mask``, ``val_mask`` and ``test_mask`` (bool) on each node type they list, and
    their ``labels`` give the node feature ``label`` on a type without one (-1, or NaN for
    float labels, on nodes in no set).  A homogeneous dataset (no ``type`` fields) gives
    types ``_N`` and ``_N:_E:_N``.  Reading needs PyYAML; ``torch`` format files need torch.

    Args:
        path: The dataset folder or its ``metadata.yaml``.  DGL's preprocessed
            ``metadata.yaml`` (``graph_topology`` only) is refused: read the dataset folder,
            whose ``metadata.yaml`` DGL leaves as it was.
        task: The task to read: its name, its index, or ``"none"`` (the graph and features
            alone); default the first.  Other tasks are logged as not read.

    Raises:
        FormatError: naming ``metadata.yaml`` and the field: missing or mistyped fields,
            a path leading outside the folder, an unreadable or pickled file, an array of
            the wrong shape, dtype or length, a node ID out of range, a node set that is
            not one (node pairs).
        ValidationError: no such task.
        MissingDependencyError: PyYAML (or, for ``torch`` files, torch) is not installed.

    Example:
        >>> import tempfile, numpy as np
        >>> d = Path(tempfile.mkdtemp())
        >>> np.save(d / "e.npy", np.array([[0, 1], [1, 2]]))
        >>> _ = (d / "metadata.yaml").write_text(
        ...     "graph:\\n  nodes: [{num: 3}]\\n  edges: [{format: numpy, path: e.npy}]\\n")
        >>> g = read_graphbolt(d)
        >>> g.num_nodes(), [a.tolist() for a in g.edges()]
        (3, [[0, 1], [1, 2]])
        >>> _ = (d / "metadata.yaml").write_text(
        ...     "graph:\\n  nodes: [{num: 3}]\\n  edges: [{format: numpy, path: ../e.npy}]\\n")
        >>> read_graphbolt(d)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: .../metadata.yaml: graph.edges[0].path is '../e.npy', \
which leads outside the folder of the file
    """
    meta = MetaFile(_locate(path))
    doc = meta.mapping(load_yaml(meta.path), "metadata.yaml")
    unknown = sorted(str(k) for k in doc if k not in _KNOWN)
    if unknown:
        log.warning("%s: keys %s are not GraphBolt's: not read", meta.path, unknown)
    if doc.get("graph") is None:
        if doc.get("graph_topology") is not None:
            raw = meta.folder.parent / "metadata.yaml"
            hint = f" ({raw})" if meta.folder.name == "preprocessed" and raw.is_file() else ""
            raise meta.fail("graph_topology", "DGL's preprocessed graph is a torch.save pickle "
                            "of a FusedCSCSamplingGraph, which torch.load(weights_only=True) "
                            "refuses and graphshard does not unpickle; read the dataset "
                            f"folder whose metadata.yaml has the graph section{hint}")
        raise meta.fail("graph", "missing: no graph section (node counts and edge files)")
    graph = meta.mapping(doc["graph"], "graph")
    g, typed = _graph(meta, graph)
    _features(meta, g, typed, meta.entries(graph.get("feature_data"), "graph.feature_data"),
              "graph.feature_data")
    _features(meta, g, typed, meta.entries(doc.get("feature_data"), "feature_data"),
              "feature_data")
    tasks = meta.entries(doc.get("tasks"), "tasks")
    pick = pick_task(meta, tasks, task)
    if pick is not None:
        task_sets(meta, g, typed, tasks[pick], f"tasks[{pick}]")
    log.info("read_graphbolt %s: %d nodes, %d edges, node types %s", meta.path,
             g.num_nodes(), g.num_edges(), g.ntypes)
    return g
