"""dispatch (out of core) writes exactly what partition_graph writes for the same assignment;
run_pipeline (both steps in one call, on one Ray session) what the two steps write."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ConfigError, ValidationError
from graphshard.partition import build_partitions
from graphshard.partition.assignment import read_assignment, write_assignment
from graphshard.pipeline import assign, dispatch, run_pipeline
from graphshard.ragged import Ragged
from graphshard.runtime.executor import ray_session, start_ray
from graphshard.storage.tensorfile import load_tensors


def assert_same_output(a_cfg, b_cfg):
    a, b = json.loads(a_cfg.read_text()), json.loads(b_cfg.read_text())
    for key in ("num_parts", "halo_hops", "node_map", "edge_map", "ntypes", "etypes",
                "num_nodes", "num_edges"):
        assert a[key] == b[key], key
    for p in range(a["num_parts"]):
        for rel in a[f"part-{p}"].values():
            ta, ma = load_tensors(a_cfg.parent / rel)
            tb, mb = load_tensors(b_cfg.parent / rel)
            assert sorted(ta) == sorted(tb), rel
            for k in ta:
                assert ta[k].dtype == tb[k].dtype, (rel, k)
                np.testing.assert_array_equal(ta[k], tb[k], err_msg=f"{rel}: {k}")
            assert ma == mb
    ra, rb = a["graphshard"]["report"], b["graphshard"]["report"]
    for key in ("edge_cut", "comm_volume", "part_nodes", "part_edges", "halo_nodes"):
        assert ra[key] == rb[key], key


@pytest.mark.parametrize(("fmt", "num_chunks", "hops"), [("numpy", 3, 1), ("parquet", 2, 2),
                                                          ("csv", 1, 1)])
def test_acm_same_as_partition_graph(acm, tmp_path, fmt, num_chunks, hops):
    g = acm
    gs.io.write_chunked(g, tmp_path / "chunked", num_chunks, fmt=fmt)
    rng = np.random.default_rng(1)
    parts = {t: rng.integers(0, 3, g.num_nodes(t)) for t in g.ntypes}
    write_assignment(tmp_path / "assign", parts, 3)
    ref = build_partitions(g, "acm", 3, tmp_path / "ref", num_hops=hops, save_orig_ids=True,
                           assignment=np.concatenate([parts[t] for t in g.ntypes]))
    res = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "out",
                   graph_name="acm", num_hops=hops, save_orig_ids=True, node_block=4000)
    assert_same_output(ref.config_path, res.config_path)
    assert not (tmp_path / "out" / ".graphshard-work").exists()


def test_ragged_and_edge_features(tmp_path):
    g = gs.datasets.sbm(500, 3000, num_blocks=4, num_features=3, seed=3)
    rng = np.random.default_rng(0)
    g.ndata["tags"] = Ragged.from_rows([list(range(i % 4)) for i in range(500)], dtype="int64")
    g.edata["w"] = rng.random(g.num_edges()).astype(np.float32)
    gs.io.write_chunked(g, tmp_path / "chunked", 4, fmt="parquet")
    parts = rng.integers(0, 4, 500)
    write_assignment(tmp_path / "assign", {"_N": parts}, 4)
    ref = build_partitions(g, "sbm", 4, tmp_path / "ref", assignment=parts)
    res = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "out",
                   graph_name="sbm", node_block=128)
    assert_same_output(ref.config_path, res.config_path)


def test_resume_after_crash_and_corruption(cora, tmp_path, monkeypatch):
    import importlib

    dispatch_module = importlib.import_module("graphshard.pipeline.dispatch")

    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    parts = np.random.default_rng(2).integers(0, 2, cora.num_nodes())
    write_assignment(tmp_path / "assign", {"_N": parts}, 2)
    real = dispatch_module.build_part
    calls = []

    def crash_on_second(plan, p, *args):
        calls.append(p)
        if p == 1:
            raise RuntimeError("killed")
        return real(plan, p, *args)

    monkeypatch.setattr(dispatch_module, "build_part", crash_on_second)
    with pytest.raises(RuntimeError, match="killed"):
        dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "out", graph_name="c")
    assert not (tmp_path / "out" / "c.json").exists(), "a crashed run must not look complete"
    work = tmp_path / "out" / ".graphshard-work"
    piece = next((work / "edges").glob("*.safetensors"))
    piece.write_bytes(piece.read_bytes()[:-3] + b"xyz")  # corrupt one finished piece
    # what a SIGKILL leaves: an atomic write's temp file, which no cleanup code removed
    stale = tmp_path / "out" / "part1" / ".node_feats.safetensors.k3_Xab9z.tmp"
    stale.parent.mkdir(exist_ok=True)
    stale.write_bytes(b"half a file")
    monkeypatch.setattr(dispatch_module, "build_part", real)
    res = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "out", graph_name="c")
    ref = build_partitions(cora, "c", 2, tmp_path / "ref", assignment=parts)
    assert_same_output(ref.config_path, res.config_path)
    assert not stale.exists(), "a rerun leaves nothing of the killed run behind"
    assert sorted(p.name for p in (tmp_path / "out").rglob(".*")) == []


def test_bad_assignment_and_budget(cora, tmp_path):
    gs.io.write_chunked(cora, tmp_path / "chunked", 2)
    write_assignment(tmp_path / "short", {"_N": np.zeros(10, dtype=np.int64)}, 2)
    with pytest.raises(gs.FormatError, match=r"_N\.txt has 10 lines but the graph has 2708"):
        dispatch(tmp_path / "chunked", tmp_path / "short", tmp_path / "o1")
    write_assignment(tmp_path / "ok", {"_N": np.zeros(2708, dtype=np.int64)}, 2)
    with pytest.raises(ValidationError, match="largest edge chunk has 2,715 edges"):
        dispatch(tmp_path / "chunked", tmp_path / "ok", tmp_path / "o2", memory_budget=10_000)
    assert not (tmp_path / "o2").exists() or not any((tmp_path / "o2").rglob("*"))
    for budget in (0, -5 << 30):
        with pytest.raises(ValidationError, match="memory_budget must be a positive number"):
            dispatch(tmp_path / "chunked", tmp_path / "ok", tmp_path / "o3", memory_budget=budget)
        assert not (tmp_path / "o3").exists() or not any((tmp_path / "o3").rglob("*"))


def test_budget_checked_against_the_routed_parts(cora, tmp_path):
    """Balanced in nodes, not in edges: the part holding the high in-degree nodes is
    refused after routing, before any part is built, naming the part."""
    gs.io.write_chunked(cora, tmp_path / "chunked", 4)
    indeg = np.bincount(np.asarray(cora.edges()[1]), minlength=cora.num_nodes())
    parts = np.zeros(cora.num_nodes(), dtype=np.int64)
    parts[np.argsort(indeg, kind="stable")[: cora.num_nodes() // 2]] = 1  # low degrees: part 1
    write_assignment(tmp_path / "skewed", {"_N": parts}, 2)
    e0 = int(indeg[parts == 0].sum())
    assert e0 > 2 * int(indeg[parts == 1].sum())
    budget = 160 * (e0 + cora.num_edges() // 2) // 2  # above the average part, below part 0
    with pytest.raises(ValidationError, match=rf"part 0 received {e0:,} edges"):
        dispatch(tmp_path / "chunked", tmp_path / "skewed", tmp_path / "o", memory_budget=budget)
    assert not (tmp_path / "o" / "cora.json").exists()
    assert not list((tmp_path / "o").glob("part*"))
    ok = dispatch(tmp_path / "chunked", tmp_path / "skewed", tmp_path / "o",
                  memory_budget=160 * e0 + 1)  # the same command, a larger budget: resumes
    assert ok.config_path.exists()


def test_ray_engine_same_files(cora, tmp_path, ray_cluster):
    gs.io.write_chunked(cora, tmp_path / "chunked", 3, fmt="parquet")
    a = assign(tmp_path / "chunked", 3, tmp_path / "assign", method="random", seed=4)
    assert sum(a.part_sizes) == cora.num_nodes() and max(a.part_sizes) - min(a.part_sizes) <= 1
    local = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "local",
                     graph_name="c")
    on_ray = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "ray",
                      graph_name="c", use_ray=True)
    assert_same_output(local.config_path, on_ray.config_path)


def test_dgl_assignment_folder_keeps_its_declared_parts(tmp_path):
    """DGL's random_partition.py writes <ntype>.txt and partition_meta.json: the declared
    number of parts holds even when the last part got no node."""
    from graphshard.errors import FormatError
    from graphshard.pipeline import import_assignment

    g = gs.graph((np.arange(12), (np.arange(12) + 1) % 12))
    gs.io.write_chunked(g, tmp_path / "chunked", 2)
    dgl = tmp_path / "dgl"
    dgl.mkdir()
    (dgl / "_N.txt").write_text("".join(f"{i % 2}\n" for i in range(12)))
    (dgl / "partition_meta.json").write_text(json.dumps({"algo_name": "random",
                                                         "num_parts": 3}))
    res = import_assignment(dgl, tmp_path / "chunked", tmp_path / "imported")
    assert res.num_parts == 3 and res.part_sizes == [6, 6, 0]
    (dgl / "partition_meta.json").write_text(json.dumps({"num_parts": 1}))
    with pytest.raises(FormatError, match="part 1, outside"):
        import_assignment(dgl, tmp_path / "chunked", tmp_path / "again")
    (dgl / "partition_meta.json").write_text("{not json")
    with pytest.raises(FormatError, match=r"partition_meta\.json: not a JSON"):
        import_assignment(dgl, tmp_path / "chunked", tmp_path / "again")
    assert not (tmp_path / "again").exists()


# ----- kernels of dispatch -------------------------------------------------------------------
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_route_edges_matches_a_stable_sort_by_owner(id_dtype):
    from graphshard.partition.build_kernels import route_edges

    rng = np.random.default_rng(5)
    n_src, n_dst, m = 300, 200, 5000
    src_map = rng.permutation(n_src).astype(np.int64) + 7      # new IDs of another type
    dst_map = rng.permutation(n_dst).astype(np.int64)
    ends = np.array([0, 40, 40, 150, 150, 200, 400], dtype=np.int64)  # empty parts too
    src = rng.integers(0, n_src, m).astype(np.int32)
    dst = rng.integers(0, n_dst, m)
    counts, new_src, new_dst, pos = route_edges(src, dst, src_map, dst_map, ends, id_dtype)
    owner = np.searchsorted(ends, dst_map[dst], side="right")
    order = np.argsort(owner, kind="stable")
    np.testing.assert_array_equal(counts, np.bincount(owner, minlength=len(ends)))
    np.testing.assert_array_equal(pos, order)
    np.testing.assert_array_equal(new_src, src_map[src][order])
    np.testing.assert_array_equal(new_dst, dst_map[dst][order])
    assert new_src.dtype == id_dtype and new_dst.dtype == id_dtype and pos.dtype == np.int32
    empty = route_edges(src[:0], dst[:0], src_map, dst_map, ends, id_dtype)
    assert empty[0].tolist() == [0] * len(ends) and all(len(a) == 0 for a in empty[1:])


@pytest.mark.parametrize("method", ["bitmap", "sort", None])
@pytest.mark.parametrize(("num_nodes", "lo", "hi"), [(1000, 200, 450), (1000, 0, 1000),
                                                     (130, 0, 64), (130, 64, 130)])
def test_halo_of_part_is_the_one_hop_local_graph(method, num_nodes, lo, hi):
    from graphshard.partition.build_kernels import halo_of_part
    from graphshard.partition.local_graphs import assemble_local_graph

    rng = np.random.default_rng(num_nodes + lo)
    src = rng.integers(0, num_nodes, 3000)
    src[:5] = [num_nodes - 1, 0, 63, 64, lo]                   # word edges of the bitmap
    dst = rng.integers(lo, hi, len(src))
    ref = assemble_local_graph(0, (lo, hi), 0, src, dst, 1)
    local = src.copy()
    halo, cut = halo_of_part(local, lo, hi, num_nodes, method=method)
    np.testing.assert_array_equal(halo, ref.nodes[hi - lo:])
    np.testing.assert_array_equal(local, ref.src)
    assert cut == np.count_nonzero((src < lo) | (src >= hi)) and halo.dtype == np.int64
    nothing = np.zeros(0, dtype=np.int64)
    assert halo_of_part(nothing, lo, hi, num_nodes, method=method)[1] == 0


def test_halo_of_part_rejects_bad_ids_and_methods():
    from graphshard.partition.build_kernels import halo_of_part

    with pytest.raises(ValidationError, match=r"source 10 at position 1 is outside \[0, 10\)"):
        halo_of_part(np.array([3, 10, 2]), 0, 5, 10)
    with pytest.raises(ValidationError, match="method 'hash'"):
        halo_of_part(np.array([3]), 0, 5, 10, method="hash")


def test_new_ids_of_block_numbers_each_part_in_block_order():
    from graphshard.partition.build_kernels import new_ids_of_block

    parts = np.array([2, 0, 2, 1, 0, 2])
    starts = np.array([10, 20, 30])
    assert new_ids_of_block(parts, starts).tolist() == [30, 10, 31, 20, 11, 32]
    assert starts.tolist() == [10, 20, 30], "the caller's starts are left alone"


def test_halo_of_part_sorts_when_the_bitmap_would_outweigh_the_part(monkeypatch):
    from graphshard.partition import build_kernels as dispatch_kernels

    def no_bitmap(*args):
        raise AssertionError("the bitmap of 2**27 nodes is bigger than this part")

    monkeypatch.setattr(dispatch_kernels, "_halo_bitmap", no_bitmap)
    src = np.array([5, 1 << 26, 7, 1 << 26, 3])
    halo, cut = dispatch_kernels.halo_of_part(src, 4, 8, 1 << 27)
    assert halo.tolist() == [3, 1 << 26] and cut == 3
    assert src.tolist() == [1, 5, 3, 5, 4]


def test_short_of_space_warns_and_still_writes(cora, tmp_path, monkeypatch, caplog):
    from graphshard.storage import files as _files

    gs.io.write_chunked(cora, tmp_path / "chunked", 2)
    write_assignment(tmp_path / "assign", {"_N": np.arange(cora.num_nodes()) % 2}, 2)
    usage = type(_files.shutil.disk_usage(tmp_path))
    monkeypatch.setattr(_files.shutil, "disk_usage", lambda p: usage(10**9, 10**9 - 1000, 1000))
    with caplog.at_level("WARNING", logger="graphshard.storage.files"):
        result = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "parts")
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and warned[0].startswith("dispatch's output needs about")
    assert str(tmp_path / "parts") in warned[0]
    assert result.config_path.exists()


def test_same_output_as_the_two_steps(cora, tmp_path):
    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    opts = {"seed": 2, "balance_edges": True}
    assign(tmp_path / "chunked", 4, tmp_path / "assign", method="lp", **opts)
    two = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "two", num_hops=2)
    one = run_pipeline(tmp_path / "chunked", 4, tmp_path / "one", method="lp",
                       assign_options=opts, dispatch_options={"num_hops": 2})
    assert one.assignment.out_dir == tmp_path / "one" / "assignment"
    np.testing.assert_array_equal(read_assignment(tmp_path / "assign", ["_N"])["_N"],
                                  read_assignment(one.assignment.out_dir, ["_N"])["_N"])
    assert_same_output(two.config_path, one.partitions.config_path)
    assert one.seconds >= one.assignment.seconds > 0


def test_the_assignment_scratch_goes_to_the_dispatch(cora, tmp_path, monkeypatch):
    """lp leaves its scratch files in the pool it is given; run_pipeline hands them to
    dispatch, whose files are written over them: the same output, no scratch left."""
    from graphshard.storage import files as _files
    from graphshard.storage import scratch as _scratch

    monkeypatch.setattr(_scratch, "REUSE_MIN_BYTES", 1)  # cora's files are small
    monkeypatch.setattr(_files, "REUSE_MIN_BYTES", 1)
    claims = []
    real_claim = _scratch.claim_scratch

    def claim(pool, need, target):
        claims.append((Path(target).name, real_claim(pool, need, target)))
        return claims[-1][1]

    monkeypatch.setattr(_scratch, "claim_scratch", claim)
    monkeypatch.setattr(_files, "claim_scratch", claim)
    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    opts = {"seed": 2, "balance_edges": True, "work_dir": tmp_path / "work"}
    assign(tmp_path / "chunked", 4, tmp_path / "assign", method="lp", **opts)
    kept = assign(tmp_path / "chunked", 4, tmp_path / "kept", method="lp",
                  scratch_pool=tmp_path / "pool", **opts)
    np.testing.assert_array_equal(read_assignment(tmp_path / "assign", ["_N"])["_N"],
                                  read_assignment(kept.out_dir, ["_N"])["_N"])
    assert len(list((tmp_path / "pool").iterdir())) >= 3  # level 0's shard at least
    two = dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "two")
    claims.clear()
    one = run_pipeline(tmp_path / "chunked", 4, tmp_path / "one", method="lp",
                       assign_options=opts)
    assert_same_output(two.config_path, one.partitions.config_path)
    written_over = [name for name, ok in claims if ok and name.endswith(".tmp")]
    assert written_over  # dispatch's files (temp names until complete) took lp's over
    assert list((tmp_path / "work").iterdir()) == []


def test_a_finished_assignment_is_reused_while_it_matches(cora, tmp_path, monkeypatch):
    import graphshard.pipeline.run as run_module

    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    opts = {"seed": 2, "balance_edges": True, "num_workers": 1}
    first = run_pipeline(tmp_path / "chunked", 4, tmp_path / "out", method="lp",
                         assign_options=opts)
    calls = []
    real_assign = run_module.assign
    monkeypatch.setattr(run_module, "assign",
                        lambda *a, **k: calls.append(k) or real_assign(*a, **k))
    again = run_pipeline(tmp_path / "chunked", 4, tmp_path / "out", method="lp",
                         assign_options={**opts, "num_workers": 2},
                         dispatch_options={"num_hops": 2})
    assert calls == [] and again.assignment.seconds == 0.0  # reused: workers change nothing
    assert again.assignment.part_sizes == first.assignment.part_sizes
    assert json.loads(again.partitions.config_path.read_text())["halo_hops"] == 2
    by_file = run_pipeline(tmp_path / "chunked" / "metadata.json", 4, tmp_path / "out",
                           method="lp", assign_options=opts)  # the metadata file itself
    assert calls == [] and by_file.assignment.part_sizes == first.assignment.part_sizes
    run_pipeline(tmp_path / "chunked", 4, tmp_path / "out", method="lp",
                 assign_options={**opts, "seed": 3})
    assert len(calls) == 1  # another seed: computed again
    npy = tmp_path / "out" / "assignment" / "_N.npy"
    data = npy.read_bytes()
    npy.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # same size, another last part
    redone = run_pipeline(tmp_path / "chunked", 4, tmp_path / "out", method="lp",
                          assign_options={**opts, "seed": 3})
    assert len(calls) == 2 and redone.assignment.seconds > 0


def test_a_foreign_folder_is_refused_before_the_assignment(cora, tmp_path):
    gs.io.write_chunked(cora, tmp_path / "chunked", 2)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="refusing to write"):
        run_pipeline(tmp_path / "chunked", 2, tmp_path / "out", method="hash")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["notes.txt"]
    for k, method, match in ((2, "mets", "unknown assignment method"),
                             (cora.num_nodes() + 1, "hash", "num_parts must be in")):
        with pytest.raises(ValidationError, match=match):
            run_pipeline(tmp_path / "chunked", k, tmp_path / "new", method=method)
        assert not (tmp_path / "new").exists()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValidationError, match="afile: exists and is not a folder"):
        run_pipeline(tmp_path / "chunked", 2, tmp_path / "new", method="lp",
                     assign_dir=tmp_path / "afile")
    assert not (tmp_path / "new").exists()
    with pytest.raises(ValidationError, match="afile: exists and is not a folder"):
        assign(tmp_path / "chunked", 2, tmp_path / "afile", method="lp")
    with pytest.raises(ValidationError, match="largest edge chunk"):  # before lp runs
        run_pipeline(tmp_path / "chunked", 2, tmp_path / "new", method="lp",
                     dispatch_options={"memory_budget": 1 << 10})
    assert not (tmp_path / "new").exists()
    with pytest.raises(ValidationError, match=r"work_dir '.*afile.w' cannot be used"):
        run_pipeline(tmp_path / "chunked", 2, tmp_path / "new", method="lp",
                     assign_options={"work_dir": tmp_path / "afile" / "w"})
    assert not (tmp_path / "new").exists()


class FakeRay:
    """Records init/shutdown like the ``ray`` module."""

    def __init__(self) -> None:
        self.up, self.inits, self.shutdowns = False, 0, 0

    def is_initialized(self) -> bool:
        return self.up

    def init(self, **_: object) -> None:
        self.up, self.inits = True, self.inits + 1

    def shutdown(self) -> None:
        self.up, self.shutdowns = False, self.shutdowns + 1


def test_ray_session_keeps_the_ray_a_step_started():
    ray = FakeRay()
    assert start_ray(ray) and ray.inits == 1  # alone: the caller stops it
    ray.shutdown()
    with ray_session():
        with ray_session():
            assert not start_ray(ray)  # the session owns it ...
            assert not start_ray(ray)  # ... and the next step joins it
        assert ray.up  # an inner block leaves it running
    assert (ray.inits, ray.shutdowns, ray.up) == (2, 2, False)
    from graphshard.runtime.ray import init_ray  # a local Ray on loopback only

    init_ray(ray)
    with ray_session():
        assert not start_ray(ray)  # running before the block: not the session's to stop
    assert ray.up and ray.shutdowns == 2


def test_each_step_logs_its_tasks_and_seconds(tmp_path, caplog):
    """``graphshard -v dispatch`` shows one INFO line per step (STYLE §11)."""
    src = np.arange(40)
    gs.io.write_chunked(gs.graph((src, (src + 1) % 40)), tmp_path / "ring", 3)
    write_assignment(tmp_path / "assign", {"_N": src % 2}, 2)
    with caplog.at_level("INFO", logger="graphshard.runtime.executor"):
        dispatch(tmp_path / "ring", tmp_path / "assign", tmp_path / "parts")
    lines = [r.getMessage() for r in caplog.records if r.name == "graphshard.runtime.executor"]
    assert [line.split(":")[0] for line in lines] == [
        "mapping node IDs", "routing edges", "building parts"]
    assert lines[1].startswith("routing edges: 3 tasks in ")


def _rename_in_metadata(chunked: Path, *, graph_name: str | None = None,
                        ntype: str | None = None) -> None:
    """Put a hostile graph name or node type name into a chunked ``metadata.json``."""
    path = chunked / "metadata.json"
    meta = json.loads(path.read_text())
    if graph_name is not None:
        meta["graph_name"] = graph_name
    if ntype is not None:
        meta["node_type"] = [ntype]
        meta["edge_type"] = [f"{ntype}:_E:{ntype}"]
        meta["edges"] = {f"{ntype}:_E:{ntype}": meta["edges"]["_N:_E:_N"]}
    path.write_text(json.dumps(meta))


@pytest.mark.parametrize("bad", ["../../../x", "ABSOLUTE", ".hidden", "a\x00b"])
def test_a_graph_name_from_metadata_never_leads_outside_out(tmp_path, bad):
    bad = str(tmp_path / "x") if bad == "ABSOLUTE" else bad
    (tmp_path / "a" / "b").mkdir(parents=True)
    chunked, out = tmp_path / "a" / "b" / "chunked", tmp_path / "a" / "b" / "out"
    gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), chunked, 2)
    _rename_in_metadata(chunked, graph_name=bad)
    write_assignment(tmp_path / "assign", {"_N": np.array([0, 0, 1, 1])}, 2)
    message = r"metadata.json: graph_name must be a plain file name"
    with pytest.raises(ValidationError, match=message):
        dispatch(chunked, tmp_path / "assign", out)
    with pytest.raises(ValidationError, match=message):
        run_pipeline(chunked, 2, out, method="hash")
    assert not out.exists() and not (tmp_path / "x.json").exists()
    with pytest.raises(ValidationError, match=r"graph_name must be a plain file name.*'/x'"):
        dispatch(chunked, tmp_path / "assign", out, graph_name="/x")  # --name
    assert not out.exists()
    res = dispatch(chunked, tmp_path / "assign", out, graph_name="ok")  # --name wins
    assert res.config_path == out / "ok.json"


def test_a_node_type_name_from_metadata_never_leads_outside_out(tmp_path):
    bad = "../../../x"
    deep = tmp_path / "a" / "b" / "c"
    chunked, out = tmp_path / "chunked", tmp_path / "out"
    gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), chunked, 2)
    _rename_in_metadata(chunked, ntype=bad)
    write_assignment(deep / "assign", {"_N": np.array([0, 0, 1, 1])}, 2)
    (deep / "assign" / "_N.txt").rename(deep / "assign" / f"{bad}.txt")  # tmp_path/a/x.txt
    with pytest.raises(ValidationError, match=r"metadata.json: node_type must be a plain file"):
        dispatch(chunked, deep / "assign", out)
    with pytest.raises(ValidationError, match=r"metadata.json: node_type must be a plain file"):
        run_pipeline(chunked, 2, out, method="hash")
    assert not out.exists() and not (tmp_path / "x.npy").exists()


@pytest.mark.parametrize("command", ["dispatch", "pipeline", "partition"])
def test_cli_name_reaches_the_library_check(tmp_path, capsys, command):
    from graphshard.cli import main

    chunked, out = tmp_path / "chunked", tmp_path / "out"
    gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), chunked, 2)
    write_assignment(tmp_path / "assign", {"_N": np.array([0, 0, 1, 1])}, 2)
    args = {"dispatch": ["dispatch", str(chunked), str(tmp_path / "assign")],
            "pipeline": ["pipeline", str(chunked), "-k", "2", "-m", "hash"],
            "partition": ["partition", "--generate", "sbm:nodes=20,edges=60,blocks=2",
                          "-k", "2"]}[command]
    assert main(["-q", *args, "--out", str(out), "--name", "../../x"]) == 1
    assert "graph_name must be a plain file name" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(("graph", "num_parts", "trainers", "hops"),
                         [("cora", 2, 2, 1), ("cora", 3, 2, 2), ("acm", 2, 3, 1)])
def test_trainers_per_machine_same_as_partition_graph(request, tmp_path, graph, num_parts,
                                                      trainers, hops):
    """Issue 27: the out-of-core path with num_trainers_per_machine writes what
    partition_graph(num_trainers_per_machine=...) writes: parts of consecutive trainer parts,
    "<ntype>/trainer_id" features, DGL's key in the config."""
    g = request.getfixturevalue(graph)
    gs.io.write_chunked(g, tmp_path / "chunked", 2)
    ref = build_partitions(g, "g", num_parts, tmp_path / "ref", num_hops=hops,
                           part_method="hash", num_trainers_per_machine=trainers)
    res = run_pipeline(tmp_path / "chunked", num_parts, tmp_path / "out", method="hash",
                       num_trainers_per_machine=trainers,
                       dispatch_options={"graph_name": "g", "num_hops": hops})
    assert_same_output(ref.config_path, res.partitions.config_path)
    a = json.loads(ref.config_path.read_text())
    b = json.loads(res.partitions.config_path.read_text())
    assert a["num_trainers_per_machine"] == b["num_trainers_per_machine"] == trainers
    assert res.assignment.num_parts == num_parts * trainers
    feats = gs.load_partition(res.partitions.config_path, 0)[1]
    tid = feats[f"{g.ntypes[0]}/trainer_id"]
    assert set(np.unique(tid).tolist()) <= set(range(trainers))  # machine 0's trainers
    assert len(np.unique(tid)) == trainers


def test_dispatch_trainers_refuses_an_indivisible_assignment(cora, tmp_path):
    gs.io.write_chunked(cora, tmp_path / "chunked", 1)
    write_assignment(tmp_path / "assign", {"_N": np.arange(cora.num_nodes()) % 5}, 5)
    with pytest.raises(ValidationError, match="num_trainers_per_machine=2 does not divide"):
        dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "out",
                 num_trainers_per_machine=2)
    with pytest.raises(ValidationError, match="num_trainers_per_machine must be an integer"):
        dispatch(tmp_path / "chunked", tmp_path / "assign", tmp_path / "out2",
                 num_trainers_per_machine=0)


def test_hash_by_original_node_id_same_as_partition_graph(shared_file, tmp_path):
    """Euler's shipped example: the pipeline's hash splits by the node_id feature as
    partition_graph's does (node_id % k, Euler's xxx_<idx> rule), and the outputs agree."""
    g = gs.io.read_euler(shared_file("format-euler", "euler1_tf_euler_testdata", "graph.json"))
    node_id = np.concatenate([g.nodes[t].data["node_id"] for t in g.ntypes]).astype(np.int64)
    assert not np.array_equal(node_id % 2, np.arange(g.num_nodes()) % 2)
    gs.io.write_chunked(g, tmp_path / "chunked", 2, fmt="parquet")
    ref = build_partitions(g, "g", 2, tmp_path / "ref", part_method="hash")
    res = run_pipeline(tmp_path / "chunked", 2, tmp_path / "out", method="hash",
                       dispatch_options={"graph_name": "g"})
    assigned = read_assignment(res.assignment.out_dir, g.ntypes)
    np.testing.assert_array_equal(np.concatenate([assigned[t] for t in g.ntypes]),
                                  node_id % 2)
    np.testing.assert_array_equal(ref.parts, node_id % 2)
    assert_same_output(ref.config_path, res.partitions.config_path)


@pytest.mark.parametrize(("graph", "method", "seed"), [
    ("cora", "random", 0), ("cora", "random", 7), ("acm", "random", 3), ("acm", "hash", 0),
    ("cora", "lp", 1), ("acm", "lp", 2), ("cora", "metis", 0), ("acm", "metis", 5)])
def test_every_method_same_as_partition_graph(request, tmp_path, graph, method, seed):
    """Issue 39: one registry for memory and disk. partition_graph and the pipeline take
    the same methods and give the same parts and part files for the same seed: count-only
    (random, hash), streaming (lp: partition_graph streams a chunked copy) and in-memory
    (metis: the pipeline reads the adjacency from the chunks); random balances every type."""
    g = request.getfixturevalue(graph)
    gs.io.write_chunked(g, tmp_path / "chunked", 2)
    ref = build_partitions(g, "g", 3, tmp_path / "ref", part_method=method, seed=seed,
                           balance_edges=method == "lp")  # lp's default in the pipeline
    res = run_pipeline(tmp_path / "chunked", 3, tmp_path / "out", method=method,
                       assign_options={"seed": seed},
                       dispatch_options={"graph_name": "g"})
    assigned = read_assignment(res.assignment.out_dir, g.ntypes)
    np.testing.assert_array_equal(np.concatenate([assigned[t] for t in g.ntypes]), ref.parts)
    assert_same_output(ref.config_path, res.partitions.config_path)
    if method == "random":
        for t in g.ntypes:
            counts = np.bincount(assigned[t], minlength=3)
            assert counts.max() - counts.min() <= 1, (t, counts)


def test_a_streaming_method_refuses_what_it_cannot_balance(cora, tmp_path):
    from graphshard.partition.adjacency import symmetric_adjacency
    from graphshard.partition.methods import MethodOptions, run_method

    with pytest.raises(ValidationError, match="balance_ntypes needs an in-memory method"):
        build_partitions(cora, "c", 2, tmp_path / "p", part_method="lp",
                         balance_ntypes=cora.ndata["label"])
    adj = symmetric_adjacency(np.array([0, 1]), np.array([1, 2]), 3)
    with pytest.raises(ValidationError, match="'lp' streams a chunked graph"):
        run_method(adj, 2, "lp", MethodOptions())
