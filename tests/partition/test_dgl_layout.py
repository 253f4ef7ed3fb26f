"""DGL's partition layout <-> ours without DGL: the JSON translation, one part's reordering,
refusals.  (tests/partition/test_dgl_interop.py runs the files through DGL itself.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard._util.optional import is_installed
from graphshard.errors import FormatError, MissingDependencyError, ValidationError
from graphshard.partition import load_partition_data, read_config
from graphshard.partition.dense import check_dense
from graphshard.partition.dgl_io import export_dgl, import_dgl
from graphshard.partition.dgl_layout import (
    DGLPart,
    config_from_dgl,
    dgl_config,
    from_dgl_part,
    new_to_orig,
    to_dgl_part,
)


def _shuffled(part: DGLPart, seed: int) -> DGLPart:
    """The same part with its local nodes and edges in another order (DGL keeps no order)."""
    rng = np.random.default_rng(seed)
    n, m = len(part.ndata["_ID"]), len(part.src)
    nperm, eperm = rng.permutation(n), rng.permutation(m)
    new_of_old = np.empty(n, np.int64)
    new_of_old[nperm] = np.arange(n)
    return DGLPart(new_of_old[part.src[eperm]], new_of_old[part.dst[eperm]],
                   {k: v[nperm] for k, v in part.ndata.items()},
                   {k: v[eperm] for k, v in part.edata.items()},
                   part.node_feats, part.edge_feats)


@pytest.mark.parametrize(("graph", "num_parts", "hops"), [("cora", 3, 1), ("cora", 2, 2),
                                                          ("acm", 3, 1)])
def test_part_round_trip_through_dgl_layout(request, tmp_path, graph, num_parts, hops):
    """Ours -> DGL's arrays -> local order scrambled -> ours: identical to the part we wrote
    (inner nodes and edges first in global ID order; the halo keeps its order)."""
    g = request.getfixturevalue(graph)
    gs.partition_graph(g, "g", num_parts, tmp_path, num_hops=hops, part_method="metis")
    cfg = read_config(tmp_path / "g.json")
    meta = json.loads(json.dumps(dgl_config(cfg, source="g.json")))
    dcfg = config_from_dgl(meta, tmp_path / "dgl.json")
    assert dcfg.ntypes == cfg.ntypes and dcfg.etypes == cfg.etypes
    assert meta["num_nodes"] == g.num_nodes() and meta["num_edges"] == g.num_edges()
    typed = len(g.ntypes) > 1
    for p in range(num_parts):
        ours = load_partition_data(cfg, p)
        dgl_part = to_dgl_part(ours, typed=typed)
        assert ("_TYPE" in dgl_part.ndata) == typed
        assert dgl_part.ndata["inner_node"].dtype == np.uint8
        scrambled = _shuffled(dgl_part, seed=p)
        back = from_dgl_part(scrambled, dcfg, p, where=tmp_path / f"part{p}" / "graph.dgl")
        local, nd, ed = back.local, ours.graph.ndata, ours.graph.edata
        inner = int(np.count_nonzero(nd["inner_node"]))
        assert local.num_inner_nodes == inner and local.num_inner_edges == int(
            np.count_nonzero(ed["inner_edge"]))
        np.testing.assert_array_equal(local.nodes[:inner], nd["_ID"][:inner])
        # the same node set and the same edges (global src, global dst, edge ID)
        assert sorted(local.nodes.tolist()) == sorted(nd["_ID"].tolist())
        src, dst = ours.graph.edges()
        want = sorted(zip(nd["_ID"][src].tolist(), nd["_ID"][dst].tolist(),
                          ed["_ID"].tolist(), strict=True))
        got = sorted(zip(local.nodes[local.src].tolist(), local.nodes[local.dst].tolist(),
                         local.edges.tolist(), strict=True))
        assert got == want
        np.testing.assert_array_equal(local.edges[:local.num_inner_edges],
                                      ed["_ID"][:local.num_inner_edges])
        order = np.argsort(nd["_ID"])
        np.testing.assert_array_equal(back.node_type[np.argsort(local.nodes)], nd["_TYPE"][order])
        np.testing.assert_array_equal(back.node_part[np.argsort(local.nodes)],
                                      nd["part_id"][order])
        assert sorted(back.node_feats) == sorted(ours.node_feats)
        for key, col in ours.node_feats.items():
            np.testing.assert_array_equal(back.node_feats[key], col)


def test_dgl_config_keys_and_export_mark(tmp_path, acm):
    gs.partition_graph(acm, "acm", 2, tmp_path, part_method="hash",
                       num_trainers_per_machine=2)
    meta = dgl_config(read_config(tmp_path / "acm.json"), source="acm.json")
    assert list(meta)[:10] == ["graph_name", "part_method", "num_parts", "halo_hops",
                               "node_map", "edge_map", "ntypes", "etypes", "num_nodes",
                               "num_edges"]
    assert meta["ntypes"] == {t: i for i, t in enumerate(acm.ntypes)}
    assert meta["etypes"] == {":".join(et): i for i, et in enumerate(acm.canonical_etypes)}
    assert meta["part-1"] == {"node_feats": "part1/node_feat.dgl",
                              "edge_feats": "part1/edge_feat.dgl",
                              "part_graph": "part1/graph.dgl"}
    assert meta["num_trainers_per_machine"] == 2
    assert "graphshard" not in meta and meta["graphshard_export"]["format"] == "dgl"


def _meta() -> dict:
    return {"graph_name": "g", "num_parts": 2, "node_map": {"a": [[0, 2], [3, 4]],
                                                           "b": [[2, 3], [4, 6]]},
            "edge_map": {"a:r:b": [[0, 1], [1, 3]]}, "ntypes": {"a": 0, "b": 1},
            "etypes": {"a:r:b": 0}, "part-0": {}, "part-1": {}}


@pytest.mark.parametrize(("edit", "match"), [
    (lambda m: m.pop("node_map"), "'node_map': missing"),
    (lambda m: m.__setitem__("num_parts", 0), "'num_parts': must be an integer >= 1"),
    (lambda m: m.__setitem__("ntypes", {"a": 0, "b": 0}), "'ntypes': must map the types"),
    (lambda m: m.__setitem__("node_map", "node_map.npy"), "'node_map': must map each type"),
    (lambda m: m.__setitem__("edge_map", {"r": [[0, 1], [1, 3]]}) or
     m.__setitem__("etypes", {"r": 0}), "'r' is not 'src:rel:dst'"),
    (lambda m: m["node_map"].__setitem__("b", [[2, 3], [5, 6]]), "contiguous and ascending"),
    (lambda m: m["node_map"].__setitem__("b", [[2, 3]]), "needs 2 \\[start, end\\] ranges"),
    (lambda m: m.pop("part-1"), "'part-1': missing"),
])
def test_config_from_dgl_refuses_bad_json(edit, match):
    meta = _meta()
    config_from_dgl(meta, Path("g.json"))  # valid as is
    edit(meta)
    with pytest.raises(FormatError, match=match) as info:
        config_from_dgl(meta, Path("d/g.json"))
    assert str(info.value).startswith("d/g.json: ")


def _part1() -> DGLPart:
    """Part 1 of :func:`_meta`: inner a:3, b:4, b:5, halo a:0; inner edges 1, 2."""
    return DGLPart(np.array([3, 0]), np.array([2, 1]),
                   {"_ID": np.array([3, 4, 5, 0]), "inner_node": np.array([1, 1, 1, 0]),
                    "part_id": np.array([1, 1, 1, 0]), "_TYPE": np.array([0, 1, 1, 0])},
                   {"_ID": np.array([2, 1]), "inner_edge": np.array([1, 1]),
                    "_TYPE": np.array([0, 0])},
                   {"a/x": np.array([7.0]), "b/y": np.array([1, 2])}, {})


def test_from_dgl_part_orders_and_checks():
    cfg = config_from_dgl(_meta(), Path("g.json"))
    out = from_dgl_part(_part1(), cfg, 1, where=Path("part1/graph.dgl"))
    assert out.local.nodes.tolist() == [3, 4, 5, 0] and out.local.edges.tolist() == [1, 2]
    assert out.local.src.tolist() == [0, 3] and out.local.dst.tolist() == [1, 2]
    assert out.node_type.tolist() == [0, 1, 1, 0] and out.node_part.tolist() == [1, 1, 1, 0]


@pytest.mark.parametrize(("edit", "match"), [
    (lambda p: p.ndata.__setitem__("part_id", np.array([1, 1, 1, 1])),
     "node/part_id \\[3\\] = 1, but the partition book gives part 0"),
    (lambda p: p.ndata.__setitem__("_TYPE", np.array([0, 0, 1, 0])),
     "node/_TYPE \\[1\\] = 0, but the partition book gives type 1"),
    (lambda p: p.ndata.__setitem__("inner_node", np.array([1, 1, 0, 0])),
     "node/inner_node must mark the first 3"),
    (lambda p: p.ndata.__setitem__("_ID", np.array([3, 4, 1, 0])), "node/_ID of the inner"),
    (lambda p: p.ndata.__setitem__("_ID", np.array([3, 4, 6, 0])),
     "node/_ID \\[2\\] = 6 is not an ID in \\[0, 6\\)"),
    (lambda p: p.ndata.pop("inner_node"), "node data 'inner_node' is missing"),
    (lambda p: p.edata.__setitem__("_ID", np.array([2])), "edge data '_ID' has shape"),
    (lambda p: p.node_feats.__setitem__("b/y", np.array([1])), "feature 'b/y' has 1 rows"),
    (lambda p: p.node_feats.__setitem__("c/z", np.array([1])), "'c/z' is not '<type>/<name>'"),
])
def test_from_dgl_part_refuses_a_part_that_disagrees(edit, match):
    cfg = config_from_dgl(_meta(), Path("g.json"))
    part = _part1()
    edit(part)
    with pytest.raises(FormatError, match=match) as info:
        from_dgl_part(part, cfg, 1, where=Path("d/part1/graph.dgl"))
    assert "d/part1/" in str(info.value)


def test_check_dense_refuses_what_dgl_cannot_hold():
    check_dense("a/x", np.zeros((2, 3), np.float16))
    check_dense("a/x", np.array([2**63 - 1], np.uint64))
    with pytest.raises(ValidationError, match="'a/t' is Ragged"):
        check_dense("a/t", gs.Ragged.from_rows([[1], [2, 3]], dtype="int64"))
    with pytest.raises(ValidationError, match="above int64's range"):
        check_dense("a/u", np.array([2**63], np.uint64))
    with pytest.raises(ValidationError, match="dtype <U1"):
        check_dense("a/s", np.array(["x"]))


@pytest.mark.skipif(is_installed("dgl"), reason="dgl is installed here")
def test_without_dgl_the_error_names_the_package(tmp_path):
    gs.partition_graph(gs.graph(([0, 1], [1, 0])), "g", 1, tmp_path / "p")
    with pytest.raises(MissingDependencyError, match="'dgl'"):
        export_dgl(tmp_path / "p" / "g.json", tmp_path / "out")
    with pytest.raises(MissingDependencyError, match="'dgl'"):
        import_dgl(tmp_path / "p" / "g.json", tmp_path / "imp")
    assert not (tmp_path / "out").exists() and not (tmp_path / "imp").exists()


def test_new_to_orig_checks_dgl_pipeline_id_files():
    meta = {"graph_name": "g", "num_parts": 2, "node_map": {"a": [[0, 1], [2, 3]],
            "b": [[1, 2], [3, 4]]}, "edge_map": {}, "part-0": {}, "part-1": {}}
    cfg = config_from_dgl(meta, Path("g.json"))
    good = [{"a": np.array([1]), "b": np.array([0])}, {"a": np.array([0]), "b": np.array([1])}]
    assert new_to_orig(cfg, good, "node", where=Path("d")).tolist() == [1, 2, 0, 3]
    for bad, match in (
            ([good[0], {"a": np.array([0])}], r"d/part1/orig_nids\.dgl: node type 'b' needs 1"),
            ([good[0], {"a": np.array([2]), "b": np.array([1])}], "'a' has an ID outside"),
            ([good[0], {"a": np.array([1]), "b": np.array([1])}], "to several nodes")):
        with pytest.raises(FormatError, match=match):
            new_to_orig(cfg, bad, "node", where=Path("d"))


def test_fuzz_dgl_json_and_part_arrays(tmp_path, cora):
    """Seeded mutations of DGL's JSON (one value replaced, deleted or retyped) and of one
    part's arrays (one entry changed, or one array cut short): the only outcomes are a
    config / part or our FormatError naming the file."""
    from fuzzing import mutate_json, run_fuzz

    gs.partition_graph(cora, "cora", 3, tmp_path / "p", part_method="metis")
    cfg = read_config(tmp_path / "p" / "cora.json")
    meta = dgl_config(cfg, source="cora.json")
    dcfg = config_from_dgl(meta, tmp_path / "d.json")

    def json_case(rng, folder):
        path = folder / "cora.json"
        path.write_text(json.dumps(mutate_json(rng, meta)))
        return path

    (tmp_path / "json").mkdir()
    (tmp_path / "part").mkdir()
    run_fuzz("DGL partition JSON", json_case,
             lambda path: config_from_dgl(json.loads(path.read_text()), path),
             tmp_path / "json")
    part = to_dgl_part(load_partition_data(cfg, 1), typed=False)
    arrays = {"src": part.src, "dst": part.dst, **{f"n_{k}": v for k, v in part.ndata.items()},
              **{f"e_{k}": v for k, v in part.edata.items()}}

    def part_case(rng, folder):
        mutant = {k: v.astype(np.int64) for k, v in arrays.items()}  # room for any value
        key = rng.choice(sorted(mutant))
        if rng.random() < 0.2:
            mutant[key] = mutant[key][:rng.randrange(len(mutant[key]))]
        else:
            i = rng.randrange(len(mutant[key]))
            mutant[key][i] = rng.choice([-1, 0, 1, mutant[key][i] + 1, 10**6])
        path = folder / "graph.npz"
        np.savez(path, **mutant)
        return path

    def load(path):
        with np.load(path, allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
        p = DGLPart(a["src"], a["dst"], {k[2:]: v for k, v in a.items() if k[:2] == "n_"},
                    {k[2:]: v for k, v in a.items() if k[:2] == "e_"},
                    part.node_feats, part.edge_feats)
        return from_dgl_part(p, dcfg, 1, where=path)

    run_fuzz("DGL part arrays", part_case, load, tmp_path / "part")
