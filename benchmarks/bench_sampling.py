"""Sampling throughput: graphshard vs DGL 2.1 on the same graphs, seeds, cores.

One command runs both sides, each in its own long-lived worker process (ours under this
Python, DGL under ``--dgl-python``), on identical seed sets written to a work folder.  The
driver interleaves them: for every metric and repetition it asks each worker in turn to time
its calls on the same seed set (one call, or as many as last ``--min-time`` seconds), so load
from other processes hits both sides alike.  Numba
compilation and DGL's format creation happen in a warm-up call before the timed ones.  Rates
are total output over total wall seconds; the ratio column is the median of the
per-repetition ratios (each pair timed back to back), which is the figure to quote on a
shared machine.  The one-thread walk is also given per CPU-second (process time), the
per-core figure that load from other processes does not dilute.
Memory: each worker reports its resident set (``VmRSS``) and peak (``VmHWM``, from
``/proc/self/status``: per process image, so the driver's memory at fork does not count, as
it can in ``ru_maxrss``) once its graphs are loaded with every format built, and after the
metrics both sides run (alias tables and other structures built on first use included;
ours-only metrics with big outputs, ``OURS_ONLY``, run after that and get a row of their
own); the table prints them side by side with ours/DGL.
Output sizes are compared before a ratio is quoted (uniform one-hop sampling without
replacement and walks on nodes with out-edges have exact sizes).

    python benchmarks/bench_sampling.py                       # rmat-1m + blogcatalog
    python benchmarks/bench_sampling.py --graphs blogcatalog --reps 3
    python benchmarks/bench_sampling.py --before-src /tmp/old/src   # adds a "before" column

``--before-src`` runs a third worker with that directory first on ``PYTHONPATH`` (a copy of
an older ``src/`` tree), for before/after figures from the same interleaved pass.

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

from _shared import GEN_GRAPH, memory_mb, shared_file

MARK = "@@RESULT@@"
METAPATH = ["author2paper", "paper2venue", "venue2paper", "paper2author"]


# ----- inputs (driver) ---------------------------------------------------------------------
def _rmat(work: Path) -> Path:
    out = Path("/tmp/graphs/rmat-1m.npz")
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(GEN_GRAPH), "rmat",
                        "--nodes", "1000000", "--edges", "10000000", "--seed", "1",
                        "-o", str(out)], check=True)
    z = np.load(out)
    return _write_homo(work / "rmat-1m.npz", z["src"], z["dst"], int(z["num_nodes"]))


def _blogcatalog(work: Path) -> Path:
    e = np.loadtxt(shared_file("blogcatalog-pgl", "edges.csv"), delimiter=",",
                   dtype=np.int64) - 1
    return _write_homo(work / "blogcatalog.npz", e[:, 0], e[:, 1], 10312)


def _write_homo(path: Path, u: np.ndarray, v: np.ndarray, n: int) -> Path:
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    w = np.random.default_rng(0).random(len(src)).astype(np.float32) + 0.01
    np.savez(path, src=src, dst=dst, num_nodes=n, w=w)
    return path


def _dblp(work: Path) -> Path:
    with zipfile.ZipFile(shared_file("hgb", "DBLP.zip")) as zf:
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


# ----- workers (each side builds name -> (call, seed sets); call(seeds) -> output size) -----
def metrics_ours(graph: Path, seeds: Path, dblp: Path, args: argparse.Namespace) -> tuple:
    import numba

    import graphshard as gs
    from graphshard import sampling as S

    z, sd = np.load(graph), np.load(seeds)
    g = gs.graph((z["src"], z["dst"]), num_nodes=int(z["num_nodes"]))
    g.edata["w"] = z["w"]
    g.in_csr(), g.out_csr()
    info = {"threads": numba.get_num_threads(), "version": gs.__version__}
    m: dict = {}
    for k in (10, 25):
        m[f"f{k}_edges"] = (lambda s, k=k: S.sample_neighbors(g, s, k, seed=1).num_edges(),
                            sd["hop"])
        m[f"f{k}_weighted_edges"] = (lambda s, k=k: S.sample_neighbors(
            g, s, k, prob="w", seed=1).num_edges(), sd["hop"])

    # the kernel layer alone on one thread (sample_etype: tables cached, no validation), for
    # the weighted/uniform ratio in CPU time, the figure that load from other processes
    # dilutes least; same seeds as the whole calls above
    from graphshard.sampling.neighbors import sample_etype
    from graphshard.store import as_store

    store, et = as_store(g), g.canonical_etypes[0]

    def kernel_only(s: np.ndarray, k: int, prob: str | None) -> int:
        numba.set_num_threads(1)
        try:
            keys = np.ascontiguousarray(s, dtype=np.int64)
            return len(sample_etype(store, et, "in", keys, k, replace=False, prob=prob,
                                    exclude=None, seed=1, salt=0)[0])
        finally:
            numba.set_num_threads(info["threads"])

    for k in (10, 25):
        m[f"f{k}_kernel_edges"] = (lambda s, k=k: kernel_only(s, k, None), sd["hop"])
        m[f"f{k}_weighted_kernel_edges"] = (lambda s, k=k: kernel_only(s, k, "w"), sd["hop"])

    def blk(s: np.ndarray) -> int:  # DGL convention: fanouts[-1] = 25 for the seeds
        return sum(b.num_edges() for b in S.sample_blocks(g, s, [10, 25], seed=2).blocks)

    m["block_edges"] = (blk, sd["block"])
    L = args.walk_length + 1
    m["rw_steps"] = (lambda s: S.random_walk(g, s, L, seed=3).num_steps(), sd["walk"])
    m["rw_weighted_steps"] = (lambda s: S.random_walk(g, s, L, prob="w", seed=3).num_steps(),
                              sd["walk"])
    m["n2v_steps"] = (lambda s: S.node2vec_walk(g, s, L, p=1.0, q=0.5, seed=3).num_steps(),
                      sd["walk"])

    def one_thread(s: np.ndarray) -> int:
        numba.set_num_threads(1)
        try:
            return m["rw_steps"][0](s)
        finally:
            numba.set_num_threads(info["threads"])

    m["rw_1thread_steps"] = (one_thread, sd["walk"])
    w = S.random_walk(g, sd["walk"][0], L, seed=3)
    m["pairs"] = (lambda s: len(S.skip_gram_pairs(w, 5)), sd["walk"])
    hz = np.load(dblp)
    data = {tuple(k[:-4].split(":")): (hz[k], hz[k[:-3] + "dst"]) for k in hz.files
            if k.endswith(":src")}
    hg = gs.heterograph(data, num_nodes_dict={k[2:]: int(hz[k]) for k in hz.files
                                              if k.startswith("n:")})
    mp = "-".join(METAPATH)
    m["metapath_steps"] = (lambda s: S.random_walk(hg, s, L, metapath=mp, seed=4).num_steps(),
                           sd["dblp"])
    return info, m


def metrics_dgl(graph: Path, seeds: Path, dblp: Path, args: argparse.Namespace) -> tuple:
    import dgl
    import torch

    torch.set_num_threads(args.threads)
    z, sd = np.load(graph), np.load(seeds)
    g = dgl.graph((torch.from_numpy(z["src"]), torch.from_numpy(z["dst"])),
                  num_nodes=int(z["num_nodes"]))
    g.edata["w"] = torch.from_numpy(z["w"])
    g.create_formats_()
    T = lambda a: [torch.from_numpy(np.ascontiguousarray(x)) for x in a]  # noqa: E731
    info = {"threads": torch.get_num_threads(), "version": dgl.__version__}
    m: dict = {}
    for k in (10, 25):
        for name, kw in ((f"f{k}_edges", {}), (f"f{k}_weighted_edges", {"prob": "w"})):
            m[name] = (lambda s, k=k, kw=kw: dgl.sampling.sample_neighbors(
                g, s, k, copy_ndata=False, copy_edata=False, **kw).num_edges(), T(sd["hop"]))

    def blocks(seeds):
        edges = 0
        for fanout in (25, 10):  # DGL fanouts [10, 25]: the seeds get 25
            fr = dgl.sampling.sample_neighbors(g, seeds, fanout, copy_ndata=False,
                                               copy_edata=False)
            blk = dgl.to_block(fr, seeds)
            seeds = blk.srcdata[dgl.NID]
            edges += blk.num_edges()
        return edges

    m["block_edges"] = (blocks, T(sd["block"]))
    L = args.walk_length
    steps = lambda tr: int((tr[:, 1:] >= 0).sum())  # noqa: E731
    m["rw_steps"] = (lambda s: steps(dgl.sampling.random_walk(g, s, length=L)[0]),
                     T(sd["walk"]))
    m["rw_weighted_steps"] = (lambda s: steps(dgl.sampling.random_walk(
        g, s, length=L, prob="w")[0]), T(sd["walk"]))
    m["n2v_steps"] = (lambda s: steps(dgl.sampling.node2vec_random_walk(g, s, 1.0, 0.5, L)),
                      T(sd["walk"]))

    def one_thread(s):
        torch.set_num_threads(1)
        try:
            return m["rw_steps"][0](s)
        finally:
            torch.set_num_threads(args.threads)

    m["rw_1thread_steps"] = (one_thread, T(sd["walk"]))
    hz = np.load(dblp)
    data = {tuple(k[:-4].split(":")): (torch.from_numpy(hz[k]),
                                       torch.from_numpy(hz[k[:-3] + "dst"]))
            for k in hz.files if k.endswith(":src")}
    hg = dgl.heterograph(data, num_nodes_dict={k[2:]: int(hz[k]) for k in hz.files
                                               if k.startswith("n:")})
    hg.create_formats_()
    mp = (METAPATH * (L // len(METAPATH) + 1))[:L]
    m["metapath_steps"] = (lambda s: steps(dgl.sampling.random_walk(hg, s, metapath=mp)[0]),
                           T(sd["dblp"]))
    return info, m



def serve(side: str, paths: list[Path], args: argparse.Namespace) -> None:
    """Worker loop: ``warm NAME`` runs set 0 untimed (then times it once more to pick how
    many calls a repetition makes: enough for ``--min-time`` seconds, as one short call is
    mostly noise on a shared machine), ``run NAME REP`` times set REP and reports the output
    size of one call with its mean wall and CPU seconds."""
    build = metrics_ours if side == "ours" else metrics_dgl
    info, m = build(*paths, args)
    info["loaded"] = memory_mb()
    calls: dict[str, int] = {}
    print(MARK + json.dumps(info), flush=True)
    for line in sys.stdin:
        words = line.split()
        if words == ["quit"]:
            return
        if words == ["memory"]:
            print(MARK + json.dumps(memory_mb()), flush=True)
            continue
        cmd, name, *rest = words
        fn, sets = m.get(name, (None, None))
        if fn is None:
            print(MARK + json.dumps(None), flush=True)
            continue
        rep = int(rest[0]) if rest else 0
        n = calls.get(name, 1)
        c, t = time.process_time(), time.perf_counter()
        for _ in range(n):
            size = fn(sets[rep])
        secs, cpu = (time.perf_counter() - t) / n, (time.process_time() - c) / n
        if cmd == "warm":
            t = time.perf_counter()
            fn(sets[rep])
            once = max(time.perf_counter() - t, 1e-6)
            calls[name] = max(1, min(50, int(args.min_time / once) + 1))
        print(MARK + json.dumps({"size": size, "secs": secs, "cpu": cpu}), flush=True)


# ----- driver ------------------------------------------------------------------------------
ROWS = [
    ("one-hop fanout 10, edges/s", "f10_edges"),
    ("one-hop fanout 25, edges/s", "f25_edges"),
    ("weighted fanout 10, edges/s", "f10_weighted_edges"),
    ("weighted fanout 25, edges/s", "f25_weighted_edges"),
    ("kernel alone fanout 10, 1 thread, edges/s", "f10_kernel_edges"),
    ("kernel alone weighted fanout 10, 1 thread, edges/s", "f10_weighted_kernel_edges"),
    ("kernel alone fanout 25, 1 thread, edges/s", "f25_kernel_edges"),
    ("kernel alone weighted fanout 25, 1 thread, edges/s", "f25_weighted_kernel_edges"),
    ("2-hop 25->10 block edges/s (batch 1024, incl. reindex)", "block_edges"),
    ("uniform walk steps/s", "rw_steps"),
    ("uniform walk steps/s, 1 thread (per core)", "rw_1thread_steps"),
    ("weighted walk steps/s", "rw_weighted_steps"),
    ("node2vec (p=1, q=0.5) steps/s", "n2v_steps"),
    ("metapath walk steps/s (DBLP APVPA)", "metapath_steps"),
    ("skip-gram pairs/s (win 5)", "pairs"),
]
EXACT = ["f10_edges", "f25_edges", "rw_steps"]
#: metrics DGL has no counterpart for whose outputs are big (skip-gram pairs of 100k walks:
#: ~300 MB): run last, after the memory of both sides is taken
OURS_ONLY = ["pairs"]


class Worker:
    """One long-lived worker process, driven line by line over its stdin/stdout."""

    def __init__(self, python: str, side: str, paths: list[Path], args: argparse.Namespace,
                 pythonpath: str | None = None) -> None:
        from graphshard._util.openmp import peer_environ  # here: a worker may run another src

        env = dict(peer_environ(), NUMBA_NUM_THREADS=str(args.threads),
                   DGLBACKEND="pytorch", OMP_NUM_THREADS=str(args.threads))
        # both sides' OpenMP threads wait passively (unless the caller sets a policy): the
        # setting this benchmark's figures were measured with, the same for both
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        cmd = [python, __file__, "--worker", side, *map(str, paths), "--threads",
               str(args.threads), "--walk-length", str(args.walk_length), "--min-time",
               str(args.min_time)]
        self.side = side
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.info = self._read()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        raise SystemExit(f"{self.side} worker failed:\n{self.proc.stderr.read()[-3000:]}")

    def ask(self, *words: object):
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:,.2f}M" if x >= 1e5 else f"{x:,.1f}"


#: metrics timed in the same repetitions (uniform and weighted alternate), so that their
#: ratio compares runs of one load window, not two
TOGETHER = [("f10_edges", "f10_weighted_edges"), ("f25_edges", "f25_weighted_edges"),
            ("f10_kernel_edges", "f10_weighted_kernel_edges"),
            ("f25_kernel_edges", "f25_weighted_kernel_edges")]


def _measure(workers: dict[str, Worker], names: list[str], reps: int
             ) -> dict[str, dict[str, list]]:
    """Per metric and worker, ``[(size, secs, cpu)]`` per repetition; within a repetition
    every metric of ``names`` runs on every side, the orders of both rotating."""
    sides = {n: [s for s in workers if workers[s].ask("warm", n) is not None] for n in names}
    runs: dict[str, dict[str, list]] = {n: {s: [] for s in sides[n]} for n in names}
    for rep in range(1, reps + 1):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            ss = sides[name]
            for s in ss[rep % len(ss):] + ss[:rep % len(ss)] if ss else []:
                r = workers[s].ask("run", name, rep)
                runs[name][s].append((r["size"], r["secs"], r["cpu"]))
    return runs


def _report(name: str, workers: dict[str, Worker], results: dict, args) -> None:
    ours, peer = workers["ours"].info, workers["dgl"].info
    sides = list(workers)
    print(f"\n## {name}: graphshard {ours['version']} vs DGL {peer['version']}, threads "
          f"{args.threads}, reps {args.reps} (interleaved), OMP_WAIT_POLICY "
          f"{os.environ.get('OMP_WAIT_POLICY', 'PASSIVE')}, loadavg "
          f"{results['_load'][0]:.2f} -> {results['_load'][1]:.2f}")
    for key in EXACT:
        a, b = results.get(key, {}).get("ours"), results.get(key, {}).get("dgl")
        if a and b and [x[0] for x in a] != [x[0] for x in b]:
            print(f"!! output sizes differ for {key}: ours {a} vs DGL {b}")
    _report_memory(workers, results)
    blk = results.get("block_edges", {})
    if blk:
        print("block edges per batch: " + ", ".join(
            f"{s} {sum(x[0] for x in r) / len(r):.0f}" for s, r in blk.items()))
    head = "| metric | graphshard | DGL 2.1 | ours/DGL |"
    sep = "|---|---:|---:|---:|"
    if "before" in sides:
        head += " before | after/before |"
        sep += "---:|---:|"
    print(head + "\n" + sep)

    def paired(key: str, a: str, b: str) -> str:
        ra, rb = results.get(key, {}).get(a), results.get(key, {}).get(b)
        if not ra or not rb:
            return "-"
        ratios = [x[0] / x[1] / (y[0] / y[1]) for x, y in zip(ra, rb, strict=True)]
        return f"{np.median(ratios):.2f}x"

    for label, key in ROWS:
        if not results.get(key):
            continue
        rate = {s: (sum(x[0] for x in r) / sum(x[1] for x in r) if r else None)
                for s, r in results[key].items()}
        row = (f"| {label} | {_fmt(rate.get('ours'))} | {_fmt(rate.get('dgl'))} | "
               f"{paired(key, 'ours', 'dgl')} |")
        if "before" in sides:
            row += f" {_fmt(rate.get('before'))} | {paired(key, 'ours', 'before')} |"
        print(row)
    one = results.get("rw_1thread_steps", {})
    if one:  # on a loaded machine wall time undercounts a core: steps per CPU-second of it
        print("uniform walk steps per CPU-second, 1 thread: " + ", ".join(
            f"{s} {_fmt(sum(x[0] for x in r) / sum(x[2] for x in r))}" for s, r in one.items()))
    for k in (10, 25):  # weighted/uniform time per edge, median of the paired reps
        for what, key, col, unit in (("whole call", "", 1, "wall"), ("whole call", "", 2, "CPU"),
                                     ("kernel alone", "_kernel", 2, "CPU, 1 thread")):
            a = results.get(f"f{k}_weighted{key}_edges", {})
            b = results.get(f"f{k}{key}_edges", {})
            for s in (x for x in ("ours", "before") if a.get(x) and b.get(x)):
                wr = np.median([(x[col] / x[0]) / (y[col] / y[0])
                                for x, y in zip(a[s], b[s], strict=True)])
                print(f"{s}: weighted/uniform time per edge, fanout {k}, {what} ({unit}): "
                      f"{wr:.2f}")
    if blk:
        print("2-hop blocks/s (batch 1024): " + ", ".join(
            f"{s} {len(r) / sum(x[1] for x in r):.1f}" for s, r in blk.items()))


def _report_memory(workers: dict[str, Worker], results: dict) -> None:
    """Worker memory, MB: after loading (graphs and formats built) and at the end."""
    sides = list(workers)
    both, end = results.get("_memory", {}), results.get("_memory_end", {})
    print("| worker memory, MB | " + " | ".join(sides) + " | ours/DGL |"
          + (" ours/before |" if "before" in sides else ""))
    print("|---|" + "---:|" * (len(sides) + 1 + ("before" in sides)))
    rows = [("RSS after load", {s: w.info["loaded"]["rss"] for s, w in workers.items()})]
    if both:
        rows += [("RSS after the metrics both run", {s: m["rss"] for s, m in both.items()}),
                 ("peak RSS (VmHWM) after them", {s: m["peak"] for s, m in both.items()})]
    if end and end != both:
        rows.append((f"peak RSS at end ({', '.join(OURS_ONLY)}: ours only)",
                     {s: m["peak"] for s, m in end.items()}))
    for label, mb in rows:
        row = f"| {label} | " + " | ".join(f"{mb[s]:,.0f}" for s in sides)
        row += f" | {mb['ours'] / mb['dgl']:.2f}x |"
        if "before" in sides:
            row += f" {mb['ours'] / mb['before']:.2f}x |"
        print(row)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", default="rmat-1m,blogcatalog")
    ap.add_argument("--dgl-python", default="/tmp/venv-dgl/bin/python")
    ap.add_argument("--before-src", default=None,
                    help="an older src/ tree to measure as a third 'before' column")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10000, help="seeds per one-hop call")
    ap.add_argument("--batch", type=int, default=1024, help="seeds per 2-hop batch")
    ap.add_argument("--walkers", type=int, default=100000)
    ap.add_argument("--walk-length", type=int, default=20, help="steps (DGL's length)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-time", type=float, default=0.1,
                    help="seconds of calls per timed repetition (short calls are repeated)")
    ap.add_argument("--only", default=None, help="comma-separated metric keys to run")
    ap.add_argument("--workdir", default="/tmp/bench-sampling")
    ap.add_argument("--worker", choices=["ours", "dgl"], help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        serve(args.worker, list(map(Path, args.paths)), args)
        return
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    dblp = _dblp(work)
    makers = {"rmat-1m": _rmat, "blogcatalog": _blogcatalog}
    keys = [k for _, k in ROWS]
    if args.only:
        keys = [k for k in keys if k in args.only.split(",")]
    for name in args.graphs.split(","):
        graph = makers[name](work)
        seeds = _seed_sets(graph, args)
        paths = [graph, seeds, dblp]
        workers = {"ours": Worker(sys.executable, "ours", paths, args),
                   "dgl": Worker(args.dgl_python, "dgl", paths, args)}
        if args.before_src:
            workers["before"] = Worker(sys.executable, "ours", paths, args,
                                       pythonpath=args.before_src)
        load0 = os.getloadavg()[0]
        results: dict = {}
        try:
            for key in keys:
                if key in results:
                    continue
                if key in OURS_ONLY and "_memory" not in results:
                    results["_memory"] = {s: w.ask("memory") for s, w in workers.items()}
                group = next((g for g in TOGETHER if key in g), (key,))
                results.update(_measure(workers, [k for k in group if k in keys], args.reps))
            results.setdefault("_memory", {s: w.ask("memory") for s, w in workers.items()})
            results["_memory_end"] = {s: w.ask("memory") for s, w in workers.items()}
        finally:
            for w in workers.values():
                w.close()
        results["_load"] = (load0, os.getloadavg()[0])
        _report(name, workers, results, args)


if __name__ == "__main__":
    main()
