"""Out-of-core pipeline on a big R-MAT graph: throughput and peak memory per worker.

One command::

    python benchmarks/bench_pipeline.py --edges 100000000 --nodes 8388608 --chunks 50
    python benchmarks/bench_pipeline.py --method lp --edges 10000000 [--assign-engine local]
    python benchmarks/bench_pipeline.py --method lp --graph ../shared/data/walshaw/graphs/*.graph

1. writes a chunked R-MAT graph chunk by chunk (never the whole edge list in memory), or
   with ``--graph`` reads each graph file (METIS ``.graph``, else a SNAP-style edge list)
   and writes it chunked;
2. runs ``graphshard pipeline`` (``--method``, both steps on one local Ray) in a child
   process, or with ``--two-commands`` ``graphshard assign`` and ``graphshard dispatch``,
   each in its own, while sampling the RSS of every process of the run (the driver and
   each Ray worker) every 0.2 s;
3. prints edges/s end to end (the whole command: Python and Ray start-up included), the
   seconds of each step (from the report with one command), the peak RSS of the largest
   single process and the peak of the sum over all processes, beside the size of the COO
   arrays (16 bytes per edge).

The generated graph's edge cut is printed for the assignment methods too (from the report).
With ``--graph`` one line per graph gives the same figures, and the edge cut of the
assignment beside in-memory METIS's and random's (every cut counted over the file's edges,
both directions of an undirected graph).

``--compare`` does the same for the generated R-MAT: after the run it loads the chunks in
memory and prints the assignment's cut beside in-memory METIS's with the pipeline's
constraints (nodes and in-edges, or nodes only with ``--no-balance-edges`` in
``--assign-args``) and random's, with each one's node and edge balance.
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


def in_memory_parts(src: np.ndarray, dst: np.ndarray, n: int, k: int, seed: int,
                    balance_edges: bool = False, random_seed: int | None = None
                    ) -> tuple[dict[str, np.ndarray], float]:
    """In-memory METIS's and random's parts of the graph ``src -> dst`` (``n`` nodes), METIS
    balancing nodes, and in-edges too with ``balance_edges``; and METIS's seconds."""
    from graphshard.partition.adjacency import symmetric_adjacency
    from graphshard.partition.constraints import balance_weights
    from graphshard.partition.methods import MethodOptions, run_method

    adj = symmetric_adjacency(src, dst, n)
    if balance_edges:
        adj = adj.with_vertex_weights(
            balance_weights(n, np.bincount(dst, minlength=n), balance_edges=True))
    t = time.perf_counter()
    metis = run_method(adj, k, "metis", MethodOptions(seed=seed))
    seconds = time.perf_counter() - t
    rnd = run_method(adj, k, "random",
                     MethodOptions(seed=seed if random_seed is None else random_seed))
    return {"metis": metis, "random": rnd}, seconds


def in_memory_cuts(g, parts: np.ndarray, k: int, seed: int) -> dict[str, int]:
    """Edges of ``g`` cut by ``parts``, by in-memory METIS and by random, one count each."""
    src, dst = (np.asarray(a) for a in g.edges())
    ref, _ = in_memory_parts(src, dst, g.num_nodes(), k, seed)
    return {name: int((p[src] != p[dst]).sum())
            for name, p in (("assign", parts), *ref.items())}


def compare_rmat(graph: Path, assign_dir: Path, k: int, balance_edges: bool, seed: int
                 ) -> None:
    """Print the pipeline's cut and balance beside in-memory METIS's with the same
    constraints and random's, on the chunked R-MAT in ``graph``."""
    from graphshard.partition.assignment import read_assignment

    meta = json.loads((graph / "metadata.json").read_text())
    edges = np.concatenate([np.load(graph / f) for f in meta["edges"]["_N:_E:_N"]["data"]])
    src, dst, n = edges[:, 0], edges[:, 1], int(meta["num_nodes_per_type"][0])
    del edges
    # random not with ``seed``: the generator relabels nodes by default_rng(seed).permutation,
    # the very draw random's dealing would use, which would tie parts to R-MAT bits
    ref, metis_s = in_memory_parts(src, dst, n, k, seed, balance_edges, random_seed=seed + 1)
    rows = {"pipeline": read_assignment(assign_dir, ["_N"])["_N"],
            "metis (in memory)": ref["metis"], "random": ref["random"]}
    indeg = np.bincount(dst, minlength=n)
    what = "nodes and in-edges" if balance_edges else "nodes"
    print(f"in-memory comparison, every method balancing {what} (METIS {metis_s:.0f} s):")
    print(f"{'assignment':20}{'cut':>13}{'cut %':>8}{'/ random':>9}{'/ metis':>8}"
          f"{'node bal':>9}{'edge bal':>9}")
    cut = {name: int((p[src] != p[dst]).sum()) for name, p in rows.items()}
    for name, p in rows.items():
        nbal = np.bincount(p, minlength=k).max() * k / n
        ebal = np.bincount(p, weights=indeg, minlength=k).max() * k / max(1, len(dst))
        print(f"{name:20}{cut[name]:>13,}{cut[name] / len(dst):>8.2%}"
              f"{cut[name] / cut['random']:>9.3f}{cut[name] / cut['metis (in memory)']:>8.3f}"
              f"{nbal:>9.3f}{ebal:>9.3f}")


def run_pipeline(graph: Path, a: argparse.Namespace, tag: str) -> dict:
    """``graphshard pipeline`` on ``graph`` (with ``--two-commands``: ``graphshard assign``,
    then ``graphshard dispatch``), measured.  Returns the wall ``seconds`` and peaks of the
    run, per-step ``steps`` rows ``(name, seconds, measured run or None)``, the ``report``
    and the ``assign_dir``."""
    gs = [sys.executable, "-m", "graphshard.cli", "-q"]
    assign_dir, parts_dir = a.dir / f"assign-{a.method}{tag}", a.dir / f"parts-{a.method}{tag}"
    for d in (assign_dir, parts_dir):
        subprocess.run(["rm", "-rf", str(d)], check=True)
    step1_args = ["-k", str(a.parts), "-m", a.method, *a.assign_args.split()]
    step2_args = ["--out", str(parts_dir), "--memory-budget", a.budget, "--json"]
    if not a.two_commands:
        run = run_measured([*gs, "pipeline", str(graph), *step1_args, "--assign-out",
                            str(assign_dir), *step2_args])
        report = json.loads(run["stdout"])
        seconds = report["seconds"]
        steps = [("assign", seconds["assign"], None),
                 ("dispatch", sum(v for k, v in seconds.items() if k != "assign"), None)]
        return {**run, "steps": steps, "report": report, "assign_dir": assign_dir}
    step1 = run_measured([*gs, "assign", str(graph), *step1_args, "--out", str(assign_dir),
                          "--engine", a.assign_engine])
    step2 = run_measured([*gs, "dispatch", str(graph), str(assign_dir), *step2_args])
    worst = max((step1, step2), key=lambda r: r["peak_process_mb"])
    return {"seconds": step1["seconds"] + step2["seconds"],
            "peak_process_mb": worst["peak_process_mb"], "peak_process": worst["peak_process"],
            "peak_total_mb": max(step1["peak_total_mb"], step2["peak_total_mb"]),
            "steps": [("assign", step1["seconds"], step1), ("dispatch", step2["seconds"], step2)],
            "report": json.loads(step2["stdout"]), "assign_dir": assign_dir}


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
        run = run_pipeline(chunked, a, f"-{path.stem}")
        parts = read_assignment(run["assign_dir"], ["_N"])["_N"]
        cuts = in_memory_cuts(g, parts, a.parts, a.seed)
        (_, s1, _), (_, s2, _) = run["steps"]
        print(f"{path.stem:<18}{g.num_nodes():>9,}{g.num_edges():>10,}{s1:>9.1f}{s2:>11.1f}"
              f"{g.num_edges() / run['seconds']:>9,.0f}{run['peak_process_mb']:>11,.0f}"
              f"{run['peak_total_mb']:>8,.0f}{cuts['assign']:>9,}{cuts['metis']:>9,}"
              f"{cuts['random']:>9,}"
              f"{cuts['assign'] / max(cuts['metis'], 1):>10.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--nodes", type=int, default=1 << 20)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--method", default="random")
    ap.add_argument("--two-commands", action="store_true",
                    help="run graphshard assign and graphshard dispatch, each in its own "
                         "process with its own Ray, instead of graphshard pipeline")
    ap.add_argument("--assign-engine", choices=["ray", "local"], default="ray",
                    help="engine of the assign step (local: lp's shard tasks on threads "
                         "in the assign process; implies --two-commands)")
    ap.add_argument("--assign-args", default="",
                    help="extra options of graphshard assign, e.g. '--max-task-entries "
                         "2000000'")
    ap.add_argument("--budget", default="auto",
                    help="--memory-budget of the run (default auto: what the parts need, "
                         "checked against this machine)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/graphshard-pipeline-bench"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", action="store_true",
                    help="after the run, the cut beside in-memory METIS's (same balance "
                         "constraints) and random's on the generated R-MAT (in memory)")
    ap.add_argument("--graph", type=Path, nargs="+",
                    help="real graph files instead of the generated R-MAT (METIS .graph or "
                         "an edge list), e.g. ../shared/data/walshaw/graphs/*.graph")
    a = ap.parse_args()
    a.two_commands = a.two_commands or a.assign_engine == "local"
    if a.graph and a.compare:
        ap.error("--compare is for the generated R-MAT; with --graph every line already "
                 "prints in-memory METIS's and random's cuts")
    if a.graph:
        return real_graphs(a)
    graph = a.dir / f"rmat-{a.nodes}-{a.edges}-{a.chunks}"
    t = time.perf_counter()
    write_rmat_chunks(graph, a.nodes, a.edges, a.chunks, a.seed)
    print(f"graph: {a.nodes:,} nodes, {a.edges:,} edges in {a.chunks} chunks "
          f"({time.perf_counter() - t:.1f}s); COO arrays alone: {a.edges * 16 / 2**20:,.0f} MiB")
    run = run_pipeline(graph, a, "")
    report = run["report"]
    print(f"{'step':10} {'seconds':>8} {'edges/s':>12} {'peak 1 proc MiB':>16} "
          f"{'peak sum MiB':>13}  largest process")
    for name, sec, r in run["steps"]:
        peaks = "" if r is None else (f" {r['peak_process_mb']:16,.0f} "
                                      f"{r['peak_total_mb']:13,.0f}  {r['peak_process']}")
        print(f"{name:10} {sec:8.1f} {a.edges / sec:12,.0f}{peaks}")
    print(f"{'total':10} {run['seconds']:8.1f} {a.edges / run['seconds']:12,.0f} "
          f"{run['peak_process_mb']:16,.0f} {run['peak_total_mb']:13,.0f}  "
          f"{run['peak_process']}")
    how = f"two commands, assign engine {a.assign_engine}" if a.two_commands else \
        "graphshard pipeline"
    print(f"method {a.method} ({how}): "
          f"edge cut {report['edge_cut']:,} ({report['cut_ratio']:.2%}), "
          f"node balance {report['node_balance']:.3f}, edge balance "
          f"{report['edge_balance']:.3f}, loadavg {psutil.getloadavg()[0]:.2f}")
    if a.compare:
        compare_rmat(graph, run["assign_dir"], a.parts,
                     "--no-balance-edges" not in a.assign_args.split(), a.seed)


if __name__ == "__main__":
    main()
