"""A billion edges on one small machine: chunked R-MAT to served, sampled partitions.

One command (issue 42's run; scale 26 is Graph500's 67M nodes and 1.07B edges)::

    python benchmarks/bench_billion.py --scale 26 --parts 16 --work /big/folder --kill-test
    python benchmarks/bench_billion.py --scale 16 --parts 4 --reference-scale 14   # a try-out

In one run, one phase at a time, each command in its own process tree whose RSS (largest
process and the sum over all) is sampled every 0.5 s, and whose disk use beyond the input
(the work folder, with ``TMPDIR`` inside it: Ray's session folder counts too) is sampled as
it goes:

1. ``graphshard chunk --generate rmat:scale=S,edge_factor=16,features=16,classes=8`` writes
   the input chunk by chunk (timed apart; reused when present);
2. the pipeline's disk estimate (:mod:`graphshard.pipeline.disk`), refused by the pipeline
   itself when the free space cannot hold it;
3. ``graphshard pipeline --method lp --engine ray`` (nodes and in-edges balanced): edges/s,
   peak RSS, disk peak and bytes per input edge beside the estimate;
4. the edge cut beside a random assignment's (streamed over the input chunks), with node
   and edge balance;
5. with ``--kill-test``: the same pipeline into another folder, killed with SIGKILL (its
   whole process tree) once the dispatch has written its first part, then rerun: every file
   must equal the first run's, byte for byte;
6. ``DistGraph`` over all parts (one graph server per part on a local Ray): start-up time
   and RSS per server beside its part's bytes (memory-mapped parts), then ``--batches``
   sampled batches ([25, 10], batch 1024, node features) as batches/s; with
   ``--reference-scale`` the same on a graph of that scale (Graph500's scale 19: 8.4M edges),
   and the ratio.

7. with ``--dgl-scale`` (default 22, the largest DGL 2.1's world-size-1 pipeline completes in
   24 GiB; 0 skips it): after the phases above, and after removing this run's rerun copy
   when the disk needs the room, DGL's own pipeline (``random_partition.py`` and
   ``data_proc_pipeline.py``, through ``bench_dgl_pipeline.py``) and ours (``assign -m
   random`` and ``dispatch``) on the same chunked R-MAT of that scale, one after the other:
   seconds, memory and output bytes per edge of both, then a projection from the measured
   per-edge costs to 10B edges on 16 machines.  Skipped with a row saying why when DGL's
   tools or its Python are absent (``--dgl-tools``, ``--dgl-python``).

Prints one table of the figures beside the issue's goals.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

GS = [sys.executable, "-m", "graphshard.cli"]


class Rows(list):
    """The table's rows, each printed (and saved to ``figures.json``) as soon as it is
    measured, so a run stopped half-way keeps what it had."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def append(self, row: tuple[str, str, str]) -> None:
        super().append(row)
        print(f"[{time.strftime('%H:%M:%S')}] {row[0]}: {row[1]}  [goal: {row[2]}]",
              file=sys.stderr, flush=True)
        self.path.write_text(json.dumps(list(self), indent=1))

    def __iadd__(self, more):  # type: ignore[override]
        for row in more:
            self.append(row)
        return self


class Watch:
    """Run a command; sample its process tree's RSS and a folder's bytes while it runs."""

    def __init__(self, cmd: list[str], env: dict[str, str], disk_root: Path | None = None,
                 exclude: Path | None = None) -> None:
        self.cmd, self.env, self.disk_root, self.exclude = cmd, env, disk_root, exclude
        self.peak_one = self.peak_sum = self.peak_disk = 0
        self.peak_who = ""  # the process at peak_one: its Ray task or command line
        self.peak_root = 0  # the command's own process (the pipeline's driver)
        self.seconds = 0.0
        self.stdout = ""

    def _disk(self) -> int:
        total = 0
        if self.disk_root is None:
            return 0
        for root, dirs, files in os.walk(self.disk_root):
            if self.exclude is not None and Path(root) == self.exclude.parent:
                dirs[:] = [d for d in dirs if Path(root, d) != self.exclude]
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(root, name)).st_blocks * 512
        return total

    def start(self) -> subprocess.Popen:
        self.clock = time.perf_counter()
        self.proc = subprocess.Popen(self.cmd, env=self.env, stdout=subprocess.PIPE, text=True)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self.proc

    def _sample(self) -> None:
        root = psutil.Process(self.proc.pid)
        while not self.stop.is_set():
            with contextlib.suppress(psutil.Error):
                rss = []
                for p in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        rss.append(p.memory_info().rss)
                        if rss[-1] > self.peak_one:
                            self.peak_one = rss[-1]
                            self.peak_who = " ".join(p.cmdline()).strip()[:80]
                        if p.pid == root.pid:
                            self.peak_root = max(self.peak_root, rss[-1])
                self.peak_sum = max(self.peak_sum, sum(rss))
            self.peak_disk = max(self.peak_disk, self._disk())
            self.stop.wait(0.5)

    def finish(self, check: bool = True) -> Watch:
        self.stdout, _ = self.proc.communicate()
        self.stop.set()
        self.thread.join()
        self.seconds = time.perf_counter() - self.clock
        if check and self.proc.returncode:
            raise SystemExit(f"{' '.join(self.cmd)} failed with {self.proc.returncode}")
        return self

    def run(self) -> Watch:
        self.start()
        return self.finish()


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every descendant (found by tree, never by name)."""
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.send_signal(signal.SIGKILL)
        psutil.wait_procs(procs, timeout=60)


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every file; the config's report without its timings and its
    assignment's path (which name the run, not the partitions)."""
    out = {}
    for f in sorted(folder.rglob("*")):
        if not f.is_file():
            continue
        if f.suffix == ".json" and f.parent == folder:
            config = json.loads(f.read_bytes())
            ours = config.get("graphshard", {})
            ours.get("report", {}).pop("seconds", None)
            ours.get("params", {}).pop("assignment", None)
            digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
        else:
            with f.open("rb") as handle:  # parts of GiBs: streamed
                digest = hashlib.file_digest(handle, "sha256")
        out[str(f.relative_to(folder))] = digest.hexdigest()
    return out


def random_cut(chunked: Path, parts: int, seed: int = 0) -> dict[str, float]:
    """A random assignment's edge cut and balance, streamed over the input's chunks."""
    from graphshard.io.chunked import iter_edge_chunks, load_chunked_meta

    meta = load_chunked_meta(chunked)
    n = meta.num_nodes["_N"]
    part = np.random.default_rng(seed).integers(0, parts, n).astype(np.int8)
    cut = total = 0
    in_edges = np.zeros(parts, np.int64)
    for chunk in iter_edge_chunks(meta, ("_N", "_E", "_N")):
        ps, pd = part[chunk.src], part[chunk.dst]
        cut += int((ps != pd).sum())
        total += len(ps)
        in_edges += np.bincount(pd, minlength=parts)
    nodes = np.bincount(part, minlength=parts)
    return {"cut_ratio": cut / total, "node_balance": nodes.max() / nodes.mean(),
            "edge_balance": in_edges.max() / in_edges.mean()}


def generate(work: Path, scale: int, chunks: int, env: dict[str, str]) -> tuple[Path, Watch | None]:
    chunked = work / f"rmat{scale}"
    if (chunked / "metadata.json").exists():
        return chunked, None
    spec = f"rmat:scale={scale},edge_factor=16,features=16,classes=8,seed=0"
    w = Watch([*GS, "chunk", "--generate", spec, "--chunks", str(chunks), "--out",
               str(chunked)], env).run()
    return chunked, w


def pipeline_cmd(chunked: Path, out: Path, args: argparse.Namespace) -> list[str]:
    return [*GS, "pipeline", str(chunked), "--parts", str(args.parts), "--method", "lp",
            "--engine", args.engine, "--out", str(out), "--json"]


def sample(config: Path, batches: int, fanouts: list[int]) -> dict[str, float]:
    """Start a DistGraph over every part; time start-up and ``batches`` sampled batches."""
    import ray

    import graphshard as gs
    from graphshard.runtime.ray import init_ray

    init_ray(ray, include_dashboard=False, log_to_driver=False)
    try:
        clock = time.perf_counter()
        dg = gs.distributed.DistGraph(str(config))
        start = time.perf_counter() - clock
        pids = [int(i["pid"]) for i in ray.get([a.info.remote() for a in dg.router.actors])]
        rss = [psutil.Process(p).memory_info().rss for p in pids]
        part_bytes = [sum(f.stat().st_size for f in (config.parent / f"part{i}").rglob("*")
                          if f.is_file()) for i in range(len(pids))]
        rng = np.random.default_rng(1)
        n = dg.num_nodes()
        seeds = [rng.choice(n, 1024, replace=False) for _ in range(batches + 2)]
        loader = gs.distributed.BlockLoader(dg, seeds, fanouts, features="feat", seed=0)
        it = iter(loader)
        next(it), next(it)  # warm: kernels, page cache
        clock = time.perf_counter()
        got = sum(1 for _ in it)
        per_s = got / (time.perf_counter() - clock)
    finally:
        ray.shutdown()
    return {"start_s": start, "rss_max": max(rss), "rss_sum": sum(rss),
            "part_bytes_max": max(part_bytes), "batches_per_s": per_s}


def pipeline_rows(rows: Rows, w: Watch, report: dict, edges: int, input_bytes: int,
                  need: Any, chunked: Path, args: argparse.Namespace) -> None:
    """The pipeline's rows: speed, memory, disk beside the estimate, cut beside random."""
    rows += [
        ("end-to-end edges/s (generation apart)",
         f"{edges / w.seconds / 1e6:.2f}M ({w.seconds:.0f} s)", ">= 1M edges/s"),
        ("largest process RSS", f"{w.peak_one / 2**30:.2f} GiB ({w.peak_who}); the "
         f"driver {w.peak_root / 2**30:.2f} GiB", "<= 2 GiB"),
        ("all processes together", f"{w.peak_sum / 2**30:.2f} GiB", "<= 12 GiB"),
        ("disk peak beyond the input",
         f"{w.peak_disk / 2**30:.1f} GiB = {w.peak_disk / edges:.0f} B/edge (input "
         f"{input_bytes / edges:.0f} B/edge); estimate {need.total / edges:.0f} B/edge "
         f"({need.total / max(w.peak_disk, 1):.2f}x)", "estimate within 20%")]
    rnd = random_cut(chunked, args.parts)
    rows.append(("cut vs random, balance",
                 f"{report['cut_ratio']:.3f} vs {rnd['cut_ratio']:.3f} = "
                 f"{report['cut_ratio'] / rnd['cut_ratio']:.2f}x; node "
                 f"{report['node_balance']:.3f}, edge {report['edge_balance']:.3f}",
                 "<= 0.97x random at <= 1.05"))


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under ``folder`` (0 when it is absent)."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def dgl_rows(rows: Rows, work: Path, env: dict[str, str], args: argparse.Namespace,
             ours: dict[str, float]) -> None:
    """DGL's pipeline and ours on one chunked R-MAT of ``--dgl-scale``; per-edge costs of
    both; the projection to 10B edges on 16 machines from ours at ``--scale``."""
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from bench_dgl_pipeline import missing_peer

    why = missing_peer(argparse.Namespace(dgl_tools=args.dgl_tools,
                                          dgl_python=args.dgl_python))
    if why:
        rows.append(("DGL's pipeline", f"SKIPPED: {why}", "beside ours, same run"))
        return
    chunked, _ = generate(work, args.dgl_scale, 8, env)
    edges = 16 << args.dgl_scale
    dgl_work = work / f"dgl{args.dgl_scale}"
    shutil.rmtree(dgl_work, ignore_errors=True)
    jsonl = dgl_work / "runs.jsonl"
    dgl_work.mkdir(parents=True)
    cmd = [sys.executable, str(here / "bench_dgl_pipeline.py"), "--dgl-tools",
           str(args.dgl_tools), "--dgl-python", args.dgl_python, "--graph", str(chunked),
           "--parts", str(args.parts), "--world-sizes", "1", "--no-probe", "--no-check",
           "--timeout", "7200", "--workdir", str(dgl_work), "--jsonl", str(jsonl)]
    print(f"[{time.strftime('%H:%M:%S')}] DGL's pipeline and ours at scale {args.dgl_scale}",
          file=sys.stderr, flush=True)
    subprocess.run(cmd, env=env, check=True)
    runs = {r["name"]: r for r in map(json.loads, jsonl.read_text().splitlines())}
    dgl_steps = ["DGL random_partition.py", "DGL dispatch ws=1"]
    our_steps = ["ours assign -m random", "ours dispatch, own assign"]
    failed = [n for n in dgl_steps + our_steps if runs[n]["returncode"]]
    if failed:
        rows.append(("DGL's pipeline", f"FAILED: {', '.join(failed)} (logs in {dgl_work})",
                     "beside ours, same run"))
        return
    cost = {}
    for side, steps, parts in (("DGL", dgl_steps, dgl_work / "parts-dgl-ws1"),
                               ("ours", our_steps, dgl_work / "parts-ours")):
        seconds = sum(runs[n]["seconds"] for n in steps)
        cost[side] = {"s": seconds, "mem": max(runs[n]["peak_total_mb"] for n in steps),
                      "one": max(runs[n]["peak_process_mb"] for n in steps),
                      "out": folder_bytes(parts)}
    d, o = cost["DGL"], cost["ours"]
    rows.append((f"DGL 2.1's pipeline, scale {args.dgl_scale} ({edges / 1e6:.1f}M edges, random,"
                 " world size 1)",
                 f"DGL {d['s']:.0f} s, {d['mem']:,.0f} MiB ({d['one']:,.0f} MiB one process);"
                 f" ours {o['s']:.1f} s, {o['mem']:,.0f} MiB ({o['one']:,.0f} MiB one process):"
                 f" DGL/ours {d['s'] / o['s']:.1f}x the time, {d['mem'] / o['mem']:.1f}x the "
                 "memory", "beside ours, same run"))
    per_edge = [f"{name} {c['s'] / e * 1e6:.2f} us, {c['mem'] * 2**20 / e:,.0f} B of memory, "
                f"{c['out'] / e:.0f} B of output"
                for name, c, e in (("DGL", d, edges), (f"ours {args.dgl_scale}", o, edges))]
    if ours:
        per_edge.append(f"ours {args.scale} lp {ours['s_per_edge'] * 1e6:.2f} us, "
                        f"{ours['mem_per_edge']:,.0f} B of memory, "
                        f"{ours['disk_per_edge']:.0f} B of disk")
    rows.append(("per edge (seconds on 2 cores, peak memory, bytes)", "; ".join(per_edge),
                 "reported"))
    if ours:
        rows.append(("projection: 10B edges on 16 machines", project(ours, d, edges),
                     "in the note"))


def project(ours: dict[str, float], dgl: dict[str, float], dgl_edges: int) -> str:
    """10B edges over 16 machines of this one's size, from the measured per-edge costs.

    Each machine takes 1/16 of the edges; S3 transfer is not measured here and is left out,
    so the times are the compute floor.  lp's driver holds per-node arrays for the whole
    graph on one machine (``driver_per_node`` bytes each, at edge factor 16).
    """
    edges, machines = 10e9, 16
    each = edges / machines
    ours_h = each * ours["s_per_edge"] / 3600
    dgl_h = each * dgl["s"] / dgl_edges / 3600
    dgl_mem = each * dgl["mem"] * 2**20 / dgl_edges / 2**30
    driver = edges / 16 * ours["driver_per_node"] / 2**30
    return (f"ours {ours_h:.1f} h per machine (+ S3 transfer), "
            f"{each * ours['disk_per_edge'] / 2**30:,.0f} GiB of disk and <= "
            f"{ours['largest'] / 2**30:.1f} GiB per process, but lp's driver "
            f"{driver:,.0f} GiB ({ours['driver_per_node']:.0f} B per node; random/hash need "
            f"none); DGL {dgl_h:.1f} h and {dgl_mem:,.0f} GiB of memory per machine")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=26)
    ap.add_argument("--parts", type=int, default=16)
    ap.add_argument("--chunks", type=int, default=0, help="input chunks (default: 2^20 "
                    "edges... at least 8)")
    ap.add_argument("--engine", default="ray", choices=["ray", "local", "auto"])
    ap.add_argument("--work", type=Path, default=Path("bench_billion_work"))
    ap.add_argument("--kill-test", action="store_true")
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--reference-scale", type=int, default=19)
    ap.add_argument("--reuse", action="store_true",
                    help="keep an earlier run's partitions: measure serving, sampling and the "
                    "kill test only")
    ap.add_argument("--dgl-scale", type=int, default=22,
                    help="scale of DGL's pipeline beside ours, after our phases (0: skip)")
    ap.add_argument("--dgl-tools", type=Path, default=Path("/tmp/dgl-tools"),
                    help="DGL's tools/ folder (bench_dgl_pipeline.py's --dgl-tools)")
    ap.add_argument("--dgl-python", default="/tmp/venv-dgl/bin/python",
                    help="a Python that imports DGL 2.1 (bench_dgl_pipeline.py's)")
    ap.add_argument("--progress", action="store_true",
                    help="let each command draw its progress bars (on stderr)")
    args = ap.parse_args(argv)
    work = args.work.absolute()
    (work / "tmp").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(work / "tmp")}
    if not args.progress:
        env["GRAPHSHARD_NO_PROGRESS"] = "1"
    edges = 16 << args.scale
    chunks = args.chunks or max(8, edges // (8 << 20))
    rows = Rows(work / "figures.json")

    chunked, gen = generate(work, args.scale, chunks, env)
    if gen is not None:
        rows.append(("generation", f"{gen.seconds:.0f} s, {edges / gen.seconds / 1e6:.2f}M "
                     f"edges/s, peak RSS {gen.peak_one / 2**20:.0f} MiB", "streaming"))
    input_bytes = sum(f.stat().st_size for f in chunked.rglob("*") if f.is_file())

    from graphshard.io.chunked import load_chunked_meta
    from graphshard.pipeline.disk import estimate_disk

    need = estimate_disk(load_chunked_meta(chunked), "lp")
    out = work / "parts"
    if (out / "rmat.json").exists() and not args.reuse:
        raise SystemExit(f"{out} holds an earlier run's output: remove it to measure again "
                         "(or --reuse it to measure the serving rows only)")
    if args.reuse and (out / "rmat.json").exists():
        print(f"reusing {out}: the pipeline rows are in the earlier run's figures.json",
              file=sys.stderr)
        report = {"config": str(out / "rmat.json")}
        w = None
        ours: dict[str, float] = {}
    else:
        w = Watch(pipeline_cmd(chunked, out, args), env, work, exclude=chunked).run()
        report = json.loads(w.stdout)
        pipeline_rows(rows, w, report, edges, input_bytes, need, chunked, args)
        ours = {"s_per_edge": w.seconds / edges, "mem_per_edge": w.peak_sum / edges,
                "disk_per_edge": w.peak_disk / edges, "largest": w.peak_one,
                "driver_per_node": w.peak_root / (1 << args.scale)}

    big = sample(Path(report["config"]), args.batches, [25, 10])
    rows.append(("server start (all parts), RSS per server",
                 f"{big['start_s']:.1f} s; largest {big['rss_max'] / 2**20:.0f} MiB vs its "
                 f"part's {big['part_bytes_max'] / 2**20:.0f} MiB", "RSS well below part"))
    line = f"{big['batches_per_s']:.2f} batches/s"
    if args.reference_scale:
        ref_chunked, _ = generate(work, args.reference_scale, 8, env)
        ref_out = work / f"parts{args.reference_scale}"
        if not (ref_out / "rmat.json").exists():
            Watch(pipeline_cmd(ref_chunked, ref_out, args), env).run()
        ref = sample(ref_out / "rmat.json", args.batches, [25, 10])
        line += (f" vs {ref['batches_per_s']:.2f} at scale {args.reference_scale} = "
                 f"{big['batches_per_s'] / ref['batches_per_s']:.2f}x")
    rows.append(("sampling ([25, 10], 1024, features)", line, ">= 0.5x at 10M edges"))
    if args.kill_test:
        again = work / "parts_killed"
        first = digests(out)
        if shutil.disk_usage(work).free < 1.05 * need.total:  # no room for a second run
            print(f"removing {out} (hashed) to make room for the rerun", file=sys.stderr)
            shutil.rmtree(out)
        k = Watch(pipeline_cmd(chunked, again, args), env)
        proc = k.start()
        while proc.poll() is None and not any(again.glob("part*/graph.safetensors")):
            time.sleep(0.5)
        kill_tree(proc.pid)
        k.finish(check=False)
        r = Watch(pipeline_cmd(chunked, again, args), env).run()
        a, b = first, digests(again)
        same = a == b
        differ = sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))
        rows.append(("kill -9 during dispatch, rerun",
                     f"{'byte-identical' if same else 'DIFFERENT: ' + ', '.join(differ[:5])};"
                     f" killed after {k.seconds:.0f} s, rerun {r.seconds:.0f} s"
                     + (f" vs {w.seconds:.0f} s" if w else ""), "identical, reused"))
    if args.dgl_scale:
        room = 300 * (16 << args.dgl_scale)  # DGL's copy, work and output, and ours
        if args.kill_test and shutil.disk_usage(work).free < room:
            print(f"removing {again} (compared) to make room for DGL's run", file=sys.stderr)
            shutil.rmtree(again)
        dgl_rows(rows, work, env, args, ours)

    print(f"\nR-MAT scale {args.scale}: {1 << args.scale:,} nodes, {edges:,} edges, "
          f"{args.parts} parts, {chunks} chunks, engine {args.engine}, "
          f"{os.cpu_count()} CPUs")
    width = max(len(r[0]) for r in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value}  [goal: {goal}]")


if __name__ == "__main__":
    main()
