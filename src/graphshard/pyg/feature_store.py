"""PyG ``FeatureStore`` over a graphshard store: feature rows by type, name and index.

A tensor is addressed as PyG does, ``(group_name, attr_name, index)``: the group is a node
type (None for a graph with one node type) or a canonical edge type tuple, the index per-type
node or edge IDs (a tensor, an array, a slice, or None for all rows).  Reads go through the
store protocol, so a :class:`~graphshard.distributed.DistGraph` answers each feature with one
request per graph server.  Names can be mapped, so that a model reads ``x`` and ``y`` while the
partition stores ``feat`` and ``label``.

Example:
    >>> import numpy as np, torch, graphshard as gs
    >>> g = gs.graph(([0, 1], [1, 2]))
    >>> g.ndata["feat"] = np.eye(3, dtype=np.float32)
    >>> fs = FeatureStore(g, node_attrs={"x": "feat"})
    >>> fs["_N", "x", torch.tensor([2, 0])].tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch_geometric.data import FeatureStore as _PygFeatureStore
from torch_geometric.data import TensorAttr

from ..errors import ValidationError, check_choice
from ..graph import Graph
from ..ragged import Ragged
from ..store import FeatureSchema, as_store, feature_key
from ..typing import EdgeType
from .naming import is_homogeneous

__all__ = ["FeatureStore"]

#: torch layouts a sparse feature can be handed out in
SPARSE_LAYOUTS = ("sparse_csr", "sparse_coo", "dense")


class FeatureStore(_PygFeatureStore):
    """The features of a Graph or GraphStore (a DistGraph) as a PyG ``FeatureStore``.

    Args:
        store: A :class:`~graphshard.graph.Graph` or any GraphStore that lists its features
            (:class:`~graphshard.store.FeatureSchema`: the local store and DistGraph do).
        node_attrs: Node features PyG's loaders fetch for every sampled node: None for all,
            a list of names, or ``{pyg_name: stored_name}`` to rename (``{"x": "feat"}``).
            Applied to every node type that has the stored feature.
        sparse_layout: How a sparse feature is handed to torch: ``"dense"`` (the default:
            what PyG's models take), ``"sparse_csr"`` or ``"sparse_coo"`` (for a model
            written for sparse inputs; GraphSAGE's ``index_select`` refuses them).

    Variable-length (ragged) features come back as torch nested tensors (jagged layout).
    Writes go to a local Graph only (whole columns); a DistGraph is read-only here.
    """

    def __init__(self, store: Any, *, node_attrs: Sequence[str] | Mapping[str, str] | None = None,
                 sparse_layout: str = "dense") -> None:
        super().__init__()
        self.store: Any = as_store(store)
        if not isinstance(self.store, FeatureSchema):
            raise ValidationError(f"{type(self.store).__name__} does not list its features "
                                  "(feature_schema); the PyG backend needs a store that does",
                                  field="store")
        check_choice(sparse_layout, SPARSE_LAYOUTS, "sparse_layout")
        self.sparse_layout = sparse_layout
        self._schema = {k: self.store.feature_schema(k) for k in ("node", "edge")}
        schema = self._schema["node"]
        stored = sorted({key.split("/", 1)[1] for key in schema})
        if node_attrs is None:
            names = {n: n for n in stored}
        elif isinstance(node_attrs, Mapping):
            names = {str(k): str(v) for k, v in node_attrs.items()}
        else:
            names = {str(n): str(n) for n in node_attrs}
        unknown = sorted(set(names.values()) - set(stored))
        if unknown:
            raise ValidationError(f"node_attrs: no node feature {unknown[0]!r}; node features "
                                  f"are {stored}", field="node_attrs", value=unknown[0])
        self._names = names
        # id(node tensor) -> (that tensor, ntype, {stored name: rows}); see serving()
        self._ready: dict[int, tuple[Any, str, dict[str, Any]]] = {}

    # ----- addressing -----------------------------------------------------------------------
    def _target(self, group: Any) -> tuple[str, str | EdgeType]:
        """``("node", ntype)`` or ``("edge", canonical etype)`` of a PyG group name."""
        s = self.store
        if group is None:
            if len(s.ntypes) != 1:
                raise ValidationError(f"group_name None needs a graph with one node type; node "
                                      f"types are {s.ntypes}", field="group_name")
            return "node", s.ntypes[0]
        if isinstance(group, str) and group in s.ntypes:
            return "node", group
        if isinstance(group, (tuple, list)) and len(group) == 3:
            return "edge", s.to_canonical_etype(tuple(group))
        raise ValidationError(f"unknown group {group!r}: node types are {s.ntypes}, edge types "
                              f"{s.canonical_etypes}", field="group_name", value=group)

    def _stored_name(self, kind: str, name: str) -> str:
        return self._names.get(name, name) if kind == "node" else name

    def _count(self, kind: str, t: Any) -> int:
        return int(self.store.num_nodes(t) if kind == "node" else self.store.num_edges(t))

    def _ids(self, index: Any, n: int) -> tuple[np.ndarray, bool]:
        """int64 IDs of a PyG index, and whether it was one scalar."""
        if index is None:
            return np.arange(n, dtype=np.int64), False
        if isinstance(index, slice):
            return np.arange(n, dtype=np.int64)[index], False
        if isinstance(index, torch.Tensor):
            index = index.detach().cpu().numpy()
        arr = np.asarray(index)
        if arr.dtype == np.bool_:
            if arr.shape != (n,):
                raise ValidationError(f"a boolean index needs {n} entries, got {arr.shape}",
                                      field="index")
            return np.flatnonzero(arr).astype(np.int64), False
        if arr.dtype.kind not in "iu":
            raise ValidationError(f"index must hold integer IDs, got dtype {arr.dtype}",
                                  field="index")
        return np.atleast_1d(arr).astype(np.int64, copy=False).reshape(-1), arr.ndim == 0

    # ----- reads ------------------------------------------------------------------------------
    def _get_tensor(self, attr: TensorAttr) -> Any:
        kind, t = self._target(attr.group_name)
        name = self._stored_name(kind, str(attr.attr_name))
        key = feature_key(t, name)
        if key not in self._schema[kind]:
            raise KeyError(f"no {kind} feature {name!r} for {t!r}")
        ready = self._ready.get(id(attr.index)) if kind == "node" else None
        if ready is not None and ready[0] is attr.index and ready[1] == t and name in ready[2]:
            return self._to_torch(ready[2][name])
        ids, scalar = self._ids(attr.index, self._count(kind, t))
        rows = (self.store.node_features(t, name, ids) if kind == "node"
                else self.store.edge_features(t, name, ids))
        out = self._to_torch(rows)
        return out[0] if scalar else out

    def _multi_get_tensor(self, attrs: list[TensorAttr]) -> list[Any]:
        return [self._get_tensor(attr) for attr in attrs]

    @contextmanager
    def serving(self, node: Any, rows: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
        """While open, node-feature reads indexed by the very tensor ``node`` (a sampler
        output's node IDs; ``{ntype: tensor}`` for several types) are answered from ``rows``
        (``{stored feature name: {ntype: rows of those nodes}}``) instead of the store.

        :class:`~graphshard.pyg.PrefetchLoader` fetches a batch's features in its sampling
        calls and serves them to PyG's own feature filtering this way: PyG indexes the
        features by the sampler output's ``node`` tensor itself.  Any other read goes to the
        store as usual.

        Example:
            >>> import numpy as np, torch, graphshard as gs
            >>> g = gs.graph(([0, 1], [1, 2]))
            >>> g.ndata["feat"] = np.eye(3, dtype=np.float32)
            >>> fs = FeatureStore(g, node_attrs={"x": "feat"})
            >>> node = torch.tensor([2])
            >>> with fs.serving(node, {"feat": {"_N": np.full((1, 3), 7, np.float32)}}):
            ...     fs["_N", "x", node].tolist(), fs["_N", "x", torch.tensor([2])].tolist()
            ([[7.0, 7.0, 7.0]], [[0.0, 0.0, 1.0]])
        """
        if isinstance(node, torch.Tensor):
            node = {self._target(None)[1]: node}
        keys = []
        for t, tensor in node.items():
            keys.append(id(tensor))
            self._ready[id(tensor)] = (tensor, t, {name: by_type[t] for name, by_type in
                                                   rows.items() if t in by_type})
        try:
            yield
        finally:
            for k in keys:
                self._ready.pop(k, None)

    def _to_torch(self, rows: Any) -> Any:
        if isinstance(rows, Ragged):
            values = torch.from_numpy(np.array(rows.values))
            offsets = torch.from_numpy(np.array(rows.offsets))
            return torch.nested.nested_tensor_from_jagged(values, offsets)
        if hasattr(rows, "num_cols") and hasattr(rows, "to_torch"):  # sparse rows
            return rows.to_torch(layout=self.sparse_layout)
        arr = np.asarray(rows)
        return torch.from_numpy(arr if arr.flags.writeable else arr.copy())

    def _get_tensor_size(self, attr: TensorAttr) -> tuple[int, ...] | None:
        kind, t = self._target(attr.group_name)
        name = self._stored_name(kind, str(attr.attr_name))
        info = self._schema[kind].get(feature_key(t, name))
        if info is None:
            return None
        n = self._count(kind, t)
        shape = info[0]
        return (n,) if shape is None else (n, *shape)

    def get_all_tensor_attrs(self) -> list[TensorAttr]:
        """The node features PyG's loaders fetch for sampled nodes (see ``node_attrs``).

        Edge features are readable with ``get_tensor((src, rel, dst), name, eids)`` but not
        listed: PyG's loaders would index them by node IDs."""
        schema = self._schema["node"]
        group = (lambda nt: None) if is_homogeneous(self.store) else (lambda nt: nt)
        return [TensorAttr(group(nt), pyg_name) for nt in self.store.ntypes
                for pyg_name, stored in self._names.items() if feature_key(nt, stored) in schema]

    # ----- writes -----------------------------------------------------------------------------
    def _put_tensor(self, tensor: Any, attr: TensorAttr) -> bool:
        kind, t = self._target(attr.group_name)
        graph = getattr(self.store, "graph", None)
        if not isinstance(graph, Graph):
            raise ValidationError(f"{type(self.store).__name__} is read-only through the PyG "
                                  "backend; write features before partitioning",
                                  field="put_tensor")
        if attr.index is not None:
            raise ValidationError("put_tensor writes whole columns (index None)", field="index")
        frame = graph.node_frame(t) if kind == "node" else graph.edge_frame(t)  # type: ignore
        frame[self._stored_name(kind, str(attr.attr_name))] = tensor
        clear = getattr(self.store, "clear_cache", None)
        if clear is not None:
            clear()
        self._schema[kind] = self.store.feature_schema(kind)
        return True

    def _remove_tensor(self, attr: TensorAttr) -> bool:
        kind, t = self._target(attr.group_name)
        graph = getattr(self.store, "graph", None)
        if not isinstance(graph, Graph):
            raise ValidationError(f"{type(self.store).__name__} is read-only through the PyG "
                                  "backend", field="remove_tensor")
        frame = graph.node_frame(t) if kind == "node" else graph.edge_frame(t)  # type: ignore
        name = self._stored_name(kind, str(attr.attr_name))
        if name not in frame:
            return False
        del frame[name]
        self._schema[kind] = self.store.feature_schema(kind)
        return True

    def __repr__(self) -> str:
        return f"FeatureStore({self.store!r}, node_attrs={self._names})"
