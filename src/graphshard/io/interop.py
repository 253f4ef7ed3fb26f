"""Conversion to and from DGL, PyTorch Geometric, NetworkX and SciPy sparse matrices.

The optional packages are imported inside each function through
:func:`graphshard._util.optional.import_optional`, so ``import graphshard`` never loads them.
Dense features travel as tensors/arrays; Ragged and sparse (SparseRows) features have no
counterpart here in DGL or PyG and are left out (listed in the ``skipped`` log message).
:func:`from_scipy` keeps a sparse feature matrix sparse.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._util.arrays import as_array
from .._util.optional import import_optional
from ..errors import ValidationError, check_choice
from ..graph import DEFAULT_ETYPE, DEFAULT_NTYPE, Graph, graph, heterograph
from ..ragged import Ragged
from ..sparse import SparseRows
from ..typing import EdgeTypeLike

__all__ = ["from_dgl", "from_networkx", "from_pyg", "from_scipy", "to_dgl", "to_networkx",
           "to_pyg", "to_scipy"]

log = logging.getLogger(__name__)


def _dense(frame: Any, owner: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    skipped: list[str] = []
    for name, col in frame.items():
        (skipped.append(name) if isinstance(col, (Ragged, SparseRows))
         else out.__setitem__(name, col))
    if skipped:
        log.info("%s: Ragged or sparse features %s have no tensor form here and were skipped",
                 owner, skipped)
    return out


def _tensor(torch: Any, arr: np.ndarray) -> Any:
    arr = np.ascontiguousarray(arr)
    if arr.dtype == np.uint64:
        arr = arr.astype(np.int64)
    return torch.from_numpy(arr.copy() if not arr.flags.writeable else arr)


# ----- DGL -----------------------------------------------------------------------------------
def to_dgl(g: Graph) -> Any:
    """A ``dgl.DGLGraph`` with the same types, edges (int64) and dense features.

    Example:
        >>> import graphshard as gs
        >>> dg = to_dgl(gs.graph(([0], [1])))  # doctest: +SKIP
    """
    dgl = import_optional("dgl", "to_dgl")
    torch = import_optional("torch", "to_dgl")
    data = {et: (_tensor(torch, s), _tensor(torch, d))
            for et, (s, d) in ((et, g.edges(etype=et)) for et in g.canonical_etypes)}
    out = dgl.heterograph(data, num_nodes_dict={t: g.num_nodes(t) for t in g.ntypes},
                          idtype=torch.int64)
    for t in g.ntypes:
        for name, col in _dense(g.nodes[t].data, f"node type {t!r}").items():
            out.nodes[t].data[name] = _tensor(torch, col)
    for et in g.canonical_etypes:
        for name, col in _dense(g.edges[et].data, f"edge type {et}").items():
            out.edges[et].data[name] = _tensor(torch, col)
    return out


def from_dgl(dg: Any) -> Graph:
    """A :class:`Graph` from a ``dgl.DGLGraph`` (types, edges in edge-ID order, features).

    Example:
        >>> g = from_dgl(dgl_graph)  # doctest: +SKIP
    """
    data: dict[EdgeTypeLike, tuple[np.ndarray, np.ndarray]] = {}
    for et in dg.canonical_etypes:
        s, d = dg.edges(etype=et, order="eid")
        data[tuple(et)] = (as_array(s), as_array(d))
    g = heterograph(data, num_nodes_dict={t: dg.num_nodes(t) for t in dg.ntypes})
    for t in dg.ntypes:
        for name, col in dg.nodes[t].data.items():
            g.nodes[t].data[name] = as_array(col)
    for et in dg.canonical_etypes:
        for name, col in dg.edges[et].data.items():
            g.edges[tuple(et)].data[name] = as_array(col)
    return g


# ----- PyG -----------------------------------------------------------------------------------
def to_pyg(g: Graph) -> Any:
    """A PyG ``Data`` (homogeneous graph: ``edge_index``, node/edge features as attributes)
    or ``HeteroData`` (several types: ``data[ntype]``, ``data[src, rel, dst]``).

    Example:
        >>> import graphshard as gs
        >>> data = to_pyg(gs.graph(([0], [1])))  # doctest: +SKIP
    """
    pyg_data = import_optional("torch_geometric.data", "to_pyg")
    torch = import_optional("torch", "to_pyg")
    if g.ntypes == [DEFAULT_NTYPE] and g.canonical_etypes in ([DEFAULT_ETYPE], []):
        out = pyg_data.Data(num_nodes=g.num_nodes())
        s, d = g.edges() if g.canonical_etypes else (np.zeros(0, np.int64),) * 2
        out.edge_index = _tensor(torch, np.stack([s, d]))
        for name, col in _dense(g.node_frame(), "nodes").items():
            out[name] = _tensor(torch, col)
        if g.canonical_etypes:
            for name, col in _dense(g.edge_frame(), "edges").items():
                out[name] = _tensor(torch, col)
        return out
    out = pyg_data.HeteroData()
    for t in g.ntypes:
        out[t].num_nodes = g.num_nodes(t)
        for name, col in _dense(g.nodes[t].data, f"node type {t!r}").items():
            out[t][name] = _tensor(torch, col)
    for et in g.canonical_etypes:
        s, d = g.edges(etype=et)
        out[et].edge_index = _tensor(torch, np.stack([s, d]))
        for name, col in _dense(g.edges[et].data, f"edge type {et}").items():
            out[et][name] = _tensor(torch, col)
    return out


def from_pyg(data: Any) -> Graph:
    """A :class:`Graph` from a PyG ``Data`` or ``HeteroData``.

    Node-level attributes (first dimension = number of nodes) become node features and
    edge-level ones edge features, as PyG's ``is_node_attr``/``is_edge_attr`` decide (when
    a graph has as many edges as nodes, PyG counts only keys containing ``"edge"`` as edge
    attributes).

    Example:
        >>> g = from_pyg(data)  # doctest: +SKIP
    """
    if hasattr(data, "node_types") and hasattr(data, "edge_types") and \
            type(data).__name__ == "HeteroData":
        num = {t: int(data[t].num_nodes) for t in data.node_types}
        g = heterograph({tuple(et): (as_array(data[et].edge_index[0]),
                                     as_array(data[et].edge_index[1]))
                         for et in data.edge_types}, num_nodes_dict=num)
        for t in data.node_types:
            for key, val in data[t].items():
                if key != "num_nodes" and data[t].is_node_attr(key):
                    g.nodes[t].data[key] = as_array(val)
        for et in data.edge_types:
            for key, val in data[et].items():
                if key != "edge_index" and data[et].is_edge_attr(key):
                    g.edges[tuple(et)].data[key] = as_array(val)
        return g
    ei = as_array(data.edge_index)
    g = graph((ei[0], ei[1]), num_nodes=int(data.num_nodes))
    for key, val in data.items():
        if key in ("edge_index", "num_nodes") or not hasattr(val, "shape"):
            continue
        if data.is_edge_attr(key):
            g.edata[key] = as_array(val)
        elif data.is_node_attr(key):
            g.ndata[key] = as_array(val)
    return g


# ----- NetworkX and SciPy ------------------------------------------------------------------
def from_networkx(nxg: Any, *, node_attrs: tuple[str, ...] = (),
                  edge_attrs: tuple[str, ...] = ()) -> Graph:
    """A homogeneous :class:`Graph` from a NetworkX graph.

    Nodes get IDs in ``nxg.nodes`` order; unless the labels are already ``0..n-1`` they
    are kept as node feature ``"node_id"`` (integers) when they are integers.  An undirected
    graph gives both directions of every edge (edge ``2k`` and ``2k+1``), as DGL does.

    Args:
        nxg: A ``networkx`` graph (directed or not, multigraphs allowed).
        node_attrs: Node attributes to copy as features (numbers or equal-length sequences).
        edge_attrs: Edge attributes to copy as features.

    Example:
        >>> import networkx as nx
        >>> g = from_networkx(nx.path_graph(3))
        >>> g.num_nodes(), g.edges()[0].tolist()
        (3, [0, 1, 1, 2])
    """
    labels = list(nxg.nodes)
    index = {v: i for i, v in enumerate(labels)}
    edges = list(nxg.edges(data=True))
    src = np.fromiter((index[u] for u, _, _ in edges), np.int64, len(edges))
    dst = np.fromiter((index[v] for _, v, _ in edges), np.int64, len(edges))
    rows = np.arange(len(edges))
    if not nxg.is_directed():
        src, dst = np.stack([src, dst], 1).ravel(), np.stack([dst, src], 1).ravel()
        rows = np.repeat(rows, 2)
    g = graph((src, dst), num_nodes=len(labels))
    if labels != list(range(len(labels))) and all(isinstance(v, (int, np.integer))
                                                  for v in labels):
        g.ndata["node_id"] = np.array(labels, np.int64)
    for name in node_attrs:
        g.ndata[name] = np.array([nxg.nodes[v][name] for v in labels])
    for name in edge_attrs:
        g.edata[name] = np.array([a[name] for _, _, a in edges])[rows]
    return g


def from_scipy(mat: Any, *, weight: str | None = "weight",
               ndata: dict[str, Any] | None = None) -> Graph:
    """A homogeneous :class:`Graph` from a square SciPy sparse matrix (``A[u, v]`` = edge).

    Edges come in COO order of ``mat`` (row-major for CSR input); stored values become
    edge feature ``weight`` unless ``weight`` is None.

    Args:
        mat: The adjacency, any SciPy sparse format.
        weight: Edge feature name for the stored values, or None to drop them.
        ndata: Node features by name, one row per node: a SciPy sparse matrix (a bag of
            words, say) stays sparse, as a :class:`~graphshard.sparse.SparseRows`; an
            array is stored as it is.

    Raises:
        ValidationError: ``mat`` is not square, or a feature has the wrong number of rows.

    Example:
        >>> import scipy.sparse as sp
        >>> g = from_scipy(sp.csr_matrix(([2.0, 3.0], ([0, 1], [1, 2])), shape=(3, 3)),
        ...                ndata={"bow": sp.eye(3, 1000, format="csr")})
        >>> g.edges()[1].tolist(), g.edata["weight"].tolist(), g.ndata["bow"].nnz
        ([1, 2], [2.0, 3.0], 3)
    """
    coo = sp.coo_matrix(mat)
    if coo.shape[0] != coo.shape[1]:
        raise ValidationError(f"expected a square matrix, got shape {coo.shape}", field="mat")
    g = graph((coo.row.astype(np.int64), coo.col.astype(np.int64)), num_nodes=coo.shape[0])
    if weight is not None:
        g.edata[weight] = coo.data
    for name, col in (ndata or {}).items():
        g.ndata[name] = col  # the frame keeps a SciPy matrix sparse and checks the rows
    return g


def _feature(frame: Any, name: str, owner: str, field: str) -> np.ndarray:
    if name not in frame:
        raise ValidationError(f"{field}: {owner} has no feature {name!r}; it has "
                              f"{sorted(frame)}", field=field, value=name)
    col = frame[name]
    if isinstance(col, (Ragged, SparseRows)):
        kind = "Ragged" if isinstance(col, Ragged) else "sparse"
        raise ValidationError(f"{field}: feature {name!r} of {owner} is {kind}; only dense "
                              "features can be copied", field=field, value=name)
    return np.asarray(col)


def to_networkx(g: Graph, *, node_attrs: tuple[str, ...] = (),
                edge_attrs: tuple[str, ...] = ()) -> Any:
    """A ``networkx.MultiDiGraph`` of a homogeneous :class:`Graph` (the inverse of
    :func:`from_networkx`).

    Nodes are ``0..num_nodes-1`` (isolated ones included); every edge becomes one NetworkX
    edge, added in edge-ID order, so parallel edges stay apart.  NetworkX lists edges
    grouped by source, so ``from_networkx(to_networkx(g))`` holds the same edges and
    features, in the order of a stable sort of ``g``'s edges by source.

    Args:
        g: A graph with one node type and at most one edge type.
        node_attrs: Dense node features to copy as node attributes (a row per node:
            a scalar for a 1-D feature, an array otherwise).
        edge_attrs: Dense edge features to copy as edge attributes.

    Returns:
        A new ``networkx.MultiDiGraph``.

    Raises:
        ValidationError: ``g`` has several node or edge types, or a named feature is
            missing or Ragged.
        MissingDependencyError: networkx is not installed.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1, 1], [1, 2, 2]), num_nodes=4)
        >>> g.edata["w"] = np.array([0.5, 1.0, 2.0])
        >>> nxg = to_networkx(g, edge_attrs=("w",))
        >>> nxg.number_of_nodes(), [(u, v, a["w"]) for u, v, a in nxg.edges(data=True)]
        (4, [(0, 1, 0.5), (1, 2, 1.0), (1, 2, 2.0)])
        >>> from_networkx(nxg, edge_attrs=("w",)).edges()[1].tolist()
        [1, 2, 2]
    """
    nx = import_optional("networkx", "to_networkx")
    if len(g.ntypes) != 1 or len(g.canonical_etypes) > 1:
        raise ValidationError(f"to_networkx takes a homogeneous graph; this one has node types "
                              f"{g.ntypes} and edge types {g.canonical_etypes} (convert it "
                              "with g.to_homogeneous() first)", field="g")
    n = g.num_nodes()
    out = nx.MultiDiGraph()
    nodes = {name: _feature(g.node_frame(), name, "the nodes", "node_attrs")
             for name in node_attrs}
    out.add_nodes_from(range(n))
    for name, col in nodes.items():
        nx.set_node_attributes(out, dict(zip(range(n), col.tolist() if col.ndim == 1
                                             else list(col), strict=True)), name)
    if not g.canonical_etypes:
        if edge_attrs:
            raise ValidationError("edge_attrs: the graph has no edge type", field="edge_attrs")
        return out
    src, dst = g.edges()
    cols = {name: _feature(g.edge_frame(), name, "the edges", "edge_attrs")
            for name in edge_attrs}
    rows = {name: (c.tolist() if c.ndim == 1 else list(c)) for name, c in cols.items()}
    out.add_edges_from((u, v, {name: r[e] for name, r in rows.items()})
                       for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)))
    return out


_SCIPY_FORMATS = ("csr", "csc", "coo")


def to_scipy(g: Graph, *, etype: Any = None, weight: str | None = None,
             fmt: str = "csr") -> Any:
    """The adjacency of one edge type as a SciPy sparse array (``A[u, v]``: edges u -> v;
    the inverse of :func:`from_scipy`).

    Args:
        g: A graph.
        etype: The edge type (None: the graph's only one).  The shape is
            ``(num_nodes(src type), num_nodes(dst type))``.
        weight: A dense 1-D numeric edge feature as the values; None: 1 per edge (int64).
        fmt: ``"coo"`` keeps every edge as one entry in edge-ID order, parallel edges
            included, so ``from_scipy(to_scipy(g, fmt="coo"))`` gives ``g``'s edges back in
            order; ``"csr"`` / ``"csc"`` sum parallel edges into one entry (SciPy's rule).

    Returns:
        ``scipy.sparse.csr_array``, ``csc_array`` or ``coo_array``.

    Raises:
        ValidationError: an unknown ``fmt`` or edge type, several edge types and no
            ``etype``, or a ``weight`` that is missing, Ragged or not 1-D numeric.

    Example:
        >>> import graphshard as gs
        >>> g = gs.graph(([0, 1, 1], [1, 2, 2]))
        >>> to_scipy(g).toarray().tolist()
        [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
        >>> from_scipy(to_scipy(g, fmt="coo"), weight=None).edges()[1].tolist()
        [1, 2, 2]
    """
    check_choice(fmt, _SCIPY_FORMATS, "fmt")
    if etype is None and not g.canonical_etypes:
        raise ValidationError("the graph has no edge type", field="etype")
    et = g.to_canonical_etype(etype)
    src, dst = g.edges(etype=et)
    if weight is None:
        data = np.ones(len(src), dtype=np.int64)
    else:
        data = _feature(g.edges[et].data, weight, f"edge type {et}", "weight")
        if data.ndim != 1 or not (np.issubdtype(data.dtype, np.number)
                                  or data.dtype == np.bool_):
            raise ValidationError(f"weight: feature {weight!r} of edge type {et} must be 1-D "
                                  f"numeric, got dtype {data.dtype} and shape {data.shape}",
                                  field="weight", value=weight)
    mat = sp.coo_array((data, (src, dst)), shape=(g.num_nodes(et[0]), g.num_nodes(et[2])))
    return mat if fmt == "coo" else mat.asformat(fmt)
