"""DistTensor: a tensor whose rows are split over the graph servers like a node or edge type.

Row ``i`` of a tensor with policy ``"node:<ntype>"`` belongs to the node of per-type ID ``i``
and lives on the server owning that node (``"edge:<etype>"`` likewise), so features and
embeddings read with the IDs a sampler returns are fetched from the same server as the
graph data.  Reads and writes group rows by owner: one call per server.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> t = DistTensor((dg.num_nodes("item"), 4), "float32", "h", graph=dg)  # doctest: +SKIP
    >>> t[[0, 1]] = np.ones((2, 4), np.float32)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import uuid
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._util.arrays import as_array, as_ids, check_id_range
from .._util.optional import import_optional
from ..errors import ValidationError
from ..typing import EdgeType
from ._rpc import Router, group_by_owner
from ._tensors import check_name
from .graph import DistGraph
from .policy import PartitionPolicy

__all__ = ["DistTensor", "as_dtype", "resolve_policy"]


def as_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a NumPy dtype, its name, or a torch dtype (``torch.float32``).

    Raises:
        ValidationError: a dtype NumPy has no equivalent of (``torch.bfloat16``), or not a
            dtype at all.

    Example:
        >>> as_dtype("float32"), as_dtype(np.int64)
        (dtype('float32'), dtype('int64'))
    """
    text = str(dtype)
    if text.startswith("torch."):  # torch dtypes print as torch.<numpy name>
        text = text[len("torch."):]
        try:
            return np.dtype(text)
        except TypeError as exc:
            raise ValidationError(f"dtype {dtype} has no NumPy equivalent; use e.g. "
                                  "torch.float32", field="dtype", value=str(dtype)) from exc
    try:
        return np.dtype(dtype)
    except TypeError as exc:
        raise ValidationError(f"dtype {dtype!r} is not a NumPy or torch dtype",
                              field="dtype", value=text) from exc


def resolve_policy(g: DistGraph, num_rows: int, policy: str | PartitionPolicy | None
                   ) -> tuple[str, Any]:
    """``("node", ntype)`` or ``("edge", canonical etype)`` from a policy (a
    :class:`PartitionPolicy` or its string), or from ``num_rows`` when ``policy`` is None
    (it must match exactly one type's count)."""
    if isinstance(policy, PartitionPolicy):
        if policy.graph is not g:
            raise ValidationError(f"part_policy {policy} belongs to another DistGraph",
                                  field="part_policy", value=str(policy))
        policy = policy.policy_str
    if policy is None:
        cands: list[tuple[str, str | EdgeType]] = [
            ("node", t) for t in g.ntypes if g.num_nodes(t) == num_rows]
        cands += [("edge", et) for et in g.canonical_etypes if g.num_edges(et) == num_rows]
        if len(cands) != 1:
            raise ValidationError(f"cannot infer the partition policy of {num_rows} rows: "
                                  f"{len(cands)} node/edge types have that many; pass "
                                  "part_policy='node:<ntype>' or 'edge:<etype>'",
                                  field="part_policy", value=num_rows)
        return cands[0]
    kind, _, type_ = str(policy).partition(":")
    if kind == "node":
        return "node", g._ntype(type_ or None)
    if kind == "edge":
        return "edge", g.to_canonical_etype(type_ or None)
    raise ValidationError(f"part_policy must be 'node[:<ntype>]' or 'edge[:<etype>]', got "
                          f"{policy!r}", field="part_policy", value=policy)


class DistTensor:
    """A distributed tensor partitioned like one node or edge type (DGL's DistTensor).

    Args:
        shape: Global shape; ``shape[0]`` is the number of nodes (edges) of the type.
        dtype: NumPy dtype (or its name) or torch dtype (``torch.float32``).  Rows read
            with ``t[ids]`` come back as torch tensors for a torch dtype (as DGL's do), as
            NumPy arrays otherwise; :meth:`read` always gives NumPy.  The attribute
            ``dtype`` is the matching NumPy dtype either way.
        name: Tensor name; an existing tensor of that name and layout is attached to.
        init_func: ``init_func(local_shape, dtype) -> array`` called once per partition
            for a new tensor (zeros when None), with ``dtype`` as given here (a torch
            dtype stays one, so DGL-style ``th.zeros(shape, dtype=dtype)`` works).
        part_policy: A :class:`~graphshard.distributed.PartitionPolicy` (from
            ``g.get_node_partition_policy(ntype)`` or ``g.get_edge_partition_policy``),
            ``"node:<ntype>"`` or ``"edge:<etype>"`` (None: inferred from ``shape[0]``).
        persistent: Keep the tensor when this object is garbage-collected (otherwise the
            tensor it created is deleted then).
        graph: The DistGraph whose servers hold the rows; may be left out when
            ``part_policy`` is a PartitionPolicy (its graph), as in DGL.

    Raises:
        ValidationError: a bad name, dtype or policy, no graph, or a same-named tensor of
            another layout.

    Example:
        >>> import torch  # doctest: +SKIP
        >>> n = dg.num_nodes("item")  # doctest: +SKIP
        >>> t = DistTensor((n, 2), torch.float32, "h", graph=dg)  # doctest: +SKIP
        >>> t[[0, 1]] = torch.ones(2, 2)  # doctest: +SKIP
        >>> t[[1, 2]]  # doctest: +SKIP
        tensor([[1., 1.],
                [0., 0.]])
        >>> t.read([1, 2]).dtype  # doctest: +SKIP
        dtype('float32')
    """

    def __init__(self, shape: Sequence[int], dtype: Any, name: str | None = None,
                 init_func: Callable[[tuple[int, ...], Any], Any] | None = None,
                 part_policy: str | PartitionPolicy | None = None, persistent: bool = False,
                 *, graph: DistGraph | None = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = as_dtype(dtype)
        # reads give torch tensors when the caller spoke torch (DGL code does)
        self._as_torch = str(dtype).startswith("torch.")
        if graph is None:
            if not isinstance(part_policy, PartitionPolicy):
                raise ValidationError("DistTensor needs graph=DistGraph, or a part_policy "
                                      "from g.get_node_partition_policy / "
                                      "g.get_edge_partition_policy", field="graph")
            graph = part_policy.graph
        self.graph = graph
        self.kind, self.type = resolve_policy(graph, self.shape[0], part_policy)
        expect = (graph.num_nodes(self.type) if self.kind == "node"
                  else graph.num_edges(self.type))
        if self.shape[0] != expect:
            raise ValidationError(f"DistTensor of shape {self.shape}: {self.kind} type "
                                  f"{self.type!r} has {expect} rows", field="shape")
        self.name = check_name(name) if name is not None else f"anon-{uuid.uuid4().hex[:12]}"
        book = graph.get_partition_book()
        parts = range(graph.num_partitions())
        sizes = [len(book.partid2nids(p, self.type) if self.kind == "node"
                     else book.partid2eids(p, self.type)) for p in parts]
        self._bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        router: Router = graph.router
        have = router.call([(p, "tensor_exists", (self.name,)) for p in parts])
        created = all(h is None for h in have)
        router.call([(p, "tensor_create", (self.name, (sizes[p], *self.shape[1:]),
                                           self.dtype.str)) for p in parts])
        if created and init_func is not None:
            router.call([(p, "tensor_write", (self.name, np.arange(sizes[p]), np.asarray(
                init_func((sizes[p], *self.shape[1:]), dtype), dtype=self.dtype)))
                for p in parts if sizes[p]])
        self.persistent = persistent
        self._finalizer = None
        if created and not persistent:
            self._finalizer = weakref.finalize(self, _delete, router, self.name,
                                               list(parts))

    @property
    def part_policy(self) -> str:
        """``"node:<ntype>"`` or ``"edge:<src:rel:dst>"``."""
        return f"{self.kind}:{self.type if self.kind == 'node' else ':'.join(self.type)}"

    def __len__(self) -> int:
        return self.shape[0]

    def _groups(self, ids: Any) -> tuple[np.ndarray, list[np.ndarray]]:
        arr = np.arange(self.shape[0])[ids] if isinstance(ids, slice) else as_ids(ids, "ids")
        check_id_range(arr, self.shape[0], f"rows of DistTensor {self.name!r}")
        owner = np.searchsorted(self._bounds[1:], arr, side="right")
        return arr, group_by_owner(owner, len(self._bounds) - 1)

    def __getitem__(self, ids: Any) -> Any:
        """Rows ``ids``: a new torch tensor if the tensor was created with a torch dtype (it
        shares the memory of the NumPy rows :meth:`read` gives: no copy), else a new NumPy
        array.

        Raises:
            ValidationError: IDs that are not 1-D integers in ``[0, len(self))``.
        """
        rows = self.read(ids)
        if not self._as_torch:
            return rows
        return import_optional("torch", "DistTensor with a torch dtype").from_numpy(rows)

    def read(self, ids: Any) -> np.ndarray:
        """Rows ``ids`` as a new, writable NumPy array of :attr:`dtype`, whatever dtype the
        tensor was created with (``ids``: a slice, or integer IDs as a list, NumPy array or
        torch tensor).

        Raises:
            ValidationError: IDs that are not 1-D integers in ``[0, len(self))``.
        """
        arr, groups = self._groups(ids)
        todo = [(p, idx) for p, idx in enumerate(groups) if len(idx)]
        res = self.graph.router.call([(p, "tensor_read", (self.name, arr[idx] - self._bounds[p]))
                                      for p, idx in todo])
        out = np.empty((len(arr), *self.shape[1:]), dtype=self.dtype)
        for (_, idx), rows in zip(todo, res, strict=True):
            out[idx] = rows
        return out

    def __setitem__(self, ids: Any, values: Any) -> None:
        """Write rows ``ids`` (``values`` broadcast to ``(len(ids), *shape[1:])``)."""
        arr, groups = self._groups(ids)
        vals = np.broadcast_to(as_array(values).astype(self.dtype, copy=False),
                               (len(arr), *self.shape[1:]))
        self.graph.router.call([(p, "tensor_write", (self.name, arr[idx] - self._bounds[p],
                                                     np.ascontiguousarray(vals[idx])))
                                for p, idx in enumerate(groups) if len(idx)])

    def apply_sparse(self, ids: Any, grads: Any, optimizer: str, lr: float,
                     state: str | None = None, eps: float = 1e-10) -> None:
        """One sparse optimizer step on rows ``ids`` on their servers (duplicates summed)."""
        arr, groups = self._groups(ids)
        g = np.asarray(grads)
        if g.shape != (len(arr), *self.shape[1:]):
            raise ValidationError(f"gradients of shape {g.shape} for {len(arr)} rows of "
                                  f"{self.shape}", field="grads")
        self.graph.router.call([(p, "tensor_update", (self.name, arr[idx] - self._bounds[p],
                                                      np.ascontiguousarray(g[idx]), optimizer,
                                                      float(lr), state, float(eps)))
                                for p, idx in enumerate(groups) if len(idx)])

    def delete(self) -> None:
        """Delete the tensor on every server."""
        if self._finalizer is not None:
            self._finalizer.detach()
        _delete(self.graph.router, self.name, list(range(self.graph.num_partitions())))

    def __repr__(self) -> str:
        return (f"DistTensor({self.name!r}, shape={self.shape}, dtype={self.dtype}, "
                f"policy={self.part_policy!r})")


def _delete(router: Router, name: str, parts: list[int]) -> None:
    if not router._ray.is_initialized():  # at interpreter exit: never start a new Ray
        return
    with contextlib.suppress(Exception):
        router.call([(p, "tensor_delete", (name,)) for p in parts], timeout=2.0)
