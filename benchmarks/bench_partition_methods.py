"""Partition methods side by side: cut, balance, time and peak memory, each run in a child.

One command prints two tables:

1. graph, k, method, cut, cut/METIS, imbalance, time, time/METIS, peak RSS, RSS/METIS for
   every method on R-MAT, SBM, random-geometric and Walshaw graphs; the last rows give the
   geometric means of the ratios per method.
2. The Walshaw quality table: ``quality`` (and METIS) at k=2, eps=5% against the archive's
   best-known cuts, with the geometric mean of cut / best.

Each method runs in its own child process (``--child``), so ``peak RSS`` is that child's
own ``ru_maxrss`` at exit (imports + loaded graph + partitioner) and ``time`` is the partition call
only (graph loading and imports are outside it).  Synthetic graphs are cached in
``--cache`` (R-MAT and RGG come from ../shared/bench/gen_graph.py, SBM is generated here).

Usage::

    python benchmarks/bench_partition_methods.py --quick
    python benchmarks/bench_partition_methods.py                       # full (~30 min)
    python benchmarks/bench_partition_methods.py --graphs rmat-1m --k 8 --methods metis,auto
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from _shared import DATA, GEN_GRAPH

ROOT = Path(__file__).resolve().parents[1]
WALSHAW = DATA / "walshaw"
#: archive best-known cuts, k=2, eps=5% (../shared/data/walshaw/README.md)
BEST_K2 = {"add20": 536, "data": 181, "3elt": 87, "uk": 18, "add32": 10, "bcsstk33": 9914,
           "whitaker3": 126, "crack": 182, "wing_nodal": 1668, "fe_4elt2": 130,
           "bcsstk29": 2818, "4elt": 137, "fe_sphere": 384, "cti": 318, "memplus": 5253,
           "cs4": 353, "fe_body": 262, "t60k": 65, "wave": 8524}
SYNTH = {  # name -> (kind, nodes, undirected edges)
    "rmat-20k": ("rmat", 20_000, 200_000), "rgg-20k": ("rgg", 20_000, 200_000),
    "sbm-20k": ("sbm", 20_000, 200_000),
    "rmat-100k": ("rmat", 100_000, 1_000_000), "rgg-100k": ("rgg", 100_000, 1_000_000),
    "sbm-100k": ("sbm", 100_000, 1_000_000),
    "rmat-1m": ("rmat", 1_000_000, 10_000_000), "rgg-1m": ("rgg", 1_000_000, 10_000_000),
}
FULL_GRAPHS = ["rmat-100k", "sbm-100k", "rgg-100k", "wave", "fe_body", "rmat-1m"]
QUICK_GRAPHS = ["rmat-20k", "sbm-20k", "rgg-20k", "4elt"]
METHODS = ["metis", "kaminpar", "mtkahypar", "auto"]
QUICK_WALSHAW = ["add20", "data", "3elt", "uk", "add32", "whitaker3", "crack", "4elt"]


# --------------------------------------------------------------------------- graphs


def _sbm(nodes: int, edges: int, seed: int = 1, blocks: int = 50, p_in: float = 0.8
         ) -> tuple[np.ndarray, np.ndarray]:
    """Planted partition: ``p_in`` of the edges inside one of ``blocks`` equal blocks."""
    rng = np.random.default_rng(seed)
    want = int(edges * 1.05) + 16
    inside = rng.random(want) < p_in
    block = rng.integers(0, blocks, want)
    size = nodes // blocks
    u = np.where(inside, block * size + rng.integers(0, size, want), rng.integers(0, nodes, want))
    v = np.where(inside, block * size + rng.integers(0, size, want), rng.integers(0, nodes, want))
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    key = np.unique((lo * nodes + hi)[lo != hi])[:edges]
    perm = rng.permutation(nodes)  # IDs carry no block information
    return perm[key // nodes], perm[key % nodes]


def adjacency_file(name: str, cache: Path) -> Path:
    """Cached ``.npz`` of the symmetric adjacency of graph ``name`` (built on first use)."""
    from graphshard.partition.adjacency import symmetric_adjacency

    out = cache / f"{name}.adj.npz"
    if out.exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    if name in SYNTH:
        kind, nodes, edges = SYNTH[name]
        if kind == "sbm":
            src, dst = _sbm(nodes, edges)
        else:
            raw = cache / f"{name}.npz"
            if not raw.exists():
                subprocess.run([sys.executable, str(GEN_GRAPH), kind, "--nodes", str(nodes),
                                "--edges", str(edges), "--seed", "1", "-o", str(raw)], check=True,
                               stdout=subprocess.DEVNULL)
            with np.load(raw) as z:
                src, dst = z["src"], z["dst"]
        adj = symmetric_adjacency(src, dst, nodes)
    else:
        from graphshard.io import read_metis

        graphs = WALSHAW / "graphs"
        path = graphs / f"{name}.graph"
        g = read_metis(path if path.exists() else graphs / f"{name}.graph.bz2")
        src, dst = g.edges()
        adj = symmetric_adjacency(src, dst, g.num_nodes())
    np.savez(out, indptr=adj.indptr, indices=adj.indices, edge_weights=adj.edge_weights)
    return out


# --------------------------------------------------------------------------- child


def child(args: argparse.Namespace) -> None:
    """Load one adjacency, run one method, save the parts, print timings as JSON."""
    import logging

    from graphshard.partition import backends, portfolio
    from graphshard.partition.adjacency import Adjacency
    from graphshard.partition.methods import MethodOptions, run_method
    from graphshard.partition.metis_lib import metis_kway

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with np.load(args.adj) as z:
        adj = Adjacency(z["indptr"], z["indices"], z["edge_weights"])
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    opts = MethodOptions(imbalance=args.imbalance, seed=args.seed, threads=args.threads)
    method, _, preset = args.method.partition(":")
    extra = portfolio.auto_choice(adj, args.k, opts) if method == "auto" else None
    start, cpu = time.perf_counter(), time.process_time()
    if method == "metis" and preset in ("kway", "recursive"):  # METIS's scheme, no repair
        parts = metis_kway(adj, args.k, imbalance=args.imbalance, objtype="cut",
                           seed=args.seed, recursive=preset == "recursive")
    elif preset:
        fn = {"kaminpar": backends.kaminpar_partition,
              "mtkahypar": backends.mtkahypar_partition}[method]
        parts = fn(adj, args.k, opts, preset=preset)
    else:
        parts = run_method(adj, args.k, method, opts)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "cpu_s": cpu, "choice": extra, "rss_mb": peak,
                      "base_mb": base,
                      "cut": backends.adjacency_cut(adj, parts),
                      "imbalance": backends.part_imbalance(adj, parts, args.k),
                      "valid": bool(parts.min() >= 0 and parts.max() < args.k)}))


def run_child(adj: Path, k: int, method: str, ns: argparse.Namespace, imbalance: float) -> dict:
    """Run ``method`` in a fresh process, which reports time, peak RSS, cut and balance.

    The parent never loads a graph: a child's ``ru_maxrss`` starts from its parent's RSS
    at fork, so a big parent would inflate every figure.
    """
    cmd = [sys.executable, __file__, "--child", "--adj", str(adj), "--k", str(k), "--method",
           method, "--seed", str(ns.seed), "--imbalance", str(imbalance)]
    cmd += ["--threads", str(ns.threads)] if ns.threads else []
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{method} on {adj.name} k={k} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def prepared(name: str, cache: Path) -> Path:
    """:func:`adjacency_file` run in a child process (keeps this process small)."""
    out = cache / f"{name}.adj.npz"
    if not out.exists():
        subprocess.run([sys.executable, __file__, "--prepare", name, "--cache", str(cache)],
                       check=True)
    return out


# --------------------------------------------------------------------------- tables


def geomean(values: list[float]) -> float:
    """Geometric mean (nan for an empty list)."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def method_table(ns: argparse.Namespace) -> None:
    print(f"{'graph':<11}{'k':>4} {'method':<18}{'cut':>10}{'cut/M':>7}{'imbal':>7}"
          f"{'time s':>9}{'t/M':>7}{'CPU s':>8}{'RSS MB':>8}{'mem/M':>7}{'base':>6}  choice",
          flush=True)
    ratios: dict[str, dict[str, list[float]]] = {}
    for name in ns.graphs:
        adj = prepared(name, ns.cache)
        for k in ns.k:
            base = None
            for method in ["metis", *[m for m in ns.methods if m != "metis"]]:
                r = run_child(adj, k, method, ns, ns.imbalance)
                base = base or r
                rc = r["cut"] / max(base["cut"], 1)
                rt = r["seconds"] / max(base["seconds"], 1e-6)
                rm = r["rss_mb"] / base["rss_mb"]
                for key, val in (("cut", rc), ("time", rt), ("mem", rm)):
                    ratios.setdefault(method, {}).setdefault(key, []).append(max(val, 1e-9))
                choice = "" if not r["choice"] else ":".join(r["choice"])
                print(f"{name:<11}{k:>4} {method:<18}{r['cut']:>10}{rc:>7.3f}"
                      f"{r['imbalance']:>7.3f}{r['seconds']:>9.3f}{rt:>7.2f}{r['cpu_s']:>8.1f}"
                      f"{r['rss_mb']:>8.0f}"
                      f"{rm:>7.2f}{r['base_mb']:>6.0f}  {choice}", flush=True)
    print("\ngeometric means over all (graph, k) rows, ratio to METIS:")
    for method, by in ratios.items():
        print(f"  {method:<18} cut {geomean(by['cut']):.3f}  time {geomean(by['time']):.3f}  "
              f"peak RSS {geomean(by['mem']):.3f}")


def walshaw_table(ns: argparse.Namespace) -> None:
    names = QUICK_WALSHAW if ns.quick else list(BEST_K2)
    print("\nWalshaw k=2 eps=5% (archive rule max <= 1.05*ceil(n/2)); cut = undirected edges")
    print(f"{'graph':<11}{'best':>7} {'metis':>7}{'/best':>7} {'quality':>8}{'/best':>7}"
          f"{'time s':>8} ok")
    rq, rm = [], []
    for name in names:
        adj = prepared(name, ns.cache)
        with np.load(adj) as z:
            n = len(z["indptr"]) - 1
        m = run_child(adj, 2, "metis", ns, 0.05)
        q = run_child(adj, 2, "quality", ns, 0.05)
        best = BEST_K2[name]
        qc, mc = q["cut"] // 2, m["cut"] // 2  # directed cut = 2 x undirected
        ok = (1 + q["imbalance"]) * n / 2 <= 1.05 * -(-n // 2) + 1e-9
        rq.append(qc / best)
        rm.append(mc / best)
        print(f"{name:<11}{best:>7} {mc:>7}{mc / best:>7.3f} {qc:>8}{qc / best:>7.3f}"
              f"{q['seconds']:>8.2f} {'yes' if ok else 'NO'}", flush=True)
    print(f"{'geomean':<11}{'':>7} {'':>7}{geomean(rm):>7.3f} {'':>8}{geomean(rq):>7.3f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small graphs, k=8, a few Walshaw")
    ap.add_argument("--graphs", type=lambda s: s.split(","), default=None)
    ap.add_argument("--k", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--methods", type=lambda s: s.split(","), default=METHODS,
                    help="registry names or backend:preset, e.g. kaminpar:fast")
    ap.add_argument("--imbalance", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/graphshard-bench"))
    ap.add_argument("--no-methods", action="store_true", help="only the Walshaw table")
    ap.add_argument("--no-walshaw", action="store_true", help="only the methods table")
    # child mode
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--adj", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--method", help=argparse.SUPPRESS)
    ap.add_argument("--prepare", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.prepare:
        adjacency_file(ns.prepare, ns.cache)
        return
    if ns.child:
        ns.k = ns.k[0]
        child(ns)
        return
    ns.graphs = ns.graphs or (QUICK_GRAPHS if ns.quick else FULL_GRAPHS)
    ns.k = ns.k or ([8] if ns.quick else [8, 64])
    import platform

    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    print(f"python {platform.python_version()}, cores {os.cpu_count()}, threads "
          f"{ns.threads or 'all'}, loadavg {' '.join(load)}, imbalance {ns.imbalance}")
    if not ns.no_methods:
        method_table(ns)
    if not ns.no_walshaw:
        walshaw_table(ns)
    with open("/proc/loadavg") as handle:
        print(f"loadavg at end {' '.join(handle.read().split()[:3])}")


if __name__ == "__main__":
    main()
