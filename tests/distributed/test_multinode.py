"""Serving on a 3-node Ray cluster on one machine (``ray.cluster_utils.Cluster``, as Ray's
own tests do): placement rules, a client on the head, the CLI joining through RAY_ADDRESS,
and a node lost mid-run.

One cluster for the module (a head and two workers, 1 CPU each, all on 127.0.0.1), built
before any other Ray of the test session starts (tests/distributed/conftest.py orders this module
first): a process joins one Ray only.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import graphshard as gs
from graphshard.cli import cli
from waiting import run_while_busy, wait_for_nodes_while_busy

LOOPBACK = "127.0.0.1"


@dataclass
class Nodes:
    ray: Any
    cluster: Any
    head: str  # node IDs
    workers: list[str]
    worker_nodes: list[Any]  # ray._private.node.Node of each worker, as remove_node takes
    driver: str  # the node this test process joined


@pytest.fixture(scope="module")
def nodes():
    ray = pytest.importorskip("ray", reason="needs ray (pip install 'graphshard[ray]')")
    if ray.is_initialized():
        pytest.skip("this process joined another Ray first; a 3-node cluster needs its own "
                    "(run this module alone or first)")
    from ray.cluster_utils import Cluster

    from graphshard.runtime.ray import _local_node_address, _startup_env, _use_local_token, init_ray

    # a private Ray temp folder: Ray writes the cluster's address there, where another
    # process of this machine starting a Ray of its own would otherwise find and join it
    # (a short path: Ray's socket paths must fit in 107 bytes)
    tmp = tempfile.mkdtemp(prefix="gsray", dir="/tmp")
    before = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "RAY_AUTH_MODE")}
    os.environ["RAY_TMPDIR"] = tmp
    # the nodes authenticate as the driver will (with this machine's Ray token if it has
    # one, as init_ray joins a loopback cluster): with a mismatch Ray cancels every actor
    _use_local_token()
    cluster = None
    try:
        # every node listens on 127.0.0.1 only, with the deadlines and priority init_ray gives
        with _local_node_address(), _startup_env():
            cluster = Cluster(initialize_head=True, head_node_args={
                "num_cpus": 1, "node_ip_address": LOOPBACK, "include_dashboard": False})
            workers = [cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK,
                                        resources={f"worker{i}": 1}) for i in range(2)]
        wait_for_nodes_while_busy(cluster)
        init_ray(ray, cluster.address, include_dashboard=False, log_to_driver=False)
        driver = ray.get_runtime_context().get_node_id()
        yield Nodes(ray, cluster, cluster.head_node.node_id, [w.node_id for w in workers],
                    workers, driver)
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class Cora3:
    config: str
    nids: np.ndarray  # shuffled ID -> original Cora ID
    whole: gs.Graph


def _cora3(cora, out) -> Cora3:
    nids, _ = gs.partition_graph(cora, "cora", 3, str(out), part_method="random",
                                 return_mapping=True)
    cfg = str(out / "cora.json")
    return Cora3(cfg, np.asarray(nids), gs.distributed.assemble_graph(cfg))


@pytest.fixture(scope="module")
def cora3(cora, tmp_path_factory) -> Cora3:
    return _cora3(cora, tmp_path_factory.mktemp("cora3"))


def _check_answers(dg, p: Cora3, cora, ids) -> None:
    """Features of ``ids`` are Cora's, and a 2-hop sample is the whole graph's."""
    feat = dg.nodes["_N"].data["feat"][ids]
    np.testing.assert_array_equal(feat, cora.ndata["feat"][p.nids[ids]])
    got = gs.sampling.sample_blocks(dg, ids, [4, 3], seed=7)
    want = gs.sampling.sample_blocks(p.whole, ids, [4, 3], seed=7)
    for x, y in zip(got.blocks, want.blocks, strict=True):
        np.testing.assert_array_equal(x.src_nodes["_N"], y.src_nodes["_N"])
        for et in y.src:
            np.testing.assert_array_equal(x.src[et], y.src[et])
            np.testing.assert_array_equal(x.eids[et], y.eids[et])


def test_spread_puts_one_server_on_each_node_and_a_head_client_reads(nodes, cora3, cora):
    handle = gs.distributed.serve(cora3.config, placement="spread")
    try:
        assert sorted(handle.node_ids) == sorted([nodes.head, *nodes.workers])
        assert handle.node_ips == (LOOPBACK,) * 3
        assert [pl.part_id for pl in handle.places] == [0, 1, 2]
        dg = gs.distributed.DistGraph(cora3.config, colocate=())
        assert dg.handle is None  # joined the running servers
        book = dg.get_partition_book()
        ids = np.arange(0, 2708, 37)
        assert set(book.nid2partid(ids, "_N").tolist()) == {0, 1, 2}  # every server asked
        _check_answers(dg, cora3, cora, ids)
    finally:
        handle.shutdown()
    assert gs.distributed.find_servers(cora3.config) is None


def test_pack_and_pinned_placement(nodes, cora3):
    handle = gs.distributed.serve(cora3.config, placement="pack")
    try:
        assert handle.node_ids == (nodes.driver,) * 3
    finally:
        handle.shutdown()
    want = [nodes.workers[1], nodes.head, nodes.workers[0]]
    pins = {0: want[0][:12], 1: want[1], 2: want[2][:8]}  # IDs and ID prefixes
    handle = gs.distributed.serve(cora3.config, placement=pins)
    try:
        assert list(handle.node_ids) == want, (handle.node_ids, want, nodes)
        assert [pl.node_id for pl in handle.locate()] == want
    finally:
        handle.shutdown()
    bad = [({1: LOOPBACK}, r"node '127.0.0.1' of partition 1 matches 3 live nodes"),
           ({0: "0123abcd"}, r"node '0123abcd' of partition 0 matches no live Ray node; "
                             r"live nodes: \w{12} \(127.0.0.1\)"),
           ({3: want[0]}, r"partition 3 does not exist \(the graph has 3\)"),
           ("west", r"placement must be one of \['spread', 'pack'\]")]
    for placement, message in bad:
        with pytest.raises(gs.ValidationError, match=message):
            gs.distributed.serve(cora3.config, placement=placement)
        assert gs.distributed.find_servers(cora3.config) is None  # nothing left started


def test_cli_serve_joins_through_ray_address_and_prints_nodes(nodes, cora3):
    pins = f"0={nodes.workers[0][:12]},1={nodes.workers[1][:12]},2={nodes.head[:12]}"
    env = {**os.environ, "RAY_ADDRESS": nodes.cluster.address}
    run = run_while_busy(
        [sys.executable, "-c", "import sys; from graphshard.cli import main; "
         "sys.exit(main(sys.argv[1:]))", "serve", cora3.config, "--placement", pins,
         "--detach"], "serve --detach", env=env)
    try:
        assert run.returncode == 0, run.stderr[-3000:]
        rows = [line.split("│") for line in run.stdout.splitlines() if "cora-" in line]
        cells = [[c.strip() for c in row if c.strip()] for row in rows]
        assert [(c[0], c[2], c[3]) for c in cells] == [
            ("0", nodes.workers[0][:12], LOOPBACK), ("1", nodes.workers[1][:12], LOOPBACK),
            ("2", nodes.head[:12], LOOPBACK)]
        assert f"address: {nodes.cluster.address}" in run.stdout
        assert "from any machine of the cluster" in run.stdout
        actors = gs.distributed.find_servers(cora3.config)  # detached: still running
        assert actors is not None
        infos = nodes.ray.get([a.info.remote() for a in actors], timeout=300)
        assert [i["node_id"] for i in infos] == [nodes.workers[0], nodes.workers[1],
                                                 nodes.head]
    finally:
        gs.distributed.shutdown(cora3.config)
    assert gs.distributed.find_servers(cora3.config) is None


def test_cli_refuses_a_bad_placement_before_starting_ray(tmp_path):
    result = CliRunner().invoke(cli, ["serve", str(tmp_path / "g.json"), "--placement",
                                      "0=a,x=b"])
    assert result.exit_code == 2
    assert "'0=a,x=b' is not spread, pack or P=NODE,... pairs" in result.output


def test_pipeline_on_three_nodes_writes_what_one_process_writes(nodes, cora, tmp_path,
                                                                 caplog):
    """assign + dispatch with their Ray tasks on the cluster's three 1-CPU nodes (each
    task takes a CPU, so they spread, and the log says where): the same partition files as
    the in-process run."""
    import json
    import logging
    import re

    from graphshard.pipeline import run_pipeline
    from graphshard.storage.tensorfile import load_tensors

    gs.io.write_chunked(cora, tmp_path / "chunked", 3, fmt="parquet")
    caplog.set_level(logging.INFO, logger="graphshard.runtime.executor")
    runs = {engine: run_pipeline(tmp_path / "chunked", 3, tmp_path / engine, method="random",
                                 use_ray=engine == "ray", assign_options={"seed": 4})
            for engine in ("local", "ray")}
    assert nodes.ray.is_initialized()  # the cluster's Ray, not one the pipeline started
    ran = [r.getMessage() for r in caplog.records if "tasks ran on" in r.getMessage()]
    assert ran  # one line per Ray step of dispatch
    used = {m for line in ran for m in re.findall(r"node (\w{12}) \(127\.0\.0\.1\)", line)}
    assert used <= {n[:12] for n in [nodes.head, *nodes.workers]} and len(used) >= 2, ran
    a, b = (r.partitions.config_path for r in runs.values())
    ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
    for key in ("num_parts", "node_map", "edge_map", "num_nodes", "num_edges"):
        assert ja[key] == jb[key], key
    for p in range(3):
        for rel in ja[f"part-{p}"].values():
            ta, _ = load_tensors(a.parent / rel)
            tb, _ = load_tensors(b.parent / rel)
            assert sorted(ta) == sorted(tb), rel
            for k in ta:
                np.testing.assert_array_equal(ta[k], tb[k], err_msg=f"{rel}: {k}")
    # the command joins the cluster through RAY_ADDRESS and, with -v, says where tasks ran
    env = {**os.environ, "RAY_ADDRESS": nodes.cluster.address}
    run = run_while_busy(
        [sys.executable, "-c", "import sys; from graphshard.cli import main; "
         "sys.exit(main(sys.argv[1:]))", "-v", "pipeline", str(tmp_path / "chunked"),
         "--parts", "3", "--method", "random", "--seed", "4", "--out", str(tmp_path / "cli")],
        "pipeline -v", env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    used = set(re.findall(r"node (\w{12}) \(127\.0\.0\.1\)", run.stderr))
    assert used and used <= {n[:12] for n in [nodes.head, *nodes.workers]}, run.stderr[-3000:]
    assert json.loads((tmp_path / "cli" / a.name).read_text())["node_map"] == ja["node_map"]


def test_pipeline_from_s3_to_s3_on_three_nodes_shares_no_folder(nodes, cora, s3_dir, s3_uri,
                                                                tmp_path, caplog):
    """Input, work folder and output in S3 (moto on loopback; endpoint and keys in the
    URI, as the nodes started without them): the tasks spread over the nodes and each node
    reads what its tasks need through the file layer (the executor's per-node byte
    counts), while the driver reads only metadata-sized files and writes about the
    assignment and the config; the parts have the checksums of an in-process local run."""
    import logging
    import re

    from graphshard.partition.config import read_config
    from graphshard.pipeline import run_pipeline
    from graphshard.storage import fsys

    chunked = tmp_path / "chunked"
    gs.io.write_chunked(cora, chunked, 3, fmt="parquet", graph_name="cora")
    src, out = s3_uri(f"{s3_dir}/chunked"), s3_uri(f"{s3_dir}/parts")
    chunk_bytes = 0
    for file in sorted(chunked.rglob("*")):
        if file.is_file():
            fsys.open_location(src).child(file.relative_to(chunked).as_posix()).upload(file)
            chunk_bytes += file.stat().st_size if file.name != "metadata.json" else 0
    caplog.set_level(logging.INFO, logger="graphshard.runtime.executor")
    before = fsys.traffic()
    res = run_pipeline(src, 3, out, method="random", use_ray=True, assign_options={"seed": 4})
    driver = fsys.traffic()
    ref = run_pipeline(chunked, 3, tmp_path / "local", method="random",
                       assign_options={"seed": 4})
    assert fsys.shown(res.partitions.config_path) == f"{s3_dir}/parts/cora.json"
    config = read_config(res.partitions.config_path)
    assert config.files == read_config(ref.partitions.config_path).files
    steps = {}
    for record in caplog.records:
        desc, _, rest = record.getMessage().partition(": tasks ran on ")
        if rest:
            steps[desc] = {node: (int(n), int(r or 0), int(w or 0)) for node, n, r, w in
                           re.findall(r"node (\w{12}) \(127\.0\.0\.1\) x(\d+)"
                                      r"(?: \[file layer: read (\d+) B, wrote (\d+) B\])?",
                                      rest)}
    assert {"routing edges", "routing features", "building parts"} <= set(steps), steps
    used = {node for ran in steps.values() for node in ran}
    assert len(used) >= 2 and used <= {n[:12] for n in [nodes.head, *nodes.workers]}, steps
    for desc in ("routing edges", "routing features", "building parts"):
        for node, (_, read, _) in steps[desc].items():
            assert read > 0, (desc, node, steps)  # its inputs came through the file layer
    assert all(w > 0 for _, _, w in steps["building parts"].values()), steps  # uploads
    assert sum(r for ran in steps.values() for _, r, _ in ran.values()) >= chunk_bytes
    # the driver: reads metadata.json and done-markers, writes the assignment and config
    listing = fsys.open_location(out)
    small = sum(listing.child(f).size() or 0 for f in listing.files()
                if f.startswith("assignment/") or f == "cora.json")
    read, written = driver.read - before.read, driver.written - before.written
    assert read < min(chunk_bytes, 64 << 10), (read, chunk_bytes)  # measured: 4.9 KB
    assert written < 3 * small + (64 << 10), (written, small)  # measured: 53 KB, small 31 KB


def test_lp_pipeline_from_s3_to_s3_on_three_nodes(nodes, cora, s3_dir, s3_uri, tmp_path):
    """lp on the 3-node cluster with input and output in S3: its shard actors exchange
    their files through OUT/.graphshard-work (removed at the end) and get the driver's
    arrays through the object store; the assignment and the parts are a local run's."""
    from graphshard.partition.config import read_config
    from graphshard.pipeline import run_pipeline
    from graphshard.storage import fsys

    chunked = tmp_path / "chunked"
    gs.io.write_chunked(cora, chunked, 3, graph_name="cora")
    src, out = s3_uri(f"{s3_dir}/chunked"), s3_uri(f"{s3_dir}/parts")
    for file in sorted(chunked.rglob("*")):
        if file.is_file():
            fsys.open_location(src).child(file.relative_to(chunked).as_posix()).upload(file)
    run = {"method": "lp", "assign_options": {"seed": 1, "max_task_entries": 2000,
                                              "coarse_entries": 2000}}
    res = run_pipeline(src, 3, out, use_ray=True, **run)
    ref = run_pipeline(chunked, 3, tmp_path / "local", **run)
    files = fsys.open_location(out).files()
    assert not [f for f in files if f.startswith(".graphshard-work/")], files
    assert fsys.open_location(out).child("assignment/_N.npy").read_bytes() == \
        (tmp_path / "local/assignment/_N.npy").read_bytes()
    assert read_config(res.partitions.config_path).files == \
        read_config(ref.partitions.config_path).files


def test_losing_a_node_moves_its_servers_or_fails_clearly(nodes, cora3, cora,
                                                          tmp_path_factory):
    lost = next(i for i, n in enumerate(nodes.workers) if n != nodes.driver)
    gone, other = nodes.workers[lost], nodes.workers[1 - lost]
    pins = {0: nodes.head, 1: gone, 2: other}
    # the same graph served twice: restarted servers, and servers Ray will not restart
    fragile = _cora3(cora, tmp_path_factory.mktemp("cora3-fragile"))
    # the servers' default silence limits (a restart on another node may take minutes on a
    # busy machine: the 60 s this test once gave it failed under 8 busy processes)
    kept = gs.distributed.serve(cora3.config, placement=pins)
    once = gs.distributed.serve(fragile.config, placement=pins, max_restarts=0)
    try:
        dg = gs.distributed.DistGraph(cora3.config, colocate=())
        dg_once = gs.distributed.DistGraph(fragile.config, colocate=())
        ids = np.arange(0, 2708, 11)
        _check_answers(dg, cora3, cora, ids)
        _check_answers(dg_once, fragile, cora, ids)
        nodes.cluster.remove_node(nodes.worker_nodes[lost])
        # partition 1's server comes back on a surviving node: the same answers
        _check_answers(dg, cora3, cora, ids)
        moved = kept.locate()
        assert moved[1].node_id in (nodes.head, other) and moved[1].pid != kept.pids[1]
        assert [pl.node_id for pl in moved[::2]] == [nodes.head, other]  # others stay
        # without restarts: a clear error naming the partition, not a timeout
        on1 = ids[dg_once.get_partition_book().nid2partid(ids, "_N") == 1]
        with pytest.raises(gs.distributed.ServerError,
                           match=r"graph server of partition 1 \(cora-\w+:part1\) is gone "
                                 r"for good") as err:
            dg_once.nodes["_N"].data["feat"][on1]
        assert not isinstance(err.value, gs.distributed.ServerTimeoutError)
        off1 = ids[dg_once.get_partition_book().nid2partid(ids, "_N") != 1]
        np.testing.assert_array_equal(dg_once.nodes["_N"].data["feat"][off1],
                                      cora.ndata["feat"][fragile.nids[off1]])
    finally:
        kept.shutdown()
        once.shutdown()


def _stall_on(target: str, flags: str, fail_retry: bool) -> Any:
    """A ``build_part`` for the Ray workers (pickled by value): the first call on node
    ``target`` claims its part in ``flags/claim`` and stalls until the node is removed;
    calls elsewhere wait for the claim, holding their CPU (so one part must go to
    ``target``), then build.  The claimed part's retry (on a surviving node) builds it too,
    or with ``fail_retry`` raises.  Each call leaves ``flags/<part>-built|reused-<pid>``."""
    from graphshard.pipeline.parts import build_part as real

    def build_part(plan, p, *args):
        import os
        import time

        import ray

        claim = os.path.join(flags, "claim")
        if ray.get_runtime_context().get_node_id() == target:
            with open(claim, "x") as f:  # one call only: the node is gone after it
                f.write(str(p))
            time.sleep(600)
        for _ in range(1200):
            if os.path.exists(claim):
                break
            time.sleep(0.1)
        with open(claim) as f:
            lost = f.read()
        if fail_retry and lost == str(p):
            raise RuntimeError(f"part {p} failed after its node was lost")
        done = os.path.join(plan.out, f"part{p}", "graph.safetensors.done.json")
        kind = "reused" if os.path.exists(done) else "built"
        open(os.path.join(flags, f"{p}-{kind}-{os.getpid()}"), "w").close()
        return real(plan, p, *args)

    return build_part


def _lose_a_node_during(nodes, flags, patch, run) -> BaseException | None:
    """Add a node, ``patch(its ID)`` the task function, ``run()`` in a thread until a task
    on the node writes ``flags/claim``, remove the node, and return what ``run`` raised
    (None: it finished).  Fails the test if no task reached the node, or if ``run`` is
    still going 240 s after the loss."""
    import threading

    from graphshard.runtime.ray import _local_node_address

    with _local_node_address():
        node = nodes.cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK,
                                      object_store_memory=80 << 20)
    wait_for_nodes_while_busy(nodes.cluster, "the added node starting")
    flags.mkdir()
    patch(node.node_id)
    error: list[BaseException] = []

    def target() -> None:
        try:
            run()
        except BaseException as exc:  # handed to the test's thread
            error.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        for _ in range(2400):  # a task on the new node has started
            if (flags / "claim").exists() or not thread.is_alive():
                break
            thread.join(0.1)
        assert (flags / "claim").exists(), ("no task ran on the added node", error)
    finally:
        nodes.cluster.remove_node(node)
    thread.join(240)
    assert not thread.is_alive(), "the pipeline hangs after losing a node"
    return error[0] if error else None


def _stall_task(real: Any, target: str, flags: str) -> Any:
    """``real`` for the Ray workers (pickled by value), but its first call on node
    ``target`` writes ``flags/claim`` and stalls until the node is removed."""

    def task(*args, **kwargs):
        import os
        import time

        import ray

        if ray.get_runtime_context().get_node_id() == target:
            with open(os.path.join(flags, "claim"), "x"):
                pass
            time.sleep(600)
        return real(*args, **kwargs)

    task.__name__ = real.__name__
    return task


def _same_output(config, b) -> None:
    """The folder of ``config`` and folder ``b`` hold the same files with the same bytes,
    but for the config's dispatch seconds and assignment path."""
    import json

    a = config.parent
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    for rel in names:
        x, y = (a / rel).read_bytes(), (b / rel).read_bytes()
        if rel != config.name:
            assert x == y, rel
            continue
        jx, jy = json.loads(x), json.loads(y)
        for doc in (jx, jy):
            doc["graphshard"]["report"].pop("seconds")
            doc["graphshard"]["params"].pop("assignment")
        assert jx == jy


def test_pipeline_survives_a_node_lost_mid_dispatch_and_resumes(nodes, cora, tmp_path,
                                                                 monkeypatch, caplog):
    """A worker node is removed while a dispatch part task runs on it: Ray runs the task
    again on a surviving node and the output equals a clean run's byte for byte.  When
    the task fails after the loss, the run stops with that error (in bounded time), and
    the same call again reuses the assignment and the finished parts: the same bytes.
    (A node of its own is added for each loss, so the module's nodes stay.)"""
    import importlib
    import logging

    from graphshard.pipeline import run_pipeline

    dispatch_module = importlib.import_module("graphshard.pipeline.dispatch")

    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    run = {"method": "random", "assign_options": {"seed": 4}}
    clean = run_pipeline(tmp_path / "chunked", 4, tmp_path / "clean", **run)
    caplog.set_level(logging.INFO, logger="graphshard.pipeline")

    def lossy(out, fail_retry: bool) -> tuple[list[str], BaseException | None]:
        flags = tmp_path / f"flags-{out}"

        def patch(node_id: str) -> None:
            monkeypatch.setattr(dispatch_module, "build_part",
                                _stall_on(node_id, str(flags), fail_retry))

        error = _lose_a_node_during(nodes, flags, patch, lambda: run_pipeline(
            tmp_path / "chunked", 4, tmp_path / out, use_ray=True, **run))
        monkeypatch.undo()
        return sorted(f.name for f in flags.iterdir()), error

    # lost mid-run: Ray reruns the part task elsewhere
    calls, err = lossy("retried", fail_retry=False)
    assert err is None, err
    claimed = (tmp_path / "flags-retried" / "claim").read_text()
    assert sum(c.startswith(f"{claimed}-built") for c in calls) == 1, calls  # the retry
    _same_output(clean.partitions.config_path, tmp_path / "retried")
    # the task fails after the loss: a clear error, then the same call resumes
    calls, err = lossy("resumed", fail_retry=True)
    claimed = (tmp_path / "flags-resumed" / "claim").read_text()
    assert isinstance(err, RuntimeError), err
    assert f"part {claimed} failed after its node was lost" in str(err)
    assert not (tmp_path / "resumed" / clean.partitions.config_path.name).exists()
    assert sorted(c.split("-")[0] for c in calls if c != "claim") == sorted(
        {"0", "1", "2", "3"} - {claimed})  # the others finished
    caplog.clear()
    flags = tmp_path / "flags-rerun"
    flags.mkdir()
    (flags / "claim").write_text("none")  # nothing stalls, nothing fails
    monkeypatch.setattr(dispatch_module, "build_part", _stall_on("none", str(flags), False))
    run_pipeline(tmp_path / "chunked", 4, tmp_path / "resumed", use_ray=True, **run)
    assert any("reusing the assignment" in r.getMessage() for r in caplog.records)
    again = sorted(f.name.rsplit("-", 1)[0] for f in flags.iterdir() if f.name != "claim")
    assert again == sorted([f"{claimed}-built"] + [f"{p}-reused" for p in "0123"
                                                   if p != claimed])
    _same_output(clean.partitions.config_path, tmp_path / "resumed")


def test_lp_pipeline_survives_losing_the_node_of_a_shard_actor(nodes, cora, tmp_path,
                                                               monkeypatch):
    """lp's shard actors hold a CPU each, one per node here: the node of one is removed
    while it runs a cut task.  Ray cannot restart the actor (no CPU is free), so the pool
    runs the call on another actor and goes on with the others: the run ends (no hang) and
    writes what the same call in this process writes."""
    import importlib

    from graphshard.pipeline import run_pipeline

    refinement = importlib.import_module("graphshard.partition.lp.refinement")
    gs.io.write_chunked(cora, tmp_path / "chunked", 3)
    run = {"method": "lp", "assign_options": {"seed": 1, "max_task_entries": 2000}}
    clean = run_pipeline(tmp_path / "chunked", 3, tmp_path / "clean", **run)
    flags = tmp_path / "flags"
    real = refinement.cut_task

    def patch(node_id: str) -> None:
        monkeypatch.setattr(refinement, "cut_task", _stall_task(real, node_id, str(flags)))

    err = _lose_a_node_during(nodes, flags, patch, lambda: run_pipeline(
        tmp_path / "chunked", 3, tmp_path / "lossy", use_ray=True, **run))
    assert err is None, err
    _same_output(clean.partitions.config_path, tmp_path / "lossy")
