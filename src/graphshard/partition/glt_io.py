"""Import GraphLearn-for-PyTorch's partition folders into our format.

:func:`import_glt` reads a folder written by ``graphlearn_torch``'s partitioners
(``PartitionerBase.partition``: layout in :mod:`graphshard.partition.glt_layout`), checks
that its files agree, and partitions the graph it describes with GLT's node partition book
as the assignment through our own steps, as :func:`~graphshard.partition.pyg_io.import_pyg`
does: the result is an ordinary graphshard partition whose ``orig_id`` and ``orig_ids``
files hold GLT's per-type IDs.  Needs ``torch``, imported only when called.

Nothing in the folder is unpickled freely: ``.pt`` files go through
``torch.load(..., weights_only=True)``; ``META`` through an unpickler that resolves no global
name; ``feats.pkl`` / ``ids.pkl`` through one that resolves only the three names a pickled
tensor uses.  Every file is read and checked before anything is written.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import PartitionNotFoundError
from ..graph import Graph, heterograph
from ..storage import files as _files
from ..typing import EdgeType, IdArray
from .build import build_partitions
from .config import PartitionConfig, read_config
from .glt_layout import feature_dir, graph_dir, pb_file, read_meta, stream_array
from .pyg_assemble import fill_rows
from .pyg_io import load_pt
from .pyg_layout import PyGMeta, Rows, fail, id_array, tensor_array, type_file_name

__all__ = ["import_glt"]

log = logging.getLogger(__name__)

_ANY_ID = np.iinfo(np.int64).max  # bound of edge IDs before the count is known


@dataclass(frozen=True)
class _Folder:
    """The folder being read: its root, META's types, and the path checks."""

    root: Path
    meta: PyGMeta
    torch: Any

    def member(self, rel: str) -> Path:
        """A path of the folder, which must stay inside it (links resolved)."""
        return _files.path_inside(self.root, rel, field=rel, path=self.root / "META")

    def required(self, rel: str, why: str) -> Path:
        path = self.member(rel)
        if not path.exists():
            raise PartitionNotFoundError(f"{path}: missing ({why})", path=str(path),
                                         field=rel)
        return path

    def load(self, path: Path) -> Any:
        return load_pt(self.torch, path)


@dataclass(frozen=True)
class _Piece:
    """One file set of an edge type's edges: a part's, or the cached whole graph's."""

    part: int | None
    src: IdArray
    dst: IdArray
    eid: IdArray
    weight: np.ndarray | None
    where: Path


def _read_pieces(fo: _Folder, et: EdgeType, num_nodes: dict[str, int], num_edges: int | None,
                 edge_pb: IdArray | None, cached: bool) -> list[_Piece]:
    """The edge files of ``et``: one piece per part, or the cached whole graph."""
    out = []
    for p in [None] if cached else range(fo.meta.num_parts):
        rel = graph_dir(fo.meta, et, p)
        folder = fo.required(rel, f"META names edge type {type_file_name(et)}")
        rows = fo.required(f"{rel}/rows.pt", "GLT writes rows.pt")
        src = id_array(fo.load(rows), rows, "rows", num_nodes[et[0]])
        cols = fo.required(f"{rel}/cols.pt", "GLT writes cols.pt")
        dst = id_array(fo.load(cols), cols, "cols", num_nodes[et[2]])
        eid_file = fo.member(f"{rel}/eids.pt")
        bound = _ANY_ID if num_edges is None else num_edges
        if eid_file.exists():
            eid = id_array(fo.load(eid_file), eid_file, "eids", bound)
        elif not cached:
            raise PartitionNotFoundError(f"{eid_file}: missing (GLT writes eids.pt in every "
                                         "part)", path=str(eid_file), field="eids.pt")
        elif edge_pb is not None:  # GLT's cache: the parts' edges in turn, each in ID order
            eid = np.argsort(edge_pb, kind="stable").astype(np.int64)
        else:
            eid = np.arange(len(src), dtype=np.int64)
        weight = None
        wfile = fo.member(f"{rel}/weights.pt")
        if wfile.exists():
            weight = tensor_array(fo.load(wfile), wfile, "weights")
            if weight.ndim != 1:
                raise fail(wfile, "weights", f"must be 1-D, got shape {weight.shape}")
        for name, arr in (("cols", dst), ("eids", eid), ("weights", weight)):
            if arr is not None and len(arr) != len(src):
                raise fail(folder / f"{name}.pt", name, f"has {len(arr)} entries but "
                           f"rows.pt {len(src)}")
        out.append(_Piece(p, src, dst, eid, weight, folder))
    return out


@dataclass(frozen=True)
class _Edges:
    """An edge type's edges in GLT's edge ID order, with the part of each."""

    src: IdArray
    dst: IdArray
    weight: np.ndarray | None
    owner: IdArray | None
    by_src: bool
    by_dst: bool


def _place(fo: _Folder, et: EdgeType, pieces: list[_Piece], node_pb: dict[str, IdArray],
           edge_pb: IdArray | None) -> _Edges:
    """Check that every edge is given once, in the part its partition book names and its
    source's or destination's part, and put the edges in edge ID order."""
    m = len(edge_pb) if edge_pb is not None else sum(len(pc.src) for pc in pieces)
    src, dst, seen = np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64)
    owner = edge_pb if edge_pb is not None or pieces[0].part is None \
        else np.zeros(m, np.int64)
    weights = [pc.weight is not None for pc in pieces]
    if any(weights) and not all(weights):
        gone = pieces[weights.index(False)].where / "weights.pt"
        raise PartitionNotFoundError(f"{gone}: missing (another part has weights.pt)",
                                     path=str(gone), field="weights.pt")
    first = pieces[0].weight
    weight = np.zeros(m, first.dtype) if first is not None else None
    by_src = by_dst = owner is not None
    for pc in pieces:
        bad = np.flatnonzero(pc.eid >= m)
        if bad.size:
            raise fail(pc.where / "eids.pt", "eids", f"[{bad[0]}] = {pc.eid[bad[0]]} is "
                       f"not in [0, {m})")
        if owner is not None:
            part = np.full(len(pc.eid), pc.part) if pc.part is not None else owner[pc.eid]
            if edge_pb is None:
                owner[pc.eid] = part
            else:
                bad = np.flatnonzero(edge_pb[pc.eid] != part)
                if bad.size:
                    raise fail(pc.where / "eids.pt", "eids", f"edge {pc.eid[bad[0]]} is in "
                               f"part {pc.part}, but {pb_file(fo.meta, 'edge', et)} puts it "
                               f"in part {edge_pb[pc.eid[bad[0]]]}")
            by_src &= bool(np.array_equal(node_pb[et[0]][pc.src], part))
            by_dst &= bool(np.array_equal(node_pb[et[2]][pc.dst], part))
        src[pc.eid], dst[pc.eid] = pc.src, pc.dst
        if weight is not None and pc.weight is not None:
            weight[pc.eid] = pc.weight
        seen += np.bincount(pc.eid, minlength=m)
    missing = np.flatnonzero(seen != 1)
    if missing.size:
        raise fail(fo.root / graph_dir(fo.meta, et, None if pieces[0].part is None else 0),
                   "eids", f"edge {missing[0]} of {type_file_name(et)} is given "
                   f"{seen[missing[0]]} times over the parts; expected exactly once")
    return _Edges(src, dst, weight, owner, by_src, by_dst)


def _strategy(fo: _Folder, edges: dict[EdgeType, _Edges], node_pb: dict[str, IdArray]
              ) -> str:
    """GLT's ``edge_assign_strategy`` the folder follows, one for every edge type:
    ``"by_src"``, ``"by_dst"``, ``"either"`` (every edge inside one part) or ``"unknown"``
    (a cached graph without edge partition books)."""
    known = [(et, e, e.owner) for et, e in edges.items() if e.owner is not None]
    by_src, by_dst = all(e.by_src for _, e, _ in known), all(e.by_dst for _, e, _ in known)
    if not known:
        return "unknown"
    if by_src or by_dst:
        return "either" if by_src and by_dst else "by_src" if by_src else "by_dst"
    et, e, own = next(k for k in known if not k[1].by_src)
    i = int(np.flatnonzero(node_pb[et[0]][e.src] != own)[0])
    j_et, j_e, j_own = next(k for k in known if not k[1].by_dst)
    j = int(np.flatnonzero(node_pb[j_et[2]][j_e.dst] != j_own)[0])
    raise fail(fo.root, "edge_pb", f"edges are neither all in their source's part "
               f"(edge {i} of {type_file_name(et)} is in part {own[i]}, its source in "
               f"{node_pb[et[0]][e.src[i]]}) nor all in their destination's (edge {j} of "
               f"{type_file_name(j_et)} is in part {j_own[j]}, its destination in "
               f"{node_pb[j_et[2]][j_e.dst[j]]}); GLT places them by one rule")


def _add_features(fo: _Folder, g: Graph, kind: str, name: str | EdgeType, n: int,
                  owner: IdArray | None) -> None:
    """A type's ``node_feat`` / ``edge_feat`` rows (column ``feat``), checked against the
    owners and against every part's cached copies."""
    pieces, caches = [], []
    for p in range(fo.meta.num_parts):
        rel = feature_dir(fo.meta, kind, name, p)
        if not fo.member(rel).is_dir():
            continue
        ffile = fo.required(f"{rel}/feats.pkl", f"{rel} is there")
        ifile = fo.required(f"{rel}/ids.pkl", f"{rel} is there")
        feats = stream_array(fo.torch, ffile)
        ids = id_array(stream_array(fo.torch, ifile), ifile, "ids", n)
        if len(ids) != len(feats):
            raise fail(ffile, "feats", f"has {len(feats)} rows but ids.pkl {len(ids)}")
        pieces.append((p, Rows(ids, {"feat": feats}), ffile))
        cfile, cids = fo.member(f"{rel}/cache_feats.pt"), fo.member(f"{rel}/cache_ids.pt")
        if cfile.exists() != cids.exists():
            gone = cids if cfile.exists() else cfile
            raise PartitionNotFoundError(f"{gone}: missing (GLT writes cache_feats.pt and "
                                         "cache_ids.pt together)", path=str(gone),
                                         field=gone.name)
        if cfile.exists():
            caches.append((tensor_array(fo.load(cfile), cfile, "cache_feats"),
                           id_array(fo.load(cids), cids, "cache_ids", n), cfile))
    if not pieces:
        return
    if owner is None:
        raise PartitionNotFoundError(f"{fo.root / pb_file(fo.meta, kind, name)}: missing "
                                     f"(GLT writes it with {kind} features)",
                                     path=str(fo.root / pb_file(fo.meta, kind, name)),
                                     field=pb_file(fo.meta, kind, name))
    label = name if isinstance(name, str) else type_file_name(name)
    full = fill_rows(kind, label, n, pieces, "feat", owner, root=fo.root)
    for feats, ids, where in caches:
        if len(feats) != len(ids) or not np.array_equal(
                feats, full[ids], equal_nan=feats.dtype.kind in "fc"):
            raise fail(where, "cache_feats", f"has {len(feats)} rows that are not the "
                       f"owners' rows of cache_ids.pt's {len(ids)} {kind}s")
    if isinstance(name, str):
        g.nodes[name].data["feat"] = full
    else:
        g.edges[name].data["feat"] = full


def import_glt(root: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
               graph_name: str | None = None) -> PartitionConfig:
    """Read GLT's partition folder (``graphlearn_torch``'s partitioners' output) into our
    format in ``out_dir``; returns the written config.

    GLT's node partition book is the assignment, node for node; edges go with their
    destination as in every graphshard partition (GLT's default ``by_src`` puts them with
    their source: the config's ``params["glt_edge_assign"]`` records which GLT used).  IDs
    are reshuffled into our ranges; ``orig_id`` (and the ``orig_ids`` files) keep GLT's.
    Features: GLT's node and edge features as ``feat``, its edge weights as ``weight``.

    Args:
        root: The folder holding ``META`` (or that file).
        out_dir: Folder of our partitions: new, empty, or an earlier output of ours.
        graph_name: Name of our config (default: the folder's name).

    Raises:
        MissingDependencyError: ``torch`` is not installed.
        PartitionNotFoundError: ``META``, a partition book, a ``part<i>`` folder or one of
            its files is missing.
        FormatError: a file that is not what GLT writes (a pickle of anything but plain
            containers and tensors, wrong shapes, IDs out of range) or files that disagree
            (an edge in two parts or in a part its book does not name, a feature row given
            by a part that does not own it, cached rows unlike their owners'), naming the
            file and field.  Nothing is written then.
        ConfigError: ``out_dir`` is not new, empty or an earlier output of ours.

    Example:
        >>> import pickle, tempfile, torch
        >>> root = Path(tempfile.mkdtemp()) / "ring"
        >>> for p, (rows, cols, eids) in enumerate([([0, 2], [1, 3], [0, 2]),
        ...                                         ([1, 3], [2, 0], [1, 3])]):
        ...     (root / f"part{p}/graph").mkdir(parents=True)
        ...     for key, val in (("rows", rows), ("cols", cols), ("eids", eids)):
        ...         torch.save(torch.tensor(val), root / f"part{p}/graph/{key}.pt")
        >>> torch.save(torch.tensor([0, 1, 0, 1]), root / "node_pb.pt")
        >>> torch.save(torch.tensor([0, 1, 0, 1]), root / "edge_pb.pt")
        >>> _ = (root / "META").write_bytes(pickle.dumps({"num_parts": 2,
        ...     "data_cls": "homo", "node_types": None, "edge_types": None}))
        >>> cfg = import_glt(root, root.parent / "ours")
        >>> cfg.node_map, cfg.params["glt_edge_assign"]
        ({'_N': [[0, 2], [2, 4]]}, 'by_src')
    """
    torch = import_optional("torch", "import of GLT's partition folder")
    root = Path(root)
    if root.name == "META" and root.is_file():
        root = root.parent
    fo = _Folder(root, read_meta(root / "META"), torch)
    meta = fo.meta
    name = graph_name if graph_name is not None else root.resolve().name
    _files.check_path_name(name, field="graph_name")
    node_pb = {}
    for t in meta.ntypes:
        file = fo.required(pb_file(meta, "node", t), "GLT writes every node type's book")
        node_pb[t] = id_array(fo.load(file), file, "node_pb", meta.num_parts)
    edge_pb: dict[EdgeType, IdArray | None] = {}
    for et in meta.etypes:
        file = fo.member(pb_file(meta, "edge", et))
        edge_pb[et] = id_array(fo.load(file), file, "edge_pb", meta.num_parts) \
            if file.exists() else None
    for p in range(meta.num_parts):
        fo.required(f"part{p}", "META's num_parts")
    cached = fo.member("graph").is_dir() and not fo.member("part0/graph").exists()
    num_nodes = {t: len(a) for t, a in node_pb.items()}
    edges = {}
    for et in meta.etypes:
        pb = edge_pb[et]
        pieces = _read_pieces(fo, et, num_nodes, None if pb is None else len(pb), pb, cached)
        edges[et] = _place(fo, et, pieces, node_pb, pb)
    strategy = _strategy(fo, edges, node_pb)
    g = heterograph({et: (e.src, e.dst) for et, e in edges.items()}, num_nodes)
    for et, e in edges.items():
        if e.weight is not None:
            g.edges[et].data["weight"] = e.weight
        _add_features(fo, g, "edge", et, len(e.src), e.owner)
    for t in meta.ntypes:
        _add_features(fo, g, "node", t, num_nodes[t], node_pb[t])
    log.info("read GLT's %d parts of %d nodes and %d edges from %s", meta.num_parts,
             g.num_nodes(), g.num_edges(), root)
    result = build_partitions(g, name, meta.num_parts, out_dir, assignment=node_pb,
                              save_orig_ids=True,
                              extra_params={"imported_from": "glt", "source": root.name,
                                            "glt_edge_assign": strategy,
                                            "glt_graph_caching": cached})
    return read_config(result.config_path)
