"""Sampling throughput: graphshard vs DGL 2.1 on the same graphs, seeds, cores.

One command runs both sides, each in its own process (ours under this Python, DGL under
``--dgl-python``), on identical seed sets written to a work folder, and prints one table per
graph with the ratio ours/DGL.  Numba compilation and DGL's format creation happen before
the timed loops.  Output sizes are compared before a ratio is quoted (uniform one-hop
sampling without replacement and walks on nodes with out-edges have exact sizes).

    python benchmarks/bench_sampling.py                       # rmat-1m + blogcatalog
    python benchmarks/bench_sampling.py --graphs blogcatalog --reps 3

Graphs: ``rmat-1m`` = /work/shared/bench/gen_graph.py R-MAT, 1M nodes, 10M undirected edges
(20M directed), made if missing; ``blogcatalog`` = /work/shared/data/blogcatalog-pgl
(symmetrised); metapath walks run on HGB DBLP (author-paper-venue-paper-author).
The DGL side needs only numpy, torch and dgl (it never imports graphshard).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared"
MARK = "@@RESULT@@"
METAPATH = ["author2paper", "paper2venue", "venue2paper", "paper2author"]


# ----- inputs (driver) ---------------------------------------------------------------------
def _rmat(work: Path) -> Path:
    out = Path("/tmp/graphs/rmat-1m.npz")
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(SHARED / "bench" / "gen_graph.py"), "rmat",
                        "--nodes", "1000000", "--edges", "10000000", "--seed", "1",
                        "-o", str(out)], check=True)
    z = np.load(out)
    return _write_homo(work / "rmat-1m.npz", z["src"], z["dst"], int(z["num_nodes"]))


def _blogcatalog(work: Path) -> Path:
    e = np.loadtxt(SHARED / "data" / "blogcatalog-pgl" / "edges.csv", delimiter=",",
                   dtype=np.int64) - 1
    return _write_homo(work / "blogcatalog.npz", e[:, 0], e[:, 1], 10312)


def _write_homo(path: Path, u: np.ndarray, v: np.ndarray, n: int) -> Path:
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    w = np.random.default_rng(0).random(len(src)).astype(np.float32) + 0.01
    np.savez(path, src=src, dst=dst, num_nodes=n, w=w)
    return path


def _dblp(work: Path) -> Path:
    with zipfile.ZipFile(SHARED / "data" / "hgb" / "DBLP.zip") as zf:
        info = json.loads(zf.read("DBLP/info.dat"))
        links = np.loadtxt(io.BytesIO(zf.read("DBLP/link.dat")))
    names = info["node.dat"]["node type"]
    s, d, lt = links[:, 0].astype(np.int64), links[:, 1].astype(np.int64), links[:, 2]
    lo, hi, arrays = {}, {}, {}
    for k, spec in info["link.dat"]["link type"].items():
        m = lt == int(k)
        for end, ids in (("start", s[m]), ("end", d[m])):
            t = names[str(spec[end])]
            lo[t] = min(lo.get(t, ids.min()), ids.min())
            hi[t] = max(hi.get(t, ids.max()), ids.max())
    for k, spec in info["link.dat"]["link type"].items():
        m = lt == int(k)
        st, dt = names[str(spec["start"])], names[str(spec["end"])]
        arrays[f"{st}:{st}2{dt}:{dt}:src"] = s[m] - lo[st]
        arrays[f"{st}:{st}2{dt}:{dt}:dst"] = d[m] - lo[dt]
    for t in lo:
        arrays[f"n:{t}"] = np.int64(hi[t] - lo[t] + 1)
    np.savez(work / "dblp.npz", **arrays)
    return work / "dblp.npz"


def _seed_sets(path: Path, args: argparse.Namespace) -> Path:
    z = np.load(path)
    n = int(z["num_nodes"])
    deg = np.bincount(z["src"], minlength=n)
    cand = np.flatnonzero(deg > 0)
    rng = np.random.default_rng(args.seed)
    pick = lambda k: rng.choice(cand, size=min(k, len(cand)), replace=False)  # noqa: E731
    out = path.with_suffix(".seeds.npz")
    np.savez(out, hop=np.stack([pick(args.seeds) for _ in range(args.reps + 1)]),
             block=np.stack([pick(args.batch) for _ in range(args.reps + 1)]),
             walk=rng.choice(cand, size=(args.reps + 1, args.walkers)),
             dblp=np.random.default_rng(1).integers(0, 4057, size=(args.reps + 1, 20000)))
    return out


# ----- timing helpers (both sides) ---------------------------------------------------------
def _timed(fn, sets):
    fn(sets[0])  # warm-up (numba compile, lazy formats)
    total, secs = 0, 0.0
    for s in sets[1:]:
        t = time.perf_counter()
        size = fn(s)
        secs += time.perf_counter() - t
        total += size
    return total, secs


def _rates(res, name, total, secs, reps):
    res[f"{name}_per_s"] = total / secs
    res[f"{name}_per_call"] = total / reps


# ----- our worker --------------------------------------------------------------------------
def worker_ours(graph: Path, seeds: Path, dblp: Path, args: argparse.Namespace) -> dict:
    import numba

    import graphshard as gs
    from graphshard import sampling as S

    z, sd = np.load(graph), np.load(seeds)
    g = gs.graph((z["src"], z["dst"]), num_nodes=int(z["num_nodes"]))
    g.edata["w"] = z["w"]
    g.in_csr(), g.out_csr()
    res = {"threads": numba.get_num_threads(), "version": gs.__version__}
    for k in (10, 25):
        for name, kw in ((f"f{k}_edges", {}), (f"f{k}_weighted_edges", {"prob": "w"})):
            tot, secs = _timed(lambda s, k=k, kw=kw: S.sample_neighbors(
                g, s, k, seed=1, **kw).num_edges(), sd["hop"])
            _rates(res, name, tot, secs, args.reps)
    def blk(s: np.ndarray) -> int:  # DGL convention: fanouts[-1] = 25 for the seeds
        return sum(b.num_edges() for b in S.sample_blocks(g, s, [10, 25], seed=2).blocks)

    tot, secs = _timed(blk, sd["block"])
    res["blocks_per_s"] = args.reps / secs
    _rates(res, "block_edges", tot, secs, args.reps)
    L = args.walk_length + 1
    walks = {"rw": lambda s: S.random_walk(g, s, L, seed=3).num_steps(),
             "rw_weighted": lambda s: S.random_walk(g, s, L, prob="w", seed=3).num_steps(),
             "n2v": lambda s: S.node2vec_walk(g, s, L, p=1.0, q=0.5, seed=3).num_steps()}
    for name, fn in walks.items():
        tot, secs = _timed(fn, sd["walk"])
        _rates(res, f"{name}_steps", tot, secs, args.reps)
    numba.set_num_threads(1)
    tot, secs = _timed(walks["rw"], sd["walk"])
    _rates(res, "rw_1thread_steps", tot, secs, args.reps)
    numba.set_num_threads(res["threads"])
    w = S.random_walk(g, sd["walk"][0], L, seed=3)
    tot, secs = _timed(lambda s: len(S.skip_gram_pairs(w, 5)), [None] * (args.reps + 1))
    _rates(res, "pairs", tot, secs, args.reps)
    hz = np.load(dblp)
    data = {tuple(k[:-4].split(":")): (hz[k], hz[k[:-3] + "dst"]) for k in hz.files
            if k.endswith(":src")}
    hg = gs.heterograph(data, num_nodes_dict={k[2:]: int(hz[k]) for k in hz.files
                                              if k.startswith("n:")})
    mp = "-".join(METAPATH)
    tot, secs = _timed(lambda s: S.random_walk(hg, s, L, metapath=mp, seed=4).num_steps(),
                       sd["dblp"])
    _rates(res, "metapath_steps", tot, secs, args.reps)
    return res


# ----- DGL worker --------------------------------------------------------------------------
def worker_dgl(graph: Path, seeds: Path, dblp: Path, args: argparse.Namespace) -> dict:
    import dgl
    import torch

    torch.set_num_threads(args.threads)
    z, sd = np.load(graph), np.load(seeds)
    g = dgl.graph((torch.from_numpy(z["src"]), torch.from_numpy(z["dst"])),
                  num_nodes=int(z["num_nodes"]))
    g.edata["w"] = torch.from_numpy(z["w"])
    g.create_formats_()
    T = lambda a: [torch.from_numpy(np.ascontiguousarray(x)) for x in a]  # noqa: E731
    res = {"threads": torch.get_num_threads(), "version": dgl.__version__}
    for k in (10, 25):
        for name, kw in ((f"f{k}_edges", {}), (f"f{k}_weighted_edges", {"prob": "w"})):
            tot, secs = _timed(lambda s, k=k, kw=kw: dgl.sampling.sample_neighbors(
                g, s, k, copy_ndata=False, copy_edata=False, **kw).num_edges(), T(sd["hop"]))
            _rates(res, name, tot, secs, args.reps)

    def blocks(seeds):
        edges = 0
        for fanout in (25, 10):  # DGL fanouts [10, 25]: the seeds get 25
            fr = dgl.sampling.sample_neighbors(g, seeds, fanout, copy_ndata=False,
                                               copy_edata=False)
            blk = dgl.to_block(fr, seeds)
            seeds = blk.srcdata[dgl.NID]
            edges += blk.num_edges()
        return edges

    tot, secs = _timed(blocks, T(sd["block"]))
    res["blocks_per_s"] = args.reps / secs
    _rates(res, "block_edges", tot, secs, args.reps)
    L = args.walk_length
    steps = lambda tr: int((tr[:, 1:] >= 0).sum())  # noqa: E731
    walks = {"rw": lambda s: steps(dgl.sampling.random_walk(g, s, length=L)[0]),
             "rw_weighted": lambda s: steps(dgl.sampling.random_walk(g, s, length=L,
                                                                     prob="w")[0]),
             "n2v": lambda s: steps(dgl.sampling.node2vec_random_walk(g, s, 1.0, 0.5, L))}
    for name, fn in walks.items():
        tot, secs = _timed(fn, T(sd["walk"]))
        _rates(res, f"{name}_steps", tot, secs, args.reps)
    torch.set_num_threads(1)
    tot, secs = _timed(walks["rw"], T(sd["walk"]))
    _rates(res, "rw_1thread_steps", tot, secs, args.reps)
    torch.set_num_threads(args.threads)
    hz = np.load(dblp)
    data = {tuple(k[:-4].split(":")): (torch.from_numpy(hz[k]),
                                       torch.from_numpy(hz[k[:-3] + "dst"]))
            for k in hz.files if k.endswith(":src")}
    hg = dgl.heterograph(data, num_nodes_dict={k[2:]: int(hz[k]) for k in hz.files
                                               if k.startswith("n:")})
    hg.create_formats_()
    mp = (METAPATH * (L // len(METAPATH) + 1))[:L]
    tot, secs = _timed(lambda s: steps(dgl.sampling.random_walk(hg, s, metapath=mp)[0]),
                       T(sd["dblp"]))
    _rates(res, "metapath_steps", tot, secs, args.reps)
    return res


# ----- driver ------------------------------------------------------------------------------
ROWS = [
    ("one-hop fanout 10, edges/s", "f10_edges_per_s"),
    ("one-hop fanout 25, edges/s", "f25_edges_per_s"),
    ("weighted fanout 10, edges/s", "f10_weighted_edges_per_s"),
    ("weighted fanout 25, edges/s", "f25_weighted_edges_per_s"),
    ("2-hop 25->10 blocks/s (batch 1024, incl. reindex)", "blocks_per_s"),
    ("2-hop block edges/s", "block_edges_per_s"),
    ("uniform walk steps/s", "rw_steps_per_s"),
    ("uniform walk steps/s, 1 thread (per core)", "rw_1thread_steps_per_s"),
    ("weighted walk steps/s", "rw_weighted_steps_per_s"),
    ("node2vec (p=1, q=0.5) steps/s", "n2v_steps_per_s"),
    ("metapath walk steps/s (DBLP APVPA)", "metapath_steps_per_s"),
    ("skip-gram pairs/s (win 5)", "pairs_per_s"),
]
EXACT = ["f10_edges_per_call", "f25_edges_per_call", "rw_steps_per_call"]


def _run_worker(python: str, side: str, paths: list[Path], args: argparse.Namespace) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(args.threads), DGLBACKEND="pytorch",
               OMP_NUM_THREADS=str(args.threads))
    # graphshard defaults to passive OpenMP waiting; give DGL's OpenMP the same setting
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cmd = [python, __file__, "--worker", side, *map(str, paths), "--reps", str(args.reps),
           "--threads", str(args.threads), "--walk-length", str(args.walk_length)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    line = [x for x in out.stdout.splitlines() if x.startswith(MARK)]
    if out.returncode or not line:
        raise SystemExit(f"{side} worker failed:\n{out.stderr[-3000:]}")
    return json.loads(line[-1][len(MARK):])


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:,.2f}M" if x >= 1e5 else f"{x:,.1f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", default="rmat-1m,blogcatalog")
    ap.add_argument("--dgl-python", default="/tmp/venv-dgl/bin/python")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10000, help="seeds per one-hop call")
    ap.add_argument("--batch", type=int, default=1024, help="seeds per 2-hop batch")
    ap.add_argument("--walkers", type=int, default=100000)
    ap.add_argument("--walk-length", type=int, default=20, help="steps (DGL's length)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/bench-sampling")
    ap.add_argument("--worker", choices=["ours", "dgl"], help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        fn = worker_ours if args.worker == "ours" else worker_dgl
        print(MARK + json.dumps(fn(*map(Path, args.paths), args)), flush=True)
        return
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    dblp = _dblp(work)
    makers = {"rmat-1m": _rmat, "blogcatalog": _blogcatalog}
    for name in args.graphs.split(","):
        graph = makers[name](work)
        seeds = _seed_sets(graph, args)
        load0 = os.getloadavg()[0]
        ours = _run_worker(sys.executable, "ours", [graph, seeds, dblp], args)
        peer = _run_worker(args.dgl_python, "dgl", [graph, seeds, dblp], args)
        load1 = os.getloadavg()[0]
        print(f"\n## {name}: graphshard {ours['version']} vs DGL {peer['version']}, "
              f"threads {args.threads}, reps {args.reps}, OMP_WAIT_POLICY "
              f"{os.environ.get('OMP_WAIT_POLICY', 'PASSIVE')}, loadavg {load0:.2f} -> {load1:.2f}")
        for key in EXACT:
            if abs(ours[key] - peer[key]) > 1e-9 * max(1.0, peer[key]):
                print(f"!! output sizes differ for {key}: ours {ours[key]} vs DGL {peer[key]}")
        print(f"block edges per batch: ours {ours['block_edges_per_call']:.0f}, "
              f"DGL {peer['block_edges_per_call']:.0f}")
        print("| metric | graphshard | DGL 2.1 | ratio |\n|---|---:|---:|---:|")
        for label, key in ROWS:
            a, b = ours.get(key), peer.get(key)
            ratio = f"{a / b:.2f}x" if a and b else "-"
            print(f"| {label} | {_fmt(a)} | {_fmt(b)} | {ratio} |")
        wr = ours["f25_weighted_edges_per_s"] / ours["f25_edges_per_s"]
        print(f"weighted/uniform (fanout 25, ours): {wr:.2f}")


if __name__ == "__main__":
    main()
