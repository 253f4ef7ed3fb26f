"""Out-of-core pipeline on a big R-MAT graph: throughput and peak memory per worker.

One command::

    python benchmarks/bench_pipeline.py --edges 100000000 --nodes 8388608 --chunks 50
    python benchmarks/bench_pipeline.py --method lp --edges 10000000 [--assign-engine local]
    python benchmarks/bench_pipeline.py --method lp --graph ../shared/data/walshaw/graphs/*.graph

1. writes a chunked R-MAT graph chunk by chunk (never the whole edge list in memory), or
   with ``--graph`` reads each graph file (METIS ``.graph``, else a SNAP-style edge list)
   and writes it chunked;
2. runs ``graphshard assign`` (``--method``) and ``graphshard dispatch`` on a local Ray, each
   in a child process, while sampling the RSS of every process of the run (the driver and
   each Ray worker) every 0.2 s;
3. prints edges/s end to end, the peak RSS of the largest single process and the peak of the
   sum over all processes, beside the size of the COO arrays (16 bytes per edge).

The generated graph's edge cut is printed for the assignment methods too (from the report).
With ``--graph`` one line per graph gives the same figures, and the edge cut of the
assignment beside in-memory METIS's and random's (every cut counted over the file's edges,
both directions of an undirected graph).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil


def write_rmat_chunks(out: Path, num_nodes: int, num_edges: int, chunks: int, seed: int
                      ) -> None:
    """Chunked R-MAT (a=0.57, b=c=0.19), each chunk drawn with its own keyed generator."""
    if (out / "metadata.json").exists():
        return
    (out / "edges").mkdir(parents=True, exist_ok=True)
    levels = int(np.ceil(np.log2(num_nodes)))
    perm = np.random.default_rng(seed).permutation(np.int64(1) << levels) % num_nodes
    sizes = [num_edges // chunks + (i < num_edges % chunks) for i in range(chunks)]
    files = []
    for i, m in enumerate(sizes):
        rng = np.random.default_rng([seed, i])
        src = np.zeros(m, dtype=np.int64)
        dst = np.zeros(m, dtype=np.int64)
        for _ in range(levels):
            r = rng.random(m)
            src = src * 2 + (r >= 0.76)
            dst = dst * 2 + (((r >= 0.57) & (r < 0.76)) | (r >= 0.95))
        name = f"edges/e{i}.npy"
        np.save(out / name, np.stack([perm[src], perm[dst]], axis=1))
        files.append(name)
        print(f"  chunk {i + 1}/{chunks}", file=sys.stderr, end="\r")
    meta = {"graph_name": "rmat", "node_type": ["_N"], "num_nodes_per_chunk": [[num_nodes]],
            "num_nodes_per_type": [num_nodes], "num_edges_per_type": [num_edges],
            "edge_type": ["_N:_E:_N"], "num_edges_per_chunk": [sizes],
            "edges": {"_N:_E:_N": {"format": {"name": "numpy"}, "data": files}},
            "node_data": {}, "edge_data": {}}
    (out / "metadata.json").write_text(json.dumps(meta))


def run_measured(cmd: list[str]) -> dict:
    """Run ``cmd``; sample the RSS of it and all its descendants; return peaks and time."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    peak_one, peak_sum, stop = [0.0, ""], [0.0], threading.Event()
    root = psutil.Process(proc.pid)

    def sample() -> None:
        while not stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
                rss = []
                for p in procs:
                    with contextlib.suppress(psutil.Error):
                        rss.append((p.memory_info().rss, p.name()))
                total = sum(r for r, _ in rss)
                peak_sum[0] = max(peak_sum[0], total)
                for r, name in rss:
                    if r > peak_one[0]:
                        peak_one[0], peak_one[1] = r, name
            except psutil.Error:
                pass
            time.sleep(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, _ = proc.communicate()
    stop.set()
    thread.join()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed with {proc.returncode}")
    return {"seconds": time.perf_counter() - start, "peak_process_mb": peak_one[0] / 2**20,
            "peak_process": peak_one[1], "peak_total_mb": peak_sum[0] / 2**20, "stdout": out}


def read_real_graph(path: Path):
    """A graph file: METIS ``.graph`` (both directions stored) or an edge list."""
    import graphshard as gs

    if path.suffix == ".graph":
        return gs.io.read_metis(path)
    return gs.io.read_edgelist(path, src=0, dst=1, header=False, relabel=True)


def in_memory_cuts(g, parts: np.ndarray, k: int, seed: int) -> dict[str, int]:
    """Edges of ``g`` cut by ``parts``, by in-memory METIS and by random, one count each."""
    from graphshard.partition.adjacency import symmetric_adjacency
    from graphshard.partition.methods import MethodOptions, run_method

    src, dst = (np.asarray(a) for a in g.edges())
    adj = symmetric_adjacency(src, dst, g.num_nodes())
    cuts = {}
    for name, p in (("assign", parts),
                    ("metis", run_method(adj, k, "metis", MethodOptions(seed=seed))),
                    ("random", run_method(adj, k, "random", MethodOptions(seed=seed)))):
        cuts[name] = int((p[src] != p[dst]).sum())
    return cuts


def run_pipeline(graph: Path, a: argparse.Namespace, tag: str) -> tuple[dict, dict, dict]:
    """``graphshard assign`` then ``graphshard dispatch`` on ``graph``, each measured."""
    gs = [sys.executable, "-m", "graphshard.cli", "-q"]
    assign_dir, parts_dir = a.dir / f"assign-{a.method}{tag}", a.dir / f"parts-{a.method}{tag}"
    for d in (assign_dir, parts_dir):
        subprocess.run(["rm", "-rf", str(d)], check=True)
    step1 = run_measured([*gs, "assign", str(graph), "-k", str(a.parts), "-m", a.method,
                          "--out", str(assign_dir), "--engine", a.assign_engine,
                          *a.assign_args.split()])
    step2 = run_measured([*gs, "dispatch", str(graph), str(assign_dir), "--out", str(parts_dir),
                          "--memory-budget", a.budget, "--json"])
    step1["assign_dir"] = assign_dir
    return step1, step2, json.loads(step2["stdout"])


def real_graphs(a: argparse.Namespace) -> None:
    """One line per ``--graph`` file: the pipeline's figures and the cut beside METIS's."""
    import graphshard as gs
    from graphshard.partition.assignment import read_assignment

    print(f"{'graph':<18}{'nodes':>9}{'edges':>10}{'assign s':>9}{'dispatch s':>11}"
          f"{'edges/s':>9}{'1 proc MiB':>11}{'sum MiB':>8}{'cut':>9}{'metis':>9}"
          f"{'random':>9}{'cut/metis':>10}")
    for path in a.graph:
        g = read_real_graph(path)
        chunked = a.dir / f"real-{path.stem}-{a.chunks}"
        subprocess.run(["rm", "-rf", str(chunked)], check=True)
        gs.io.write_chunked(g, chunked, a.chunks)
        step1, step2, _ = run_pipeline(chunked, a, f"-{path.stem}")
        parts = read_assignment(step1["assign_dir"], ["_N"])["_N"]
        cuts = in_memory_cuts(g, parts, a.parts, a.seed)
        total = step1["seconds"] + step2["seconds"]
        peak = max(step1["peak_process_mb"], step2["peak_process_mb"])
        peak_sum = max(step1["peak_total_mb"], step2["peak_total_mb"])
        print(f"{path.stem:<18}{g.num_nodes():>9,}{g.num_edges():>10,}{step1['seconds']:>9.1f}"
              f"{step2['seconds']:>11.1f}{g.num_edges() / total:>9,.0f}{peak:>11,.0f}"
              f"{peak_sum:>8,.0f}{cuts['assign']:>9,}{cuts['metis']:>9,}{cuts['random']:>9,}"
              f"{cuts['assign'] / max(cuts['metis'], 1):>10.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--nodes", type=int, default=1 << 20)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--method", default="random")
    ap.add_argument("--assign-engine", choices=["ray", "local"], default="ray",
                    help="engine of the assign step (local: lp's shard tasks on threads "
                         "in the assign process)")
    ap.add_argument("--assign-args", default="",
                    help="extra options of graphshard assign, e.g. '--max-task-entries "
                         "2000000'")
    ap.add_argument("--budget", default="1.5G")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/graphshard-pipeline-bench"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graph", type=Path, nargs="+",
                    help="real graph files instead of the generated R-MAT (METIS .graph or "
                         "an edge list), e.g. ../shared/data/walshaw/graphs/*.graph")
    a = ap.parse_args()
    if a.graph:
        return real_graphs(a)
    graph = a.dir / f"rmat-{a.nodes}-{a.edges}-{a.chunks}"
    t = time.perf_counter()
    write_rmat_chunks(graph, a.nodes, a.edges, a.chunks, a.seed)
    print(f"graph: {a.nodes:,} nodes, {a.edges:,} edges in {a.chunks} chunks "
          f"({time.perf_counter() - t:.1f}s); COO arrays alone: {a.edges * 16 / 2**20:,.0f} MiB")
    step1, step2, report = run_pipeline(graph, a, "")
    total = step1["seconds"] + step2["seconds"]
    print(f"{'step':10} {'seconds':>8} {'edges/s':>12} {'peak 1 proc MiB':>16} "
          f"{'peak sum MiB':>13}  largest process")
    for name, r in (("assign", step1), ("dispatch", step2)):
        print(f"{name:10} {r['seconds']:8.1f} {a.edges / r['seconds']:12,.0f} "
              f"{r['peak_process_mb']:16,.0f} {r['peak_total_mb']:13,.0f}  {r['peak_process']}")
    print(f"{'total':10} {total:8.1f} {a.edges / total:12,.0f}")
    print(f"method {a.method} (assign engine {a.assign_engine}): "
          f"edge cut {report['edge_cut']:,} ({report['cut_ratio']:.2%}), "
          f"node balance {report['node_balance']:.3f}, edge balance "
          f"{report['edge_balance']:.3f}, loadavg {psutil.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
