"""GraphLearn-for-PyTorch's partition folder, read safely into NumPy arrays in per-type IDs.

GLT (``graphlearn_torch``; read at alibaba/graphlearn-for-pytorch commit ``26fe3d4e``, whose
``graphlearn_torch/python/partition/base.py`` is the one in the 0.2.4 wheel) writes, from
``PartitionerBase.partition`` (``save_meta``, ``save_node_pb``, ``save_edge_pb``,
``save_graph_partition``, ``save_graph_cache``, ``save_feature_partition*``):

- ``META``: ``pickle.dump`` of ``{"num_parts": int, "data_cls": "homo" | "hetero",
  "node_types": [str] | None, "edge_types": [(src, rel, dst)] | None}``: plain containers
  only, read here by an unpickler that resolves no global name at all.
- the part of every node and edge (``torch.save`` of an int64 tensor): ``node_pb.pt`` /
  ``edge_pb.pt``, or per type ``node_pb/<ntype>.pt`` / ``edge_pb/<src>__<rel>__<dst>.pt``.
- ``part<i>/graph/[<etype>/]``: ``rows.pt``, ``cols.pt`` (source and destination, per-type
  node IDs), ``eids.pt`` (per-type edge IDs) and ``weights.pt`` if the graph has edge
  weights.  GLT puts an edge in its source's part (``edge_assign_strategy="by_src"``, the
  default) or its destination's (``"by_dst"``); META does not say which.  With
  ``partition(graph_caching=True)`` the whole graph is in ``graph/[<etype>/]`` instead,
  the parts' edges one after the other, each part's in edge ID order; ``eids.pt`` and the
  edge partition book are only written with edge features (and a homogeneous graph's
  ``eids.pt`` never: GLT passes ``with_edge_feat`` where the edge type goes).
- ``part<i>/node_feat/[<ntype>/]`` and ``part<i>/edge_feat/[<etype>/]``: ``feats.pkl`` and
  ``ids.pkl``, each a run of ``pickle.dump``s of a tensor appended to the file (a chunk of
  the owned rows and their per-type IDs), and ``cache_feats.pt`` / ``cache_ids.pt``, copies
  of other rows a part caches (GLT's ``FrequencyPartitioner``).

A plain pickle of a tensor calls ``torch._utils._rebuild_tensor_v2`` on a storage from
``torch.storage._load_from_bytes`` (a legacy ``torch.save`` image) and an empty
``collections.OrderedDict``; :func:`read_tensor_stream` resolves those three names only,
the storage image through ``torch.load(..., weights_only=True)``, and refuses any other.
"""

from __future__ import annotations

import collections
import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError, PartitionNotFoundError
from ..storage import files as _files
from ..typing import EdgeType
from .pyg_layout import PyGMeta, fail, meta_from_json, tensor_array, type_file_name

__all__ = ["GLT_COMMIT", "feature_dir", "graph_dir", "pb_file", "read_meta",
           "read_tensor_stream", "stream_array"]

#: The GLT commit whose layout this module reads (``partition/base.py``).
GLT_COMMIT = "26fe3d4e050b081bc51a79dc9547f244f5d314da"

_META_LIMIT = 1 << 20  # GLT's META is a few hundred bytes; a bigger one is not GLT's


class _Restricted(pickle.Unpickler):
    """An unpickler that resolves only the global names in ``allowed`` (none by default)
    and refuses persistent IDs: plain containers, strings and numbers need neither."""

    def __init__(self, file: Any, allowed: dict[tuple[str, str], Any] | None = None) -> None:
        super().__init__(file)
        self._allowed = allowed or {}

    def find_class(self, module: str, name: str) -> Any:
        try:
            return self._allowed[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refused the global {module}.{name}") from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refused a persistent ID")


def _missing(path: Path, what: str) -> PartitionNotFoundError:
    return PartitionNotFoundError(f"{path}: missing ({what})", path=str(path),
                                  field=path.name)


def read_meta(path: Path) -> PyGMeta:
    """GLT's ``META`` pickle, unpickled with no global names allowed, checked.

    Returns the types as :class:`~graphshard.partition.pyg_layout.PyGMeta` (``_N`` and
    ``("_N", "_E", "_N")`` for a homogeneous graph).

    Raises:
        PartitionNotFoundError: no ``META``.
        FormatError: not a pickle of plain containers (any class or function in it is
            refused unbuilt), or a key missing or of the wrong kind.

    Example:
        >>> import pickle, tempfile
        >>> path = Path(tempfile.mkdtemp()) / "META"
        >>> _ = path.write_bytes(pickle.dumps({"num_parts": 2, "data_cls": "hetero",
        ...     "node_types": ["u", "i"], "edge_types": [("u", "buys", "i")]}))
        >>> read_meta(path).etypes
        [('u', 'buys', 'i')]
        >>> _ = path.write_bytes(pickle.dumps(Path("x")))
        >>> read_meta(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: ...META: not GLT's META pickle (refused the global pathlib...
    """
    if not path.is_file():
        raise _missing(path, "not a GLT partition folder?")
    size = _files.check_regular_file(path, field="META").st_size
    if size > _META_LIMIT:
        raise fail(path, "META", f"is {size} bytes; GLT's META is a small dict")
    try:
        with open(path, "rb") as f:
            obj = _Restricted(f).load()
    except Exception as exc:  # UnpicklingError, EOFError, ValueError, MemoryError, ...
        raise FormatError(f"{path}: not GLT's META pickle ({exc})"[:400], path=str(path),
                          field="META") from None
    if not isinstance(obj, dict):
        raise fail(path, "META", f"must hold a dict, got {type(obj).__name__}")
    cls = obj.get("data_cls")
    if cls not in ("homo", "hetero"):
        raise fail(path, "data_cls", f"must be 'homo' or 'hetero', got {cls!r}"[:200])
    etypes = obj.get("edge_types")
    as_json = {"num_parts": obj.get("num_parts"), "is_hetero": cls == "hetero",
               "node_types": obj.get("node_types"),
               "edge_types": [list(e) if isinstance(e, tuple) else e for e in etypes]
               if isinstance(etypes, list) else etypes}
    return meta_from_json(as_json, path)


def pb_file(meta: PyGMeta, kind: str, name: str | EdgeType) -> str:
    """A partition book's file (``kind``: ``"node"`` or ``"edge"``), relative to the root.

    Example:
        >>> meta = PyGMeta(2, True, ["a"], [("a", "r", "a")])
        >>> pb_file(meta, "edge", ("a", "r", "a"))
        'edge_pb/a__r__a.pt'
    """
    return f"{kind}_pb/{type_file_name(name)}.pt" if meta.is_hetero else f"{kind}_pb.pt"


def graph_dir(meta: PyGMeta, et: EdgeType, part: int | None) -> str:
    """An edge type's graph folder in ``part<i>/`` (``part=None``: the cached whole graph)."""
    base = "graph" if part is None else f"part{part}/graph"
    return f"{base}/{type_file_name(et)}" if meta.is_hetero else base


def feature_dir(meta: PyGMeta, kind: str, name: str | EdgeType, part: int) -> str:
    """A type's ``node_feat`` (``kind="node"``) or ``edge_feat`` folder in ``part<i>/``."""
    base = f"part{part}/{kind}_feat"
    return f"{base}/{type_file_name(name)}" if meta.is_hetero else base


def _tensor_names(torch: Any) -> dict[tuple[str, str], Any]:
    """The three names a pickled CPU tensor uses, each checking what it is given."""
    storage_cls = torch.storage.TypedStorage

    def load_from_bytes(data: Any) -> Any:
        if not isinstance(data, bytes):
            raise pickle.UnpicklingError("a tensor storage must be bytes")
        storage = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        if not isinstance(storage, storage_cls):
            raise pickle.UnpicklingError("a tensor storage image holds no storage")
        return storage

    def rebuild(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any,
                hooks: Any, *metadata: Any) -> Any:
        ints = [offset, *size, *stride] if isinstance(size, tuple) and \
            isinstance(stride, tuple) else None
        if not isinstance(storage, storage_cls) or ints is None \
                or not all(type(v) is int for v in ints) or len(size) != len(stride) \
                or not isinstance(requires_grad, bool) or hooks or len(metadata) > 1:
            raise pickle.UnpicklingError("a tensor's layout is not a plain tensor's")
        return torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False,
                                               collections.OrderedDict())

    return {("torch._utils", "_rebuild_tensor_v2"): rebuild,
            ("torch.storage", "_load_from_bytes"): load_from_bytes,
            ("collections", "OrderedDict"): collections.OrderedDict}


def read_tensor_stream(torch: Any, path: Path) -> list[Any]:
    """The tensors of GLT's ``feats.pkl`` / ``ids.pkl``: pickles appended one after another.

    Raises:
        FormatError: a pickle that is not a plain CPU tensor's (nothing else is built),
            or a truncated file, naming the file and the pickle's index.

    Example:
        >>> import pickle, tempfile, torch
        >>> path = Path(tempfile.mkdtemp()) / "ids.pkl"
        >>> with open(path, "ab") as f:
        ...     pickle.dump(torch.tensor([3, 1]), f)
        ...     pickle.dump(torch.tensor([2]), f)
        >>> read_tensor_stream(torch, path)
        [tensor([3, 1]), tensor([2])]
    """
    size = _files.check_regular_file(path, field=path.name).st_size
    names = _tensor_names(torch)
    out: list[Any] = []
    with open(path, "rb") as f:
        while f.tell() < size:
            try:
                obj = _Restricted(f, names).load()
            except Exception as exc:  # UnpicklingError, EOFError, RuntimeError, ...
                raise FormatError(f"{path}: pickle [{len(out)}] is not a plain tensor's "
                                  f"({type(exc).__name__}: {exc})"[:400], path=str(path),
                                  field=path.name) from None
            if not isinstance(obj, torch.Tensor):
                raise fail(path, f"[{len(out)}]", f"must be a tensor, got "
                           f"{type(obj).__name__}")
            out.append(obj)
    return out


def stream_array(torch: Any, path: Path) -> np.ndarray:
    """A ``feats.pkl`` / ``ids.pkl`` as one NumPy array (its chunks concatenated), every
    chunk of one dtype and row shape."""
    chunks = [tensor_array(t, path, f"[{i}]")
              for i, t in enumerate(read_tensor_stream(torch, path))]
    if not chunks:
        raise fail(path, path.name, "holds no tensor")
    for i, c in enumerate(chunks):
        if c.dtype != chunks[0].dtype or c.shape[1:] != chunks[0].shape[1:]:
            raise fail(path, f"[{i}]", f"is {c.dtype} {c.shape[1:]} rows, chunk [0] "
                       f"{chunks[0].dtype} {chunks[0].shape[1:]}")
    return np.concatenate(chunks)

