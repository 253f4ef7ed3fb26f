"""Partitions in S3: written to, loaded from and served from a real S3 endpoint.

The endpoint is moto's standalone server (``moto[server]``, in the ``test`` extra):
a real HTTP S3 API on loopback that pyarrow's S3 client talks to as to AWS, started once
per session (the ``s3_endpoint`` fixture of tests/distributed/conftest.py).  The tests skip when
moto is not installed.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from click.testing import CliRunner

import graphshard as gs
from graphshard.cli import cli
from graphshard.errors import FormatError, PartitionNotFoundError, ValidationError
from graphshard.partition.config import read_config
from graphshard.storage import fsys
from graphshard.storage.files import INCOMPLETE_MARKER


def _same_partition(a: tuple, b: tuple) -> None:
    for x, y in ((a[0].ndata, b[0].ndata), (a[0].edata, b[0].edata), (a[1], b[1]),
                 (a[2], b[2])):
        assert sorted(x) == sorted(y)
        for key in x:
            np.testing.assert_array_equal(np.asarray(x[key]), np.asarray(y[key]))
    np.testing.assert_array_equal(a[0].edges()[0], b[0].edges()[0])
    assert a[4:] == b[4:]


def test_partition_to_s3_equals_local_and_loads_back(cora, s3_dir, tmp_path, monkeypatch):
    local = tmp_path / "local"
    gs.partition_graph(cora, "cora", 3, local, part_method="metis")
    res = gs.partition.build_partitions(cora, "cora", 3, f"{s3_dir}/parts",
                                        part_method="metis")
    assert res.config_path == f"{s3_dir}/parts/cora.json"
    files = fsys.open_location(f"{s3_dir}/parts").files()
    assert "cora.json" in files and INCOMPLETE_MARKER not in files
    assert sorted(files) == sorted(p.relative_to(local).as_posix()
                                   for p in local.rglob("*") if p.is_file())
    # the same bytes as a local run (so the same SHA-256 in the config)
    cfg, ref = read_config(res.config_path), read_config(local / "cora.json")
    assert cfg.files == ref.files and cfg.uri == res.config_path
    # a part is copied to this node once, checked against its SHA-256 on the way
    copies = []
    real = fsys.download_verified
    monkeypatch.setattr(fsys, "download_verified",
                        lambda *a: copies.append(a[0].name) or real(*a))
    for p in range(3):
        _same_partition(gs.load_partition(res.config_path, p),
                        gs.load_partition(local / "cora.json", p))
    assert sorted(copies) == sorted(["graph.safetensors", "node_feats.safetensors",
                                     "edge_feats.safetensors"] * 3)
    gs.load_partition(res.config_path, 1)
    assert len(copies) == 9  # already on this node: nothing copied again
    nfeat = gs.load_partition(res.config_path, 2)[1]["_N/feat"]
    assert isinstance(nfeat, np.memmap)  # the local copy is memory-mapped


def test_config_in_the_uri_instead_of_the_environment(cora, s3_endpoint, s3_dir,
                                                      monkeypatch):
    """What a Ray worker without the variables gets: endpoint and keys in the URI."""
    for key in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_DEFAULT_REGION", "AWS_EC2_METADATA_DISABLED"):
        monkeypatch.delenv(key)
    uri = (f"s3://testing:testing@{s3_dir[5:]}/parts?endpoint_override={s3_endpoint}"
           "&scheme=http&region=us-east-1")
    res = gs.partition.build_partitions(cora, "cora", 2, uri, part_method="hash")
    assert fsys.shown(res.config_path) == f"{s3_dir}/parts/cora.json"
    assert gs.load_partition(res.config_path, 1)[0].num_nodes() > 0


def test_a_rewrite_never_looks_complete_and_a_bad_part_is_refused(cora, s3_dir,
                                                                  monkeypatch):
    out = f"{s3_dir}/parts"
    gs.partition_graph(cora, "cora", 2, out, part_method="hash")
    # the second run dies while uploading: the old config is gone before any part file
    # changes, and the new one never arrives
    calls = []

    def dying_upload(self, source):
        calls.append(self.name)
        raise OSError("connection reset")

    monkeypatch.setattr(fsys.Location, "upload", dying_upload)
    with pytest.raises(OSError, match="connection reset"):
        gs.partition_graph(cora, "cora", 2, out, part_method="random")
    monkeypatch.undo()
    assert calls == ["edge_feats.safetensors"]  # the first file of the upload
    with pytest.raises(PartitionNotFoundError, match="partition config not found"):
        read_config(f"{out}/cora.json")
    assert INCOMPLETE_MARKER in fsys.open_location(out).files()
    # a rerun may write there again (the marker says it is ours)
    gs.partition_graph(cora, "cora", 2, out, part_method="hash")
    # a part file changed in the bucket (same size) is refused, naming the file
    part = fsys.open_location(f"{out}/part0/node_feats.safetensors")
    data = bytearray(part.read_bytes())
    data[-1] ^= 0xFF
    part.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"part0/node_feats.safetensors: SHA-256 differs"):
        gs.load_partition(f"{out}/cora.json", 0)
    cfg = read_config(f"{out}/cora.json")  # its node-local copy holds no bad file
    assert not (cfg.path.parent / "part0" / "node_feats.safetensors").exists()


def test_a_malformed_config_in_s3_is_named_by_its_uri(s3_dir):
    fsys.open_location(f"{s3_dir}/bad/g.json").write_bytes(b'{"graph_name": "g"}')
    with pytest.raises(FormatError, match=rf"^{s3_dir}/bad/g.json: missing key 'num_parts'"):
        read_config(f"{s3_dir}/bad/g.json")


def test_a_folder_of_other_files_is_refused(cora, s3_dir):
    fsys.open_location(f"{s3_dir}/mine/notes.txt").write_bytes(b"keep me")
    with pytest.raises(ValidationError, match="holds 1 files but no graphshard"):
        gs.partition_graph(cora, "cora", 2, f"{s3_dir}/mine", part_method="hash")
    assert fsys.open_location(f"{s3_dir}/mine").files() == ["notes.txt"]


def test_cli_partitions_to_s3(s3_dir):
    out = f"{s3_dir}/cli"
    result = CliRunner().invoke(cli, ["partition", "--generate", "sbm:nodes=300,edges=2000",
                                      "--parts", "2", "--out", out, "--json"])
    assert result.exit_code == 0, result.output
    assert f'"config": "{out}/sbm.json"' in result.output
    cfg = read_config(f"{out}/sbm.json")
    assert cfg.num_parts == 2 and cfg.read_report().num_nodes == 300
    shown = CliRunner().invoke(cli, ["inspect", f"{out}/sbm.json", "--json"])
    assert shown.exit_code == 0, shown.output
    assert f'"config": "{out}/sbm.json"' in shown.output and '"num_nodes": 300' in shown.output


def test_dist_graph_served_from_s3(ray_cluster, cora, s3_endpoint, s3_dir, tmp_path):
    """Servers copy their part from S3 (endpoint and keys in the URI: Ray's workers may
    have been started before this session set the variables) and answer as the whole
    graph does."""
    uri = (f"s3://testing:testing@{s3_dir[5:]}/served?endpoint_override={s3_endpoint}"
           "&scheme=http&region=us-east-1")
    res = gs.partition.build_partitions(cora, "cora", 2, uri, part_method="metis")
    gs.partition_graph(cora, "cora", 2, tmp_path, part_method="metis")
    whole = gs.distributed.assemble_graph(str(tmp_path / "cora.json"))
    dg = gs.distributed.DistGraph(str(res.config_path), colocate=())
    try:
        assert dg.config == res.config_path
        ids = np.random.default_rng(0).integers(0, cora.num_nodes(), 200)
        np.testing.assert_array_equal(dg.ndata["feat"][ids], whole.ndata["feat"][ids])
        seeds = np.arange(0, cora.num_nodes(), 97)
        a = gs.sampling.sample_neighbors(dg, seeds, 5, seed=3)
        b = gs.sampling.sample_neighbors(whole, seeds, 5, seed=3)
        et = ("_N", "_E", "_N")
        assert len(a.eids[et]) > len(seeds)
        np.testing.assert_array_equal(a.eids[et], b.eids[et])
    finally:
        dg.close()


def test_cli_serves_from_s3(ray_cluster, cora, s3_endpoint, s3_dir):
    """`graphshard serve s3://.../g.json` takes the URI as it is (not a local path) and
    prints the table (titled by the URI without its keys) and the line to connect (the URI
    as given: it is what connects)."""
    uri = (f"s3://testing:testing@{s3_dir[5:]}/cli?endpoint_override={s3_endpoint}"
           "&scheme=http&region=us-east-1")
    res = gs.partition.build_partitions(cora, "cora", 2, uri, part_method="hash")
    out = CliRunner().invoke(cli, ["serve", str(res.config_path), "--for", "0.1"])
    assert out.exit_code == 0, out.output
    assert "address: " in out.output and "DistGraph(" in out.output
    title, _, rest = out.output.partition("\n")
    assert title.strip() == f"serving {s3_dir}/cli/cora.json"  # no keys
    assert f"DistGraph('{res.config_path}'" in rest.replace("\n", "")


def _upload(folder, uri: str) -> None:
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            fsys.open_location(uri).child(file.relative_to(folder).as_posix()).upload(file)


@pytest.mark.parametrize("method", ["hash", "lp"])
def test_pipeline_from_s3_input_to_s3_output(cora, s3_dir, tmp_path, method, monkeypatch):
    """Chunks read from S3 one at a time, the work folder and the parts in S3: the same
    bytes as a local run (so the same SHA-256s in the config), no work left behind.  lp
    (several shards, coarse levels) exchanges its shard files through
    OUT/.graphshard-work, not a local folder, and assigns as a local run does."""
    chunked = tmp_path / "chunked"
    gs.io.write_chunked(cora, chunked, 3, graph_name="cora")
    _upload(chunked, f"{s3_dir}/chunked")
    options = {"seed": 1, "max_task_entries": 2000, "coarse_entries": 2000} \
        if method == "lp" else {}
    uploads: list[str] = []
    real_upload = fsys.Location.upload

    def upload(loc, source):
        uploads.append(loc.uri)
        return real_upload(loc, source)

    monkeypatch.setattr(fsys.Location, "upload", upload)
    res = gs.pipeline.run_pipeline(f"{s3_dir}/chunked", 2, f"{s3_dir}/parts", method=method,
                                   assign_options=options)
    ref = gs.pipeline.run_pipeline(chunked, 2, tmp_path / "parts", method=method,
                                   assign_options=options)
    lp_files = {u.split("/.graphshard-work/", 1)[1].split("/", 1)[1] for u in uploads
                if "/.graphshard-work/lp-" in u}
    if method == "lp":  # every level's pieces and shards
        for name in ("level0/piece2_off.npy", "level0/piece2_keys1", "level0/shard1_indptr",
                     "level1/piece1_w0", "level1/shard0_weights"):
            assert any(f.startswith(name) for f in lp_files), sorted(lp_files)
        assert (tmp_path / "parts/assignment/_N.npy").read_bytes() == fsys.open_location(
            f"{s3_dir}/parts/assignment/_N.npy").read_bytes()  # the local run's assignment
    else:
        assert not lp_files
    assert res.partitions.config_path == f"{s3_dir}/parts/cora.json"
    got = read_config(res.partitions.config_path)
    assert got.files == read_config(ref.partitions.config_path).files  # the same bytes
    files = fsys.open_location(f"{s3_dir}/parts").files()
    assert "assignment/assignment.json" in files and INCOMPLETE_MARKER not in files
    assert not [f for f in files if f.startswith(".graphshard-work/")]  # removed at the end
    # the local run's files (its part markers are in the work folder here)
    assert sorted(files) == sorted(p.relative_to(tmp_path / "parts").as_posix()
                                   for p in (tmp_path / "parts").rglob("*") if p.is_file()
                                   and not p.name.endswith("safetensors.done.json"))
    _same_partition(gs.load_partition(res.partitions.config_path, 1),
                    gs.load_partition(ref.partitions.config_path, 1))
    if method != "hash":
        return
    # the command line, input and output in S3, tasks in this process
    out = f"{s3_dir}/cli"
    result = CliRunner().invoke(cli, ["pipeline", f"{s3_dir}/chunked", "--parts", "2",
                                      "--method", "hash", "--out", out, "--engine", "local",
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert read_config(f"{out}/cora.json").files == got.files
    # dispatch alone: chunks, assignment and output all URIs
    result = CliRunner().invoke(cli, ["dispatch", f"{s3_dir}/chunked", f"{out}/assignment",
                                      "--out", f"{s3_dir}/d", "--engine", "local"])
    assert result.exit_code == 0, result.output
    assert read_config(f"{s3_dir}/d/cora.json").files == got.files


def test_lp_with_remote_work_folder_equals_local(cora, s3_dir, tmp_path, caplog):
    """lp_assign with a URI work folder (thinned coarse levels included: their files get
    a new name, never rewritten in place): the parts of a local run, and the work folder
    removed at the end."""
    from graphshard.io.chunked import load_chunked_meta
    from graphshard.partition.lp import lp_assign

    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    meta = load_chunked_meta(tmp_path / "chunked")
    options = {"seed": 2, "max_task_entries": 3000, "coarse_nodes": 200, "thin_degree": 3,
               "num_workers": 2}
    caplog.set_level(logging.INFO, logger="graphshard.partition.lp.thin")
    got = lp_assign(meta, 3, work_dir=f"{s3_dir}/work", **options)["_N"]
    assert "lp: thinned" in caplog.text
    ref = lp_assign(meta, 3, work_dir=tmp_path / "work", **options)["_N"]
    assert np.array_equal(got, ref) and np.bincount(got).min() > 0
    assert fsys.open_location(f"{s3_dir}/work").files() == []


def test_pipeline_to_s3_heterogeneous_with_edge_features_and_two_hops(s3_dir, tmp_path):
    """Node and edge types, Ragged node features, edge features (whose owners come from
    every part's routed file) and a 2-hop halo (a part reads other parts' routed edges):
    the local run's bytes."""
    from shop import shop_graph

    chunked = tmp_path / "chunked"
    g = shop_graph()
    del g.nodes["i"].data["bow"]  # sparse: the chunked format has no sparse column
    gs.io.write_chunked(g, chunked, 2, graph_name="shop")
    _upload(chunked, f"{s3_dir}/chunked")
    kw = {"method": "random", "dispatch_options": {"num_hops": 2}}
    res = gs.pipeline.run_pipeline(f"{s3_dir}/chunked", 2, f"{s3_dir}/parts", **kw)
    ref = gs.pipeline.run_pipeline(chunked, 2, tmp_path / "parts", **kw)
    assert read_config(res.partitions.config_path).files == \
        read_config(ref.partitions.config_path).files


def test_a_remote_chunk_path_outside_its_folder_is_refused(s3_dir, tmp_path):
    import json

    from graphshard.io.chunked import iter_edge_chunks, load_chunked_meta

    gs.io.write_chunked(gs.graph(([0, 1], [1, 2])), tmp_path / "g", 1)
    meta = json.loads((tmp_path / "g" / "metadata.json").read_text())
    meta["edges"]["_N:_E:_N"]["data"] = ["../elsewhere/edges.npy"]
    fsys.open_location(f"{s3_dir}/g").child("metadata.json").write_bytes(
        json.dumps(meta).encode())
    loaded = load_chunked_meta(f"{s3_dir}/g")
    assert loaded.source == f"{s3_dir}/g/metadata.json"
    with pytest.raises(FormatError, match="leads outside the folder of a remote metadata"):
        next(iter_edge_chunks(loaded, "_N:_E:_N"))


def test_pipeline_to_s3_resumes_from_the_remote_pieces(cora, s3_dir, tmp_path, monkeypatch):
    """A run that fails while building parts leaves a folder that does not look
    complete; the same call again takes the assignment, the routed edge and feature
    pieces and the finished part from S3 (checked against their done-markers) and writes
    what a local run writes."""
    import importlib

    route_mod = importlib.import_module("graphshard.pipeline.route")
    parts_mod = importlib.import_module("graphshard.pipeline.parts")
    run_mod = importlib.import_module("graphshard.pipeline.run")

    chunked = tmp_path / "chunked"
    gs.io.write_chunked(cora, chunked, 3, graph_name="cora")
    _upload(chunked, f"{s3_dir}/chunked")
    out = f"{s3_dir}/parts"
    calls = {"build": 0}
    real_build = parts_mod._build_part

    def failing(*args, **kwargs):
        calls["build"] += 1
        if calls["build"] == 2:
            raise RuntimeError("worker lost")
        return real_build(*args, **kwargs)

    monkeypatch.setattr(parts_mod, "_build_part", failing)
    with pytest.raises(RuntimeError, match="worker lost"):
        gs.pipeline.run_pipeline(f"{s3_dir}/chunked", 3, out, method="random")
    files = fsys.open_location(out).files()
    assert INCOMPLETE_MARKER in files and "cora.json" not in files
    pieces = [f for f in files if f.startswith(".graphshard-work/") and
              f.endswith(".done.json")]
    assert any("/edges/" in f for f in pieces) and any("/feats/" in f for f in pieces)
    assert sum("/parts/" in f for f in pieces) == 1  # the part built before the failure
    counted = {"assign": 0, "route": 0, "piece": 0, "build": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            counted[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(run_mod, "assign", counting("assign", run_mod.assign))
    monkeypatch.setattr(route_mod, "route_edges", counting("route", route_mod.route_edges))
    monkeypatch.setattr(route_mod, "save_tensors",  # routed edge and feature pieces
                        counting("piece", route_mod.save_tensors))
    monkeypatch.setattr(parts_mod, "_build_part", counting("build", real_build))
    res = gs.pipeline.run_pipeline(f"{s3_dir}/chunked", 3, out, method="random")
    assert counted == {"assign": 0, "route": 0, "piece": 0, "build": 2}
    ref = gs.pipeline.run_pipeline(chunked, 3, tmp_path / "parts", method="random")
    assert read_config(res.partitions.config_path).files == \
        read_config(ref.partitions.config_path).files
    files = fsys.open_location(out).files()
    assert INCOMPLETE_MARKER not in files and "cora.json" in files
    assert not [f for f in files if f.startswith(".graphshard-work/")]


def test_pipeline_refuses_a_missing_input(s3_dir):
    with pytest.raises(PartitionNotFoundError, match=r"metadata\.json: not found"):
        gs.pipeline.run_pipeline(f"{s3_dir}/none", 2, f"{s3_dir}/parts", method="hash")
    assert fsys.open_location(f"{s3_dir}/parts").files() == []  # nothing written


def test_partition_report_never_prints_the_keys_of_its_uri(s3_dir, s3_uri):
    """Issue 41 item 7: `partition --out s3://KEY:SECRET@bucket/...` printed the secret in
    the report's title and in --json (error messages already left it out)."""
    from click.testing import CliRunner

    from graphshard.cli import cli

    out = s3_uri(f"{s3_dir}/secret")
    for extra in ([], ["--json"]):
        result = CliRunner().invoke(cli, ["-q", "partition", "--generate",
                                          "sbm:nodes=200,edges=1600,blocks=2", "-k", "2",
                                          "-m", "hash", "--out", out, *extra])
        assert result.exit_code == 0, result.output
        assert "testing:testing" not in result.output and "endpoint_override" not in \
            result.output
        assert f"{s3_dir}/secret/sbm.json" in result.output.replace("\n", "")
