"""Three Ray nodes on one machine vs one node with the same CPUs: the pipeline, the bytes
it moves, and DistGraph sampling with the servers on other nodes than the client.

One command::

    python benchmarks/bench_multinode.py [--nodes 200000 --edges 2000000 --chunks 6]
                                         [--parts 3 --method lp --batches 30 --reps 2 --no-s3]

Each layout runs in its own child process, one after the other (3 nodes first, then 1;
with ``--reps N``, N runs each, interleaved 3, 1, 1, 3, 3, 1 ..., medians printed), on a
``ray.cluster_utils.Cluster`` of this machine (what Ray's own tests use):

- ``3 nodes``: a head and two workers, ``--cpus`` logical CPUs each (default 1), each
  with its own Ray temp folder (so each raylet writes its own stats), all on 127.0.0.1;
- ``1 node``: one head with 3 x ``--cpus``; the same object-store memory in all.

In each child:

1. ``run_pipeline`` (assign + dispatch, ``use_ray=True``) on a small R-MAT first (Ray
   workers started, numba caches loaded: not timed), then on the chunked R-MAT
   (``--edges``, ``--nodes``), timed, while the RSS of every process of the cluster is
   sampled every 0.2 s, with the bytes the Ray workers passed to read and write calls
   (Linux rchar/wchar: the work and output folders' traffic, which a cluster without a
   shared file system would have to carry, plus sockets; memory-mapped reads escape it);
2. bytes moved between the nodes' object stores: each raylet's "num chunks received
   total" and its count of pulls ("ObjectManager.SendPull"), from the ``debug_state.txt``
   every raylet writes (dumped every 0.5 s here), times the transfer chunk size (512 KiB
   here): a received object of n chunks holds more than n - 1 and at most n chunks, so
   the figure is a range (Ray 2.60 without its dashboard extras offers no byte counter);
3. with S3 (moto's S3 server on loopback, in the child; ``--no-s3`` skips it): the same
   pipeline from an ``s3://`` chunked folder to an ``s3://`` output (no folder shared:
   tasks read chunks and work pieces from S3 and upload theirs), the bytes the driver
   read and wrote through graphshard's file layer (:func:`graphshard.storage.fsys.traffic`)
   and those of the Ray tasks (summed from the executor's per-node log lines);
4. ``serve`` (3 nodes: the servers pinned to the two worker nodes, none on the head where
   the client runs; 1 node: all on the head) of the S3 output (else the local one), the
   bytes the servers copied through the file layer, and a ``DistGraph`` client on the
   head sampling 2 hops (fanouts 10, 5) of ``--batch-size`` seeds: one batch at a time
   (``gs.distributed.sample_blocks``) and a ``BlockLoader`` with 4 in flight.  The first batch
   is compared with the same sample on the whole graph first.

The parent prints both layouts side by side with the ratio 3 nodes / 1 node, and checks
that both wrote the same partition files (SHA-256 of every part file) before it quotes a
ratio.  On one machine "between nodes" is between the raylets' object stores and the
servers' processes: no network, so the figures count bytes and coordination, not a
network's bandwidth.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

LOOPBACK = "127.0.0.1"
CHUNK = 512 << 10  # Ray's object transfer chunk size in this benchmark (default 5 MiB)
FANOUTS = [10, 5]
BUCKET = "bench-multinode"
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


def _rmat_writer() -> Any:
    """``write_rmat_chunks`` of bench_pipeline.py (the same graphs)."""
    spec = importlib.util.spec_from_file_location(
        "bench_pipeline", Path(__file__).with_name("bench_pipeline.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.write_rmat_chunks


# ----- in the child: one layout ------------------------------------------------------------
class Sampler:
    """Peak RSS of every process under this one (raylets, GCS, workers), by kind, their
    CPU seconds, and the
    bytes the Ray workers passed to read and write calls (Linux rchar/wchar: files, pipes
    and sockets; memory-mapped reads are not counted) while the sampler ran."""

    def __init__(self) -> None:
        self.peaks: dict[str, tuple[float, str]] = {}
        self._start: dict[int, tuple[int, int]] = {}  # worker pid: (rchar, wchar)
        self._last: dict[int, tuple[int, int]] = {}
        self._cpu0: dict[int, float] = {}  # every process: CPU seconds at start, last seen
        self._cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        first = True
        while not self._stop.is_set():
            with contextlib.suppress(psutil.Error):
                for p in [me, *me.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        name, rss = p.name(), p.memory_info().rss / 2**20
                        kind = ("driver" if p.pid == me.pid else
                                "worker" if name.startswith("ray::") else "ray")
                        if rss > self.peaks.get(kind, (0.0, ""))[0]:
                            self.peaks[kind] = (rss, name)
                        t = p.cpu_times()
                        cpu = t.user + t.system
                        self._cpu0.setdefault(p.pid, cpu if first else 0.0)
                        self._cpu[p.pid] = cpu
                        if kind == "worker":
                            io = p.io_counters()
                            now = (io.read_chars, io.write_chars)
                            # a worker started since the sampler did: counted from 0
                            self._start.setdefault(p.pid, now if first else (0, 0))
                            self._last[p.pid] = now
            first = False
            time.sleep(0.2)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of every process while sampled (the driver's include
        this sampler's)."""
        return sum(v - self._cpu0[pid] for pid, v in self._cpu.items())

    def worker_io(self) -> list[int]:
        """[bytes read, bytes written] by the Ray workers while sampled."""
        return [sum(v[k] - self._start[pid][k] for pid, v in self._last.items())
                for k in (0, 1)]

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _transfers(temp_dirs: list[Path]) -> tuple[int, int]:
    """(chunks received, pulls) summed over the raylets, from their debug_state.txt."""
    time.sleep(1.2)  # two dump periods: the counts of everything finished by now
    chunks = pulls = 0
    for d in temp_dirs:
        for _ in range(50):  # the raylet rewrites the file in place: a read may be partial
            text = (d / "session_latest" / "logs" / "debug_state.txt").read_text()
            got = re.search(r"num chunks received total: (\d+)", text)
            if got is not None:
                break
            time.sleep(0.1)
        else:
            raise SystemExit(f"{d}: no chunk count in the raylet's debug_state.txt")
        chunks += int(got.group(1))
        m = re.search(r"ObjectManager\.SendPull - (\d+) total", text)
        pulls += int(m.group(1)) if m else 0
    return chunks, pulls


def _moved(before: tuple[int, int], after: tuple[int, int]) -> list[int]:
    """[low, high] bytes received by the object stores between two readings."""
    chunks, pulls = after[0] - before[0], after[1] - before[1]
    return [max(0, chunks - pulls) * CHUNK, chunks * CHUNK]


def _calibrate(ray: Any, node: str, dirs: list[Path]) -> list[int]:
    """What :func:`_transfers` measures for 8 MiB put on the head and read on ``node``."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    def nbytes(x: np.ndarray) -> int:
        return int(x.nbytes)

    ref = ray.put(np.ones(8 << 20, dtype=np.uint8))
    before = _transfers(dirs)
    task = ray.remote(nbytes).options(num_cpus=0, scheduling_strategy=(
        NodeAffinitySchedulingStrategy(node_id=node, soft=False)))
    if ray.get(task.remote(ref), timeout=120) != 8 << 20:
        raise SystemExit("calibration task read the wrong size")
    return _moved(before, _transfers(dirs))


def _digest(config: Path) -> str:
    """SHA-256 over the part files the config lists (paths and bytes) and its node map."""
    doc = json.loads(config.read_text())
    h = hashlib.sha256(json.dumps([doc["node_map"], doc["edge_map"]]).encode())
    for p in range(doc["num_parts"]):
        for rel in sorted(doc[f"part-{p}"].values()):
            h.update(rel.encode())
            h.update(hashlib.sha256((config.parent / rel).read_bytes()).digest())
    return h.hexdigest()


def _start_cluster(a: argparse.Namespace, root: Path) -> tuple[Any, list[str], list[Path]]:
    """The layout's Cluster; returns it, its worker node IDs and every raylet's temp dir."""
    from ray.cluster_utils import Cluster

    from graphshard.runtime.ray import _local_node_address, _use_local_token

    _use_local_token()
    nodes = 3 if a.child == "3" else 1
    store = a.store_mb << 20
    system = {"debug_dump_period_milliseconds": 500, "object_manager_default_chunk_size": CHUNK}
    with _local_node_address():
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": a.cpus * (4 - nodes), "node_ip_address": LOOPBACK,
            "include_dashboard": False, "object_store_memory": store * (4 - nodes),
            "_system_config": system})
        dirs = [root / "ray"]
        workers = []
        for i in range(nodes - 1):
            dirs.append(root / f"n{i + 1}")
            workers.append(cluster.add_node(
                num_cpus=a.cpus, node_ip_address=LOOPBACK, object_store_memory=store,
                temp_dir=str(dirs[-1])).node_id)
    cluster.wait_for_nodes(timeout=120)
    return cluster, workers, dirs


class _TaskBytes(logging.Handler):
    """Sums the file-layer bytes that the Ray tasks of dispatch report per node (the
    executor's "tasks ran on ... [file layer: read N B, wrote M B]" lines)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.bytes = [0, 0]

    def emit(self, record: logging.LogRecord) -> None:
        for read, written in re.findall(r"file layer: read (\d+) B, wrote (\d+) B",
                                        record.getMessage()):
            self.bytes[0] += int(read)
            self.bytes[1] += int(written)


def _start_s3() -> Any:
    import pyarrow.fs as pafs
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ.update({**KEYS, "AWS_ENDPOINT_URL": endpoint})  # Ray workers inherit it
    pafs.S3FileSystem(endpoint_override=endpoint, allow_bucket_creation=True).create_dir(BUCKET)
    return server


def _sampling(a: argparse.Namespace, cfg: str, placement: Any, out: dict) -> None:
    import graphshard as gs

    handle = gs.distributed.serve(cfg, placement=placement, timeout=600)
    dg = None
    try:
        import ray

        infos = ray.get([s.info.remote() for s in handle.handles], timeout=120)
        out["serve_file_bytes"] = [sum(i["file_bytes"][k] for i in infos) for k in (0, 1)]
        out["server_nodes"] = [i["node_id"][:8] for i in infos]
        dg = gs.distributed.DistGraph(cfg, colocate=(), timeout=120)
        n = dg.num_nodes()
        rng = np.random.default_rng(1)
        batches = [rng.choice(n, a.batch_size, replace=False) for _ in range(a.batches + 1)]
        whole = gs.distributed.assemble_graph(cfg)
        got = gs.distributed.sample_blocks(dg, batches[0], FANOUTS, seed=0).blocks
        want = gs.sampling.sample_blocks(whole, batches[0], FANOUTS, seed=0)
        for x, y in zip(got.blocks, want.blocks, strict=True):
            for et in y.src:
                if not (np.array_equal(x.src[et], y.src[et])
                        and np.array_equal(x.eids[et], y.eids[et])):
                    raise SystemExit("DistGraph and whole-graph samples differ")
        del whole
        before = _transfers(out["_dirs"])
        edges, clock = 0, time.perf_counter()
        for b in range(1, a.batches + 1):
            blocks = gs.distributed.sample_blocks(dg, batches[b], FANOUTS, seed=b).blocks
            edges += sum(len(blk.src[et]) for blk in blocks.blocks for et in blk.src)
        one = time.perf_counter() - clock
        clock = time.perf_counter()
        for _ in gs.distributed.BlockLoader(dg, batches[1:], FANOUTS, prefetch=4, seed=1):
            pass
        loader = time.perf_counter() - clock
        out["ray_bytes_sampling"] = _moved(before, _transfers(out["_dirs"]))
        out["sampling"] = {"one_bps": a.batches / one, "one_eps": edges / one,
                           "loader_bps": a.batches / loader, "loader_eps": edges / loader,
                           "edges_per_batch": edges / a.batches}
    finally:
        if dg is not None:
            dg.close()
        handle.shutdown()


def child(a: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="gsbm", dir="/tmp"))  # short: Ray's socket paths
    os.environ["RAY_TMPDIR"] = str(root)
    import ray

    import graphshard as gs
    from graphshard.pipeline import run_pipeline
    from graphshard.runtime.ray import init_ray
    from graphshard.storage import fsys

    cluster = server = None
    out: dict[str, Any] = {"layout": f"{a.child} node" + ("s" if a.child == "3" else "")}
    try:
        if a.s3:
            server = _start_s3()
        cluster, workers, dirs = _start_cluster(a, root)
        out["_dirs"] = dirs
        init_ray(ray, cluster.address, include_dashboard=False, log_to_driver=False)
        out["cpus"] = int(ray.cluster_resources()["CPU"])
        if workers:
            out["calibration"] = _calibrate(ray, workers[0], dirs)
        opts = {"method": a.method, "use_ray": True, "assign_options": {"seed": 0}}
        with Sampler() as mem:  # not timed: Ray workers start, numba caches load
            warm = run_pipeline(a.dir / "warm", a.parts, root / "warm-out", **opts)
        out["warm_s"] = warm.seconds
        out["warm_peaks_mb"] = {k: [round(v[0], 1), v[1]] for k, v in mem.peaks.items()}
        before = _transfers(dirs)
        with Sampler() as mem:
            r = run_pipeline(a.dir / "big", a.parts, root / "out", **opts)
        out["ray_bytes_pipeline"] = _moved(before, _transfers(dirs))
        out["worker_io"] = mem.worker_io()
        out["cpu_s"] = mem.cpu_seconds()
        out["pipeline_s"] = r.seconds
        out["assign_s"] = r.assignment.seconds
        out["peaks_mb"] = {k: [round(v[0], 1), v[1]] for k, v in mem.peaks.items()}
        cfg = Path(r.partitions.config_path)
        out["digest"] = _digest(cfg)
        out["out_bytes"] = sum(f.stat().st_size for f in cfg.parent.rglob("*") if f.is_file()
                               and "assignment" not in f.parts)
        out["in_bytes"] = sum(f.stat().st_size for f in (a.dir / "big").rglob("*")
                              if f.is_file())
        serve_cfg = str(cfg)
        if a.s3:
            src = fsys.open_location(f"s3://{BUCKET}/{a.child}/chunked")
            for f in sorted((a.dir / "big").rglob("*")):
                if f.is_file():
                    src.child(f.relative_to(a.dir / "big").as_posix()).upload(f)
            t0, before = fsys.traffic(), _transfers(dirs)
            tasks = _TaskBytes()
            logging.getLogger("graphshard.runtime.executor").addHandler(tasks)
            logging.getLogger("graphshard.runtime.executor").setLevel(logging.INFO)
            clock = time.perf_counter()
            rs = run_pipeline(src.uri, a.parts, f"s3://{BUCKET}/{a.child}/parts", **opts)
            out["s3_pipeline_s"] = time.perf_counter() - clock
            logging.getLogger("graphshard.runtime.executor").removeHandler(tasks)
            t1 = fsys.traffic()
            out["s3_file_bytes"] = [t1.read - t0.read, t1.written - t0.written]
            out["s3_task_file_bytes"] = tasks.bytes
            out["s3_ray_bytes"] = _moved(before, _transfers(dirs))
            serve_cfg = str(rs.partitions.config_path)
        placement: Any = ({p: workers[p % len(workers)] for p in range(a.parts)}
                          if workers else "pack")
        _sampling(a, serve_cfg, placement, out)
        out["loadavg"] = [round(x, 1) for x in os.getloadavg()]
        out["versions"] = f"ray {ray.__version__}, graphshard {gs.__version__}"
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
    out.pop("_dirs")
    print("RESULT " + json.dumps(out))


# ----- the parent: both layouts, side by side ----------------------------------------------
def _mb(x: float) -> str:
    return f"{x / 1e6:,.1f}"


def report(rows: list[dict], a: argparse.Namespace) -> None:
    three, one = rows
    same = three["digest"] == one["digest"]
    print(f"R-MAT {a.nodes:,} nodes, {a.edges:,} edges in {a.chunks} chunks, {a.parts} parts, "
          f"method {a.method}; {one['versions']}; {a.reps} run(s) per layout, interleaved "
          f"(3 nodes first), medians; 1-min loadavg after each run: 3 nodes "
          f"{three['loadavg']}, 1 node {one['loadavg']}")
    print(f"CPUs: 3 nodes x {a.cpus} vs 1 node x {one['cpus']}; partition files identical: "
          f"{'yes' if same else 'NO'}")
    if not same:
        raise SystemExit("the layouts wrote different partitions: no ratio quoted")

    def row(label: str, x: float, y: float, fmt: str = "{:,.2f}") -> None:
        ratio = f"{x / y:.2f}x" if y else "-"
        print(f"{label:46} {fmt.format(x):>14} {fmt.format(y):>14} {ratio:>8}")

    lo, hi = three["calibration"]
    print(f"object store counter check: 8 MiB put on the head, read by a task on a worker: "
          f"{lo / 2**20:.1f}-{hi / 2**20:.1f} MiB counted")
    print(f"{'':46} {'3 nodes':>14} {'1 node':>14} {'3n / 1n':>8}")
    row("pipeline s (assign + dispatch)", three["pipeline_s"], one["pipeline_s"])
    row("  of which assign s", three["assign_s"], one["assign_s"])
    row("  CPU s, all processes (user + system)", three["cpu_s"], one["cpu_s"])
    for k in ("worker", "driver", "ray"):
        if k in three["peaks_mb"] and k in one["peaks_mb"]:
            row(f"peak RSS MB, largest {k} process", three["peaks_mb"][k][0],
                one["peaks_mb"][k][0], "{:,.1f}")
    row("  largest worker, warm-up graph (1/20)", three["warm_peaks_mb"]["worker"][0],
        one["warm_peaks_mb"]["worker"][0], "{:,.1f}")
    row("  driver, warm-up graph (1/20)", three["warm_peaks_mb"]["driver"][0],
        one["warm_peaks_mb"]["driver"][0], "{:,.1f}")
    for label, key in (("object store bytes moved, pipeline (MB)", "ray_bytes_pipeline"),
                       ("object store bytes moved, S3 pipeline (MB)", "s3_ray_bytes"),
                       ("object store bytes moved, sampling (MB)", "ray_bytes_sampling")):
        if key in three:
            lo, hi = three[key]
            lo1, hi1 = one[key]
            print(f"{label:46} {_mb(lo) + '-' + _mb(hi):>14} {_mb(lo1) + '-' + _mb(hi1):>14}")
    row("Ray workers' read calls MB (rchar, no mmap)", three["worker_io"][0] / 1e6,
        one["worker_io"][0] / 1e6)
    row("Ray workers' write calls MB (wchar)", three["worker_io"][1] / 1e6,
        one["worker_io"][1] / 1e6)
    if "s3_pipeline_s" in three:
        row("S3 -> S3 pipeline s", three["s3_pipeline_s"], one["s3_pipeline_s"])
        row("  file layer MB read by the driver", three["s3_file_bytes"][0] / 1e6,
            one["s3_file_bytes"][0] / 1e6)
        row("  file layer MB written by the driver", three["s3_file_bytes"][1] / 1e6,
            one["s3_file_bytes"][1] / 1e6)
        if "s3_task_file_bytes" in three:
            row("  file layer MB read by tasks", three["s3_task_file_bytes"][0] / 1e6,
                one["s3_task_file_bytes"][0] / 1e6)
            row("  file layer MB written by tasks", three["s3_task_file_bytes"][1] / 1e6,
                one["s3_task_file_bytes"][1] / 1e6)
        row("serve from S3: file layer MB read", three["serve_file_bytes"][0] / 1e6,
            one["serve_file_bytes"][0] / 1e6)
    s3, s1 = three["sampling"], one["sampling"]
    row("sampling, 1 batch at a time: batches/s", s3["one_bps"], s1["one_bps"])
    row("  edges/s", s3["one_eps"], s1["one_eps"], "{:,.0f}")
    row("sampling, loader 4 in flight: batches/s", s3["loader_bps"], s1["loader_bps"])
    row("  edges/s", s3["loader_eps"], s1["loader_eps"], "{:,.0f}")
    print(f"servers on nodes {three['server_nodes']} (3 nodes; client on the head) / "
          f"{one['server_nodes']}; {s3['edges_per_batch']:,.0f} sampled edges per batch of "
          f"{a.batch_size}")
    warm_edges = max(10000, a.edges // 20)
    grow = {k: (r["peaks_mb"]["worker"][0] - r["warm_peaks_mb"]["worker"][0]) * 2**20
            / (a.edges - warm_edges) for k, r in (("3", three), ("1", one))}
    print(f"input {_mb(one['in_bytes'])} MB, output {_mb(one['out_bytes'])} MB; per edge: "
          f"{one['pipeline_s'] * one['cpus'] / a.edges * 1e6:.2f} CPU-us (1 node), "
          f"{three['pipeline_s'] * three['cpus'] / a.edges * 1e6:.2f} CPU-us (3 nodes) "
          f"as wall x logical CPUs; used: {one['cpu_s'] / a.edges * 1e6:.2f} / "
          f"{three['cpu_s'] / a.edges * 1e6:.2f} CPU-us; "
          f"largest worker's growth from the warm-up graph: {grow['3']:.1f} (3 nodes), "
          f"{grow['1']:.1f} (1 node) B per edge of the graph")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--edges", type=int, default=2_000_000)
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--parts", type=int, default=3)
    ap.add_argument("--method", default="lp")
    ap.add_argument("--cpus", type=int, default=1, help="logical CPUs per node of 3")
    ap.add_argument("--store-mb", type=int, default=150, help="object store per node of 3")
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--reps", type=int, default=1,
                    help="runs per layout, interleaved (3, 1, then 1, 3, ...); medians shown")
    ap.add_argument("--no-s3", dest="s3", action="store_false",
                    help="skip the S3 runs (moto's server)")
    ap.add_argument("--dir", type=Path, default=None,
                    help="folder of the chunked graphs (kept; default: a new temp folder)")
    ap.add_argument("--child", choices=["3", "1"], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return
    a.dir = a.dir or Path(tempfile.mkdtemp(prefix="bench_multinode_"))
    write = _rmat_writer()
    write(a.dir / "big", a.nodes, a.edges, a.chunks, 0)
    write(a.dir / "warm", max(1000, a.nodes // 20), max(10000, a.edges // 20), 2, 1)
    print("", file=sys.stderr)
    runs: dict[str, list[dict]] = {"3": [], "1": []}
    for rep in range(a.reps):  # interleaved: 3 then 1, then 1 then 3, ...
        for layout in ("3", "1") if rep % 2 == 0 else ("1", "3"):
            cmd = [sys.executable, __file__, *sys.argv[1:], "--dir", str(a.dir), "--child",
                   layout]
            run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
            if run.returncode:
                raise SystemExit(f"the {layout}-node run failed ({run.returncode})")
            line = next(x for x in run.stdout.splitlines() if x.startswith("RESULT "))
            runs[layout].append(json.loads(line[len("RESULT "):]))
    report([_merge(runs["3"]), _merge(runs["1"])], a)


def _merge(runs: list[dict]) -> dict:
    """One layout's runs as one row: medians of the figures, the largest peaks."""
    out = dict(runs[0])
    for k, v in runs[0].items():
        if isinstance(v, (int, float)):
            out[k] = float(np.median([r[k] for r in runs]))
        elif isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
            out[k] = [float(np.median([r[k][i] for r in runs])) for i in range(len(v))]
        elif k == "sampling":
            out[k] = {m: float(np.median([r[k][m] for r in runs])) for m in v}
        elif k in ("peaks_mb", "warm_peaks_mb"):
            out[k] = {kind: max((r[k][kind] for r in runs if kind in r[k]),
                                key=lambda x: x[0]) for kind in v}
    if len({r["digest"] for r in runs}) > 1:
        out["digest"] = "differs between runs of one layout"
    out["loadavg"] = [r["loadavg"][0] for r in runs]
    return out


if __name__ == "__main__":
    main()
