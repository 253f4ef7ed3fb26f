"""GPU sampling throughput: graphshard's cuda backend against its CPU backend, a plain
random-gather kernel (the memory-bound limit) and GPU peers, on a 100M-edge R-MAT.

One prepared command for a GPU machine (issue 45); it prints progress and writes its table
to ``--out``.  Budget: under 6 minutes on an H200 (graph build ~1 min, each figure a few
seconds; the first call of every kernel compiles it outside the timing)::

    PYTHONPATH=src python3 benchmarks/bench_gpu.py --out $OUT/bench_gpu.md
    PYTHONPATH=src python benchmarks/bench_gpu.py --dry-run     # no GPU: simulator, tiny graph
    PYTHONPATH=src python benchmarks/bench_gpu.py --ptx         # no GPU: compile every kernel
                                                                # to PTX for sm_90 (needs NVVM,
                                                                # pip nvidia-cuda-nvcc/-nvrtc)

Figures (rates are total output over wall seconds of ``--reps`` timed calls):

* R-MAT (a=0.57, b=c=0.19), ``2**scale`` nodes, ``--edges`` edges, generated on the device
  by a keyed-hash kernel; the CSR is built by graphshard on the host (the same CSR both
  backends sample) and copied to the device once (timed apart).
* blocks: ``sample_blocks`` 2-hop, 25 neighbours of each seed then 10 of each of those
  (PyG's ``[25, 10]``; ``fanouts=[10, 25]`` in graphshard's DGL order), reindexed, at batch
  1024 and 8192, in sampled edges/s, through the public API (host arrays in and out).
* walks: ``random_walk`` length 20 in steps/s; pairs: ``skip_gram_pairs`` window 5 on them.
* gather limit: per item one random row's bounds and one random entry of it, the reads of
  one sampled edge with nothing else (edges/s): sampling can't beat it by much.
* cpu: the same calls with ``backend="cpu"`` on this machine's cores.  Outputs of the first
  batch are compared (the same seed gives the same sample) before any ratio is printed.
* peers: a torch-ops uniform sampler (with replacement, ``torch.unique`` reindex) where
  torch sees the GPU; DGL's GPU ``sample_neighbors`` where dgl imports.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

if "--dry-run" in sys.argv:  # before numba is imported: it reads the variable then
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np
from numba import cuda

from graphshard.sampling.kernels.rng import item_state, randint, uniform

_A, _B, _C = 0.57, 0.19, 0.19  # R-MAT quadrant probabilities (d = 0.05)


def say(*msg: Any) -> None:
    print(f"[{time.strftime('%H:%M:%S')}]", *msg, flush=True)


# the benchmark's own device kernels: R-MAT edges and the random-gather limit (module level:
# the simulator swaps the module's `cuda` for its own when a kernel runs)
@cuda.jit
def _rmat(scale, seed, src, dst):
    e = cuda.grid(1)
    if e >= src.shape[0]:
        return
    st = np.uint64(item_state(seed, 7, e))
    u = 0
    v = 0
    for lvl in range(scale):
        r = uniform(st, lvl)
        u = 2 * u + (1 if r >= _A + _B else 0)
        v = 2 * v + (1 if (_A <= r < _A + _B) or r >= _A + _B + _C else 0)
    src[e] = u
    dst[e] = v


@cuda.jit
def _gather(indptr, indices, seed, out):
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    st = np.uint64(item_state(seed, 9, i))
    r = randint(st, 0, indptr.shape[0] - 1)
    s0 = indptr[r]
    d = indptr[r + 1] - s0
    out[i] = indices[s0 + randint(st, 1, d)] if d > 0 else -1


def build_graph(args: argparse.Namespace) -> Any:
    import graphshard as gs

    n = 1 << args.scale
    say(f"R-MAT on the device: {n:,} nodes, {args.edges:,} edges")
    t = time.perf_counter()
    src = cuda.device_array(args.edges, dtype=np.int64)
    dst = cuda.device_array(args.edges, dtype=np.int64)
    threads = 256
    _rmat[(args.edges + threads - 1) // threads, threads](args.scale, 1, src, dst)
    cuda.synchronize()
    t_gen = time.perf_counter() - t
    s, d = src.copy_to_host(), dst.copy_to_host()
    say(f"  generated in {t_gen:.2f} s; building the CSR on the host")
    t = time.perf_counter()
    order = np.argsort(d, kind="stable")  # edges in destination order: the CSR build is a pass
    g = gs.graph((s[order], d[order]), num_nodes=n)
    del s, d, order
    g.in_csr()
    g.out_csr()
    say(f"  CSR built in {time.perf_counter() - t:.1f} s")
    return g, t_gen


def timed(fn: Any, reps: int) -> tuple[float, Any]:
    """Seconds per call over ``reps`` calls (after one untimed warm-up), the last result."""
    out = fn(0)
    t = time.perf_counter()
    for i in range(reps):
        out = fn(i + 1)
    return (time.perf_counter() - t) / reps, out


def same_blocks(a: Any, b: Any) -> bool:
    return all(np.array_equal(x.src_nodes["_N"], y.src_nodes["_N"])
               and np.array_equal(x.edge_index(), y.edge_index())
               for x, y in zip(a.blocks, b.blocks, strict=True))


def bench(args: argparse.Namespace) -> list[tuple[str, str, float, str]]:
    import numba

    import graphshard as gs

    rows: list[tuple[str, str, float, str]] = []
    bk = gs.sampling.get_backend("cuda")
    dev = "simulator" if bk.simulator else cuda.get_current_device().name
    dev = dev.decode() if isinstance(dev, bytes) else dev
    say(f"device {dev}; numba {numba.__version__}, numba threads {numba.get_num_threads()}, "
        f"python {platform.python_version()}")
    g, t_gen = build_graph(args)
    rows.append(("R-MAT generation", "gpu", args.edges / t_gen, "edges/s"))
    rng = np.random.default_rng(0)
    n = g.num_nodes()

    t = time.perf_counter()  # the first cuda call copies the CSR to the device
    gs.sampling.sample_neighbors(g, np.arange(4), 2, seed=0, backend="cuda")
    say(f"CSR to the device: {time.perf_counter() - t:.2f} s (once per store)")

    for batch in args.batches:
        seeds = [rng.choice(n, batch, replace=False) for _ in range(args.reps + 1)]
        res = {}
        for name in ("cuda", "cpu"):
            say(f"blocks [25, 10], batch {batch}, {name}")
            sec, out = timed(lambda i, name=name, seeds=seeds: gs.sampling.sample_blocks(
                g, seeds[i], [10, 25], seed=i, backend=name), args.reps)
            edges = sum(b.num_edges() for b in out.blocks)
            res[name] = out
            rows.append((f"blocks [25,10] b={batch}", "gpu" if name == "cuda" else "cpu",
                         edges / sec, "edges/s"))
        ok = same_blocks(res["cuda"], res["cpu"])
        say(f"  same blocks on both backends: {ok}")
        rows.append((f"blocks b={batch} identical", "-", float(ok), "1 = yes"))

    starts = rng.choice(n, args.walks, replace=True)
    walks = {}
    for name in ("cuda", "cpu"):
        say(f"walks: {args.walks:,} x length 20, {name}")
        sec, out = timed(lambda i, name=name: gs.sampling.random_walk(
            g, starts, 20, seed=i, backend=name), args.reps)
        walks[name] = out
        rows.append(("walks len 20", "gpu" if name == "cuda" else "cpu",
                     out.num_steps() / sec, "steps/s"))
    ok = np.array_equal(walks["cuda"].traces, walks["cpu"].traces)
    rows.append(("walks identical", "-", float(ok), "1 = yes"))
    pairs = {}
    for name in ("cuda", "cpu"):
        say(f"skip-gram pairs, window 5, {name}")
        sec, pairs[name] = timed(lambda i, name=name: gs.sampling.skip_gram_pairs(
            walks["cpu"], 5, random_window=True, seed=i, backend=name), args.reps)
        rows.append(("pairs win 5", "gpu" if name == "cuda" else "cpu",
                     len(pairs[name]) / sec, "pairs/s"))
    ok = all(np.array_equal(getattr(pairs["cuda"], f), getattr(pairs["cpu"], f))
             for f in ("src", "dst"))
    rows.append(("pairs identical", "-", float(ok), "1 = yes"))

    say("random-gather limit")
    csr = g.in_csr()
    d_indptr, d_indices = bk.device_cache.get(csr.indptr), bk.device_cache.get(csr.indices)
    out = cuda.device_array(args.gather, dtype=np.int64)
    threads = 256

    def run_gather(i: int) -> None:
        _gather[(args.gather + threads - 1) // threads, threads](d_indptr, d_indices, i, out)
        cuda.synchronize()

    sec, _ = timed(run_gather, args.reps)
    rows.append(("random-gather limit", "gpu", args.gather / sec, "edges/s"))
    rows += peers(args, g, rng)
    return rows


def peers(args: argparse.Namespace, g: Any, rng: Any) -> list[tuple[str, str, float, str]]:
    """GPU peers that import here: torch ops, DGL."""
    rows: list[tuple[str, str, float, str]] = []
    try:
        import torch
    except ImportError:
        say("peer torch: not installed")
        return rows
    if not torch.cuda.is_available():
        say("peer torch: no CUDA device visible to torch")
        return rows
    csr = g.in_csr()
    indptr = torch.as_tensor(csr.indptr, device="cuda")
    indices = torch.as_tensor(csr.indices, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(0)

    def hop(nodes: Any, k: int) -> Any:
        """``k`` uniform in-neighbours (with replacement) of every node with one."""
        start = indptr[nodes]
        deg = indptr[nodes + 1] - start
        pick = (torch.rand(len(nodes), k, device="cuda", generator=gen) * deg[:, None]).long()
        ok = (deg > 0)[:, None].expand(-1, k)
        return indices[(start[:, None] + pick)[ok]]

    def two_hop(seeds: Any) -> int:
        nodes, edges = seeds, 0
        for k in (25, 10):
            nbr = hop(nodes, k)
            # reindex: unique nodes and every neighbour's local ID
            nodes, _ = torch.unique(torch.cat([nodes, nbr]), return_inverse=True)
            edges += len(nbr)
        torch.cuda.synchronize()
        return edges

    for batch in args.batches:
        seeds = torch.as_tensor(rng.choice(g.num_nodes(), batch, replace=False), device="cuda")
        say(f"peer torch ops, blocks batch {batch}")
        sec, edges = timed(lambda i, s=seeds: two_hop(s), args.reps)
        rows.append((f"blocks [25,10] b={batch}", "torch ops (replace)", edges / sec,
                     "edges/s"))
    try:
        import dgl
    except Exception as exc:  # absent, or a build without CUDA
        say(f"peer DGL: {type(exc).__name__}: {str(exc)[:80]}")
        return rows
    dg = dgl.graph((torch.as_tensor(csr.indices), torch.as_tensor(
        np.repeat(np.arange(g.num_nodes()), np.diff(csr.indptr)))), num_nodes=g.num_nodes())
    dg = dg.to("cuda")
    for batch in args.batches:
        seeds = torch.as_tensor(rng.choice(g.num_nodes(), batch, replace=False), device="cuda")

        def dgl_two_hop(i: int, seeds: Any = seeds) -> int:
            nodes, edges = seeds, 0
            for k in (25, 10):
                fr = dgl.sampling.sample_neighbors(dg, nodes, k)
                block = dgl.to_block(fr, nodes)
                nodes = block.srcdata[dgl.NID]
                edges += block.num_edges()
            torch.cuda.synchronize()
            return edges

        say(f"peer DGL, blocks batch {batch}")
        sec, edges = timed(dgl_two_hop, args.reps)
        rows.append((f"blocks [25,10] b={batch}", f"dgl {dgl.__version__}", edges / sec,
                     "edges/s"))
    return rows


def table(rows: list[tuple[str, str, float, str]]) -> str:
    lines = ["| figure | engine | rate | unit |", "| --- | --- | ---: | --- |"]
    lines += [f"| {f} | {e} | {r:,.0f} | {u} |" if u != "1 = yes" else
              f"| {f} | {e} | {'yes' if r else 'NO'} | identical |" for f, e, r, u in rows]
    gpu = {f: r for f, e, r, u in rows if e == "gpu" and u in ("edges/s", "steps/s")}
    limit = gpu.pop("random-gather limit", None)
    gpu.pop("R-MAT generation", None)
    lines.append("")
    for f, r in gpu.items():
        if limit:
            lines.append(f"- {f}: gpu at {100 * r / limit:.1f}% of the random-gather limit")
        cpu = [x for g, e, x, _ in rows if g == f and e == "cpu"]
        if cpu:
            lines.append(f"- {f}: gpu / cpu = {r / cpu[0]:.1f}x")
        peer = [x for g, e, x, _ in rows if g == f and e not in ("gpu", "cpu", "-")]
        if peer:
            lines.append(f"- {f}: gpu / best gpu peer = {r / max(peer):.2f}x")
    return "\n".join(lines) + "\n"


def check_ptx() -> None:
    """Compile every kernel of the cuda backend to PTX for sm_90, no GPU needed (NVVM and
    NVRTC from the nvidia-cuda-nvcc / nvidia-cuda-nvrtc wheels)."""
    from types import SimpleNamespace

    import numba.cuda.dispatcher as disp

    # numba-cuda takes the device functions' compute capability from the current device;
    # there is none here, so name Hopper's
    disp.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))
    from graphshard.sampling.cuda import block, gather, neighbors, pairs, walks

    a, a2, f4, f8, i8, b1 = ("int64[::1]", "int64[:, ::1]", "float32[::1]", "float64[::1]",
                             "int64", "boolean")
    sigs = {
        neighbors._counts: [a, a, a, i8, b1, a],
        neighbors._fill_uniform: [a, a, a, a, a, a, i8, b1, i8, i8, a, a, a, a],
        neighbors._fill_weighted: [a, a, a, a2, a, f4, a, a, a, i8, b1, i8, i8, a, a],
        walks._walk: [a, a, a2, a, b1, a, a, a, "float64", i8, i8, i8, a2],
        walks._walk_step: [a, a, a2, a, b1, a, a, "float64", i8, i8, i8, a],
        walks._node2vec_walk: [a, a, a, a, *["float64"] * 3, i8, i8, i8, a2],
        walks._node2vec_step: [a, a, a, a, a, a, a, a, *["float64"] * 3, i8, i8, i8, a],
        pairs._skipgram: [a2, a, "boolean[:, ::1]", a, i8, b1, i8, a, a, a, a2, a, b1],
        pairs._sample_cdf: [f8, i8, i8, i8, a],
        pairs._sample_alias: [f8, a, i8, i8, a],
        block._insert: [a, a, a, a, a, i8], block._flag: [a, a, a],
        block._number: [a] * 7, block._locals: [i8, a, a, a], block._scan_tiles: [a, a, a],
        block._add_base: [a, a], gather._degrees: [a, a, a],
        gather._gather: ["float32[:, ::1]", a, "float32[:, ::1]"],
        _rmat: [i8, i8, a, a], _gather: [a, a, i8, a],  # this benchmark's own
    }
    del f4
    bad = 0
    for k, sig in sigs.items():
        name = f"{k.py_func.__module__.rsplit('.', 1)[-1]}.{k.py_func.__name__}"
        try:
            ptx, _ = cuda.compile_ptx(k.py_func, f"({', '.join(sig)})", cc=(9, 0))
            fma = sum(" fma." in line for line in ptx.splitlines())
            say(f"ok   {name}: {len(ptx):,} chars of PTX, {fma} fma")
        except Exception as exc:
            bad += 1
            say(f"FAIL {name}: {' '.join(str(exc).split())[:400]}")
    raise SystemExit(1 if bad else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: numba-cuda's simulator on a tiny graph, end to end")
    ap.add_argument("--ptx", action="store_true", help="compile the kernels for sm_90 only")
    ap.add_argument("--scale", type=int, default=23, help="2**scale nodes")
    ap.add_argument("--edges", type=int, default=100_000_000)
    ap.add_argument("--batches", type=int, nargs="+", default=[1024, 8192])
    ap.add_argument("--walks", type=int, default=200_000, help="walks (length 20)")
    ap.add_argument("--gather", type=int, default=50_000_000, help="gathers of the limit")
    ap.add_argument("--reps", type=int, default=5, help="timed calls per figure")
    ap.add_argument("--out", type=Path, default=Path("bench_gpu.md"))
    args = ap.parse_args()
    if args.ptx:
        check_ptx()
    if args.dry_run:
        args.scale, args.edges, args.batches = 8, 3000, [8, 16]
        args.walks, args.gather, args.reps = 40, 2000, 1
    t0 = time.perf_counter()
    rows = bench(args)
    text = table(rows)
    print(text, flush=True)
    args.out.write_text(text + f"\n(total {time.perf_counter() - t0:.0f} s"
                        + (", DRY RUN: simulator, tiny graph" if args.dry_run else "") + ")\n")
    say(f"table written to {args.out}")


if __name__ == "__main__":
    main()
