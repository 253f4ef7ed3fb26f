"""GraphLearn-for-PyTorch's partition folders, imported into our format.

``graphlearn_torch`` ships only a CUDA build, so the folders here are written by
:func:`write_glt` exactly as GLT's ``PartitionerBase.partition`` writes them
(graphlearn_torch/python/partition/base.py at alibaba/graphlearn-for-pytorch commit
26fe3d4e050b081bc51a79dc9547f244f5d314da, the same file as in the 0.2.4 wheel):
``save_meta`` (``pickle.dump`` of a dict, HIGHEST_PROTOCOL), ``save_node_pb`` /
``save_edge_pb`` (``torch.save`` of an int64 tensor), ``save_graph_partition`` and
``save_graph_cache`` (``torch.save`` of rows, cols, eids, weights), and the feature chunks
(``utils/common.py`` ``append_tensor_to_file``: ``pickle.dump`` of each tensor appended to
``feats.pkl`` / ``ids.pkl``).  Edges are placed as ``_partition_graph`` does (by source or
destination; each part's in edge ID order).  The same writer, run on the node books of
folders written by GLT's own ``RandomPartitioner`` and ``FrequencyPartitioner`` (the wheel's
pure-Python partition package), gave files holding the same tensors as GLT's.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from graphshard.cli import main
from graphshard.errors import FormatError, PartitionNotFoundError
from graphshard.partition import load_partition_data, read_config
from graphshard.partition.glt_io import import_glt

torch = pytest.importorskip("torch")

HOMO = ("_N", "_E", "_N")


def _dump(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(torch.from_numpy(np.ascontiguousarray(obj)), path)


def _append(path: Path, arr: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        pickle.dump(torch.from_numpy(np.ascontiguousarray(arr)), f)


def write_glt(root: Path, graph: dict, *, num_parts: int, by: str = "by_src",
              chunk: int = 4, caching: bool = False, cache: dict | None = None) -> None:
    """``graph``: ``nodes`` {ntype: node_pb}, ``edges`` {etype: (src, dst)}, optional
    ``nfeat`` {ntype: rows}, ``efeat`` {etype: rows}, ``weight`` {etype: 1-D}; types
    ``"_N"`` / ``HOMO`` alone write a homogeneous folder.  ``cache``: {ntype: {part:
    ids}} cached node rows (FrequencyPartitioner)."""
    hetero = list(graph["nodes"]) != ["_N"]
    sub = (lambda t: t if isinstance(t, str) else "__".join(t)) if hetero \
        else (lambda t: "")
    for t, pb in graph["nodes"].items():
        _dump(root / ("node_pb" if hetero else "") / f"{sub(t) or 'node_pb'}.pt", pb)
        for p in range(num_parts):
            ids = np.flatnonzero(pb == p)
            folder = root / f"part{p}" / "node_feat" / sub(t)
            if t in graph.get("nfeat", {}):
                for lo in range(0, len(ids), chunk):
                    _append(folder / "feats.pkl", graph["nfeat"][t][ids[lo:lo + chunk]])
                    _append(folder / "ids.pkl", ids[lo:lo + chunk])
            if p in (cache or {}).get(t, {}):
                _dump(folder / "cache_feats.pt", graph["nfeat"][t][cache[t][p]])
                _dump(folder / "cache_ids.pt", cache[t][p])
    for et, (src, dst) in graph["edges"].items():
        owner = graph["nodes"][et[0] if by == "by_src" else et[2]][
            src if by == "by_src" else dst]
        feat, weight = graph.get("efeat", {}).get(et), graph.get("weight", {}).get(et)
        if not caching or feat is not None:
            _dump(root / ("edge_pb" if hetero else "") / f"{sub(et) or 'edge_pb'}.pt", owner)
        order = np.argsort(owner, kind="stable")
        for p in range(num_parts):
            eids = np.flatnonzero(owner == p)
            if not caching:
                folder = root / f"part{p}" / "graph" / sub(et)
                for name, arr in (("rows", src[eids]), ("cols", dst[eids]), ("eids", eids),
                                  ("weights", None if weight is None else weight[eids])):
                    if arr is not None:
                        _dump(folder / f"{name}.pt", arr)
            for lo in range(0, len(eids), chunk) if feat is not None else ():
                folder = root / f"part{p}" / "edge_feat" / sub(et)
                _append(folder / "feats.pkl", feat[eids[lo:lo + chunk]])
                _append(folder / "ids.pkl", eids[lo:lo + chunk])
        if caching:  # GLT's homogeneous call writes no eids.pt (with_edge_feat lands in etype)
            folder = root / "graph" / sub(et)
            _dump(folder / "rows.pt", src[order])
            _dump(folder / "cols.pt", dst[order])
            if hetero and feat is not None:
                _dump(folder / "eids.pt", order)
            if weight is not None:
                _dump(folder / "weights.pt", weight[order])
    meta = {"num_parts": num_parts, "data_cls": "hetero" if hetero else "homo",
            "node_types": list(graph["nodes"]) if hetero else None,
            "edge_types": list(graph["edges"]) if hetero else None}
    with open(root / "META", "wb") as f:
        pickle.dump(meta, f, pickle.HIGHEST_PROTOCOL)


def _homo(seed: int = 0, n: int = 30, m: int = 90, parts: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    return {"nodes": {"_N": rng.integers(0, parts, n)},
            "edges": {HOMO: (rng.integers(0, n, m), rng.integers(0, n, m))},
            "nfeat": {"_N": rng.normal(size=(n, 3)).astype(np.float32)},
            "efeat": {HOMO: rng.normal(size=(m, 2)).astype(np.float32)},
            "weight": {HOMO: rng.random(m).astype(np.float32)}}


def _shop(seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    nu, ni = 12, 17
    buys, rev = ("user", "buys", "item"), ("item", "rev_buys", "user")
    return {"nodes": {"user": rng.integers(0, 2, nu), "item": rng.integers(0, 2, ni)},
            "edges": {buys: (rng.integers(0, nu, 40), rng.integers(0, ni, 40)),
                      rev: (rng.integers(0, ni, 25), rng.integers(0, nu, 25))},
            "nfeat": {"user": rng.normal(size=(nu, 4)).astype(np.float32),
                      "item": rng.integers(0, 9, (ni, 2))},
            "efeat": {buys: rng.normal(size=(40, 3)).astype(np.float32)}}


def _whole(cfg) -> dict:
    """Our partition, by GLT's per-type IDs: each node's part, every inner edge
    ``(src, dst)`` in edge ID order, and the features."""
    view: dict = {"part": {}, "edges": {}, "nfeat": {}, "efeat": {}}
    noff = dict(zip(cfg.ntypes, np.cumsum([0] + [cfg.type_sizes("node")[t]
                                                 for t in cfg.ntypes]), strict=False))
    for p in range(cfg.num_parts):
        part = load_partition_data(cfg, p)
        nd, ed = part.graph.ndata, part.graph.edata
        types = np.asarray(cfg.ntypes)[np.asarray(nd["_TYPE"])]
        orig = np.asarray(nd["orig_id"]) - np.array([noff[t] for t in types], np.int64)
        inner = np.asarray(nd["inner_node"]).astype(bool)
        for t in cfg.ntypes:
            view["part"].setdefault(t, {}).update(dict.fromkeys(
                orig[inner & (types == t)].tolist(), p))
            for key, val in part.node_feats.items():
                if key.startswith(f"{t}/"):
                    rows = view["nfeat"].setdefault((t, key[len(t) + 1:]), {})
                    rows.update(zip(orig[inner & (types == t)].tolist(), np.asarray(val),
                                    strict=True))
        src, dst = part.graph.edges()
        keep = np.asarray(ed["inner_edge"]).astype(bool)
        eoff = np.cumsum([0] + [cfg.type_sizes("edge")[e] for e in cfg.etypes])
        for i, e in enumerate(cfg.etypes):
            sel = keep & (np.asarray(ed["_TYPE"]) == i)
            eid = np.asarray(ed["orig_id"])[sel] - eoff[i]
            view["edges"].setdefault(e, {}).update(zip(
                eid.tolist(), zip(orig[src[sel]].tolist(), orig[dst[sel]].tolist(),
                                  strict=True), strict=True))
            for key, val in part.edge_feats.items():
                if key.startswith(f"{e}/"):
                    rows = view["efeat"].setdefault((e, key[len(e) + 1:]), {})
                    rows.update(zip(eid.tolist(), np.asarray(val), strict=True))
    return view


def _rows(d: dict) -> np.ndarray:
    return np.stack([d[i] for i in range(len(d))])


def _check(cfg, graph: dict) -> None:
    view = _whole(cfg)
    for t, pb in graph["nodes"].items():
        assert [view["part"][t][i] for i in range(len(pb))] == pb.tolist()
        if t in graph.get("nfeat", {}):
            assert np.array_equal(_rows(view["nfeat"][(t, "feat")]), graph["nfeat"][t])
    for et, (src, dst) in graph["edges"].items():
        key = ":".join(et)
        got = view["edges"][key]
        assert [got[i] for i in range(len(src))] == list(zip(src.tolist(), dst.tolist(),
                                                             strict=True))
        for name, table in (("feat", graph.get("efeat", {})), ("weight",
                                                               graph.get("weight", {}))):
            if et in table:
                assert np.array_equal(_rows(view["efeat"][(key, name)]), table[et])


@pytest.mark.parametrize("by", ["by_src", "by_dst"])
def test_homogeneous_round_trip(tmp_path, by):
    graph = _homo()
    write_glt(tmp_path / "glt", graph, num_parts=3, by=by,
              cache={"_N": {0: np.array([5, 1, 7]), 2: np.array([0])}})
    cfg = import_glt(tmp_path / "glt" / "META", tmp_path / "ours")
    assert cfg.graph_name == "glt" and cfg.num_parts == 3
    assert cfg.params["imported_from"] == "glt" and cfg.params["glt_edge_assign"] == by
    _check(cfg, graph)


def test_heterogeneous_round_trip_and_cli(tmp_path, capsys):
    graph = _shop()
    write_glt(tmp_path / "glt", graph, num_parts=2, by="by_dst", chunk=3)
    assert main(["import", str(tmp_path / "glt"), "--from", "glt", "--name", "shop",
                 "--out", str(tmp_path / "ours")]) in (0, None)
    assert "parts of 'shop'" in " ".join(capsys.readouterr().out.split())
    cfg = read_config(tmp_path / "ours" / "shop.json")
    assert cfg.ntypes == ["user", "item"] and cfg.params["glt_edge_assign"] == "by_dst"
    _check(cfg, graph)


@pytest.mark.parametrize("hetero", [False, True])
def test_graph_caching_layout(tmp_path, hetero):
    graph = _shop() if hetero else _homo(parts=2) | {"nodes": {"_N": np.arange(30) % 2}}
    write_glt(tmp_path / "glt", graph, num_parts=2, caching=True)
    cfg = import_glt(tmp_path / "glt", tmp_path / "ours")
    assert cfg.params["glt_graph_caching"] is True
    if hetero:  # no edge features: no eids.pt nor edge_pb, so IDs are the file's order
        rev = ("item", "rev_buys", "user")
        src, dst = graph["edges"][rev]
        order = np.argsort(graph["nodes"]["item"][src], kind="stable")
        graph["edges"][rev] = (src[order], dst[order])
        assert cfg.params["glt_edge_assign"] == "by_src"  # from buys' edge_pb
    _check(cfg, graph)


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch boom",))


def _bad(tmp_path: Path, file: str, obj, *, pickled: bool = False) -> Path:
    root = tmp_path / "glt"
    write_glt(root, _homo(), num_parts=3)
    target = root / file
    if target.is_file():
        target.unlink()
    if pickled:
        target.write_bytes(pickle.dumps(obj))
    elif obj is not None:
        _dump(target, obj)
    return root


@pytest.mark.parametrize("file,obj,pickled,error,message", [
    ("META", None, False, PartitionNotFoundError, "META: missing"),
    ("META", {"num_parts": 3, "data_cls": "both"}, True, FormatError, "data_cls: must be"),
    ("META", _Boom(), True, FormatError, "refused the global posix.system"),
    ("part1/node_feat/feats.pkl", _Boom(), True, FormatError, "feats.pkl: pickle [0] is not"),
    ("part1/node_feat/ids.pkl", [1, 2], True, FormatError, "ids.pkl: [0]: must be a tensor"),
    ("node_pb.pt", np.full(30, 3), False, FormatError, "node_pb: [0] = 3 is not in [0, 3)"),
    ("edge_pb.pt", np.zeros(90, np.int64), False, FormatError, "but edge_pb.pt puts it"),
    ("part0/graph/cols.pt", np.zeros(1, np.int64), False, FormatError,
     "cols.pt: cols: has 1 entries but rows.pt"),
    ("part2/graph/eids.pt", None, False, PartitionNotFoundError, "eids.pt: missing"),
    ("part0/graph/rows.pt", np.array([99]), False, FormatError, "rows: [0] = 99 is not in"),
    ("part0/node_feat/cache_ids.pt", np.array([0]), False, PartitionNotFoundError,
     "cache_feats.pt: missing"),
])
def test_bad_input_is_refused_naming_the_file(tmp_path, monkeypatch, file, obj, pickled,
                                              error, message):
    monkeypatch.chdir(tmp_path)
    root = _bad(tmp_path, file, obj, pickled=pickled)
    with pytest.raises(error) as info:
        import_glt(root, tmp_path / "ours")
    assert message in str(info.value), str(info.value)
    assert not (tmp_path / "ours").exists() and not (tmp_path / "boom").exists()


def test_disagreeing_books_and_caches_are_refused(tmp_path):
    graph = _homo()
    root = tmp_path / "glt"
    write_glt(root, graph, num_parts=3, cache={"_N": {1: np.array([2, 3])}})
    _dump(root / "part1/node_feat/cache_feats.pt", np.zeros((2, 3), np.float32))
    with pytest.raises(FormatError, match="cache_feats: has 2 rows that are not the owners'"):
        import_glt(root, tmp_path / "ours")
    moved = graph["nodes"]["_N"].copy()
    moved[0] = (moved[0] + 1) % 3  # node 0's book moves, its rows and edges stay
    _dump(root / "node_pb.pt", moved)
    with pytest.raises(FormatError, match="neither all in their source's part"):
        import_glt(root, tmp_path / "ours")
    assert not (tmp_path / "ours").exists()


def test_cli_names_the_missing_folder(tmp_path, capsys):
    code = main(["import", str(tmp_path / "nope"), "--from", "glt", "--out",
                 str(tmp_path / "ours")])
    assert code not in (0, None)
    assert "META: missing" in capsys.readouterr().err
