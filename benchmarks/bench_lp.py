"""Out-of-core ``lp_assign`` vs in-memory METIS, KaMinPar and random: cut, balance, time, memory.

One command:

    python benchmarks/bench_lp.py                       # R-MAT/SBM/RGG 1M + Walshaw, k=4,8,64
    python benchmarks/bench_lp.py --graphs 4elt add20 --k 4 8 --coarse dist
    python benchmarks/bench_lp.py --graphs blogcatalog musae-facebook rmat-2m --k 16 \
        --coarse-entries 262144 --max-task-entries 524288      # balanced nodes and edges
    python benchmarks/bench_lp.py --graphs rmat-2m --k 16 --no-balance-edges

Each graph is written to DGL's chunked format (16 chunks); ``lp_assign`` runs in a fresh
child process (numba compiled on a toy graph first, outside the timing) so that the peak
RSS printed is that of the out-of-core method alone.  METIS, KaMinPar (``default`` preset,
all cores) and random run in memory on the same undirected graph; all cuts are counted by one
function (``adjacency_cut``).

``--coarse fit`` (default) coarsens only until the coarse graph fits one worker
(``coarse_entries``); ``--coarse dist`` forces the distributed regime: coarsen down to
``2000 * k`` nodes (KaMinPar's contraction limit), so most of the work is label
propagation.  The geometric means of lp's cut / METIS's and / KaMinPar's are printed at
the end.

Both lp and the in-memory methods balance nodes and in-edges (``balance_edges``, lp's
default); ``--no-balance-edges`` balances nodes only.  ``nbal`` / ``ebal`` are lp's
heaviest part over the average in nodes and in in-edges (an edge counts with its
destination), ``m ebal`` METIS's in-edges, ``lp/rnd`` lp's cut over random's.
``--coarse-entries`` / ``--max-task-entries`` shrink lp's in-memory coarsest graph and
shards so that a small graph takes the multilevel, several-shard path of a big one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import graphshard as gs
from _shared import GEN_GRAPH, shared_file

#: social graphs: an edge list CSV with a header line
SOCIAL = {"blogcatalog": ("blogcatalog-pgl", "edges.csv"),
          "musae-facebook": ("musae-karateclub", "facebook", "edges.csv"),
          "musae-deezer": ("musae-karateclub", "deezer", "edges.csv")}
DEFAULT_GRAPHS = ["rmat-1m", "sbm-1m", "rgg-1m", "4elt", "add20", "memplus", "fe_body",
                  "t60k", "wing_nodal"]


def load_graph(name: str, cache: Path) -> gs.Graph:
    """A benchmark graph by name: ``rmat-1m``, ``rmat-2m`` (2M edges), ``sbm-1m``,
    ``rgg-1m``, a social graph of :data:`SOCIAL` or a Walshaw graph."""
    if name == "rmat-1m":
        return gs.datasets.rmat(1_000_000, 8_000_000, seed=1)
    if name == "rmat-2m":
        return gs.datasets.rmat(250_000, 2_000_000, seed=1)
    if name in SOCIAL:
        e = np.loadtxt(shared_file(*SOCIAL[name]), delimiter=",", skiprows=1, dtype=np.int64)
        ids, inv = np.unique(e, return_inverse=True)
        inv = inv.reshape(-1, 2)
        return gs.graph((inv[:, 0], inv[:, 1]), num_nodes=len(ids))
    if name == "sbm-1m":
        return gs.datasets.sbm(1_000_000, 8_000_000, num_blocks=64, p_in=0.9, seed=1,
                               num_features=0)
    if name == "rgg-1m":
        path = cache / "rgg-1m.npz"
        if not path.exists():
            subprocess.run([sys.executable, str(GEN_GRAPH), "rgg", "--nodes", "1000000", "--edges",
                            "5000000", "--seed", "1", "-o", str(path)], check=True,
                           stdout=subprocess.DEVNULL)
        z = np.load(path)
        return gs.graph((z["src"], z["dst"]), num_nodes=int(z["num_nodes"]))
    return gs.io.read_metis(shared_file("walshaw", "graphs", f"{name}.graph"))


def _in_memory(adj, k: int, method: str, seed: int, path: Path) -> tuple[np.ndarray, float]:
    """Parts and seconds of the in-memory ``method`` (``metis`` or ``kaminpar``), cached per
    graph, method, k and seed (both are deterministic for a seed)."""
    from graphshard.partition.methods import MethodOptions, run_method

    if path.exists():
        z = np.load(path)
        return z["parts"], float(z["seconds"])
    t = time.perf_counter()
    parts = run_method(adj, k, method, MethodOptions(seed=seed))
    sec = time.perf_counter() - t
    np.savez(path, parts=parts, seconds=sec)
    return parts, sec


def child(args: argparse.Namespace) -> None:
    """Run lp_assign once (after a warm-up) and print time and peak RSS as JSON."""
    from graphshard.io.chunked import load_chunked_meta
    from graphshard.partition.lp import lp_assign

    warm = tempfile.mkdtemp()
    src = np.arange(200)
    gs.io.write_chunked(gs.graph((src, (src + 1) % 200)), warm, 2)
    lp_assign(load_chunked_meta(warm), 4, coarse_nodes=20, num_workers=args.workers)
    meta = load_chunked_meta(args.child)
    t = time.perf_counter()
    sizes = {key: v for key, v in (("coarse_entries", args.coarse_entries),
                                   ("max_task_entries", args.max_task_entries)) if v}
    parts = lp_assign(meta, args.k[0], coarse_nodes=args.coarse_nodes, num_workers=args.workers,
                      seed=args.seed, balance_edges=args.balance_edges, **sizes)
    sec = time.perf_counter() - t
    np.save(Path(args.child) / "parts.npy", np.concatenate(list(parts.values())))
    print(json.dumps({"seconds": sec, "rss_mb": peak_rss_mb()}))


def peak_rss_mb() -> float:
    """This process's peak RSS (``VmHWM``).  Not ``ru_maxrss``: Linux carries that over
    ``exec`` from the forked parent, so a child of a big parent would report the parent's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=DEFAULT_GRAPHS)
    ap.add_argument("--k", nargs="+", type=int, default=[4, 8, 64])
    ap.add_argument("--coarse", choices=["fit", "dist"], default="fit")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-balance-edges", dest="balance_edges", action="store_false",
                    help="balance nodes only (lp and the in-memory methods)")
    ap.add_argument("--coarse-entries", type=int, default=None)
    ap.add_argument("--max-task-entries", type=int, default=None)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--coarse-nodes", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    from graphshard.partition.adjacency import symmetric_adjacency
    from graphshard.partition.backends import adjacency_cut
    from graphshard.partition.constraints import balance_weights
    from graphshard.partition.methods import MethodOptions, run_method

    cache = Path(tempfile.gettempdir()) / "graphshard-bench-lp"
    cache.mkdir(exist_ok=True)
    threads = os.environ.get("NUMBA_NUM_THREADS", "all")
    print(f"graphshard lp_assign vs METIS and KaMinPar; numba threads={threads}, "
          f"workers={args.workers}, coarse={args.coarse}, balance_edges={args.balance_edges}, "
          f"loadavg={os.getloadavg()[0]:.2f}")
    head = (f"{'graph':<11}{'nodes':>9}{'edges':>10}{'k':>4}{'lp cut':>10}{'metis':>10}"
            f"{'kaminpar':>10}{'random':>10}{'lp/metis':>9}{'lp/kmp':>7}{'lp/rnd':>7}{'nbal':>6}"
            f"{'ebal':>6}{'m ebal':>7}{'lp s':>7}"
            f"{'metis s':>8}{'lp MB':>7}")
    print(head)
    ratios, kmp_ratios = [], []
    for name in args.graphs:
        g = load_graph(name, cache)
        src, dst = g.edges()
        indeg = np.bincount(dst, minlength=g.num_nodes())
        adj = symmetric_adjacency(src, dst, g.num_nodes()).with_vertex_weights(
            balance_weights(g.num_nodes(), indeg, balance_edges=args.balance_edges))
        tag = "e" if args.balance_edges else "n"
        with tempfile.TemporaryDirectory(dir=cache) as d:
            gs.io.write_chunked(g, d, 16, fmt="numpy")
            for k in args.k:
                cn = 2000 * k if args.coarse == "dist" else None
                cmd = [sys.executable, __file__, "--child", d, "--k", str(k), "--workers",
                       str(args.workers), "--seed", str(args.seed)]
                cmd += [] if args.balance_edges else ["--no-balance-edges"]
                for flag, v in (("--coarse-entries", args.coarse_entries),
                                ("--max-task-entries", args.max_task_entries)):
                    cmd += [flag, str(v)] if v else []
                if cn is not None:
                    cmd += ["--coarse-nodes", str(cn)]
                out = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                                text=True).stdout.splitlines()[-1])
                parts = np.load(Path(d) / "parts.npy")
                pm, tm = _in_memory(adj, k, "metis", args.seed,
                                    cache / f"metis-{name}-{k}-{args.seed}-{tag}.npz")
                pk, _ = _in_memory(adj, k, "kaminpar", args.seed,
                                   cache / f"kaminpar-{name}-{k}-{args.seed}-{tag}.npz")
                pr = run_method(adj, k, "random", MethodOptions(seed=args.seed))
                cl, cm, ck, cr = (adjacency_cut(adj, p) for p in (parts, pm, pk, pr))
                nbal = np.bincount(parts, minlength=k).max() * k / g.num_nodes()
                ebal, mebal = (np.bincount(p, weights=indeg, minlength=k).max() * k
                               / max(1, indeg.sum()) for p in (parts, pm))
                ratios.append(cl / max(cm, 1))
                kmp_ratios.append(cl / max(ck, 1))
                print(f"{name:<11}{g.num_nodes():>9}{g.num_edges():>10}{k:>4}{cl:>10}{cm:>10}"
                      f"{ck:>10}{cr:>10}{cl / max(cm, 1):>9.3f}{cl / max(ck, 1):>7.3f}"
                      f"{cl / max(cr, 1):>7.3f}{nbal:>6.3f}{ebal:>6.3f}{mebal:>7.3f}"
                      f"{out['seconds']:>7.1f}{tm:>8.1f}{out['rss_mb']:>7.0f}",
                      flush=True)
    gmean, kmp_gmean = (math.exp(np.mean(np.log(r))) for r in (ratios, kmp_ratios))
    print(f"geometric mean over {len(ratios)} runs: lp/metis {gmean:.3f}, lp/kaminpar "
          f"{kmp_gmean:.3f}  (loadavg now {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
