"""Distributed vs local mini-batch sampling + feature fetch on one graph.

    /tmp/venv-gs/bin/python benchmarks/bench_dist.py [--nodes 1000000 --edges 10000000]

An R-MAT graph with 100-dim float32 features is cut into 4 partitions (gs.partition_graph)
and served by 4 Ray graph servers on loopback.  Per batch of 1024 seeds: 2-hop sampling
(fanouts [25, 10], DGL order: 10 per seed, 25 per first-hop node) and the input nodes'
features.  The local engine runs the same batches on the whole graph in the same shuffled
IDs (so results are compared for equality before any ratio is printed).  The trainer is
co-located with server 0 (reads part 0 from its memory-mapped files) and reaches the other
three through Ray.  Numba compilation and Ray start-up are outside the timings.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

import numpy as np

import graphshard as gs


def _blocks_equal(a: gs.sampling.SampledBlocks, b: gs.sampling.SampledBlocks) -> bool:
    return all(np.array_equal(x.src[et], y.src[et]) and np.array_equal(x.eids[et], y.eids[et])
               and all(np.array_equal(x.src_nodes[t], y.src_nodes[t]) for t in y.src_nodes)
               for x, y in zip(a.blocks, b.blocks, strict=True) for et in y.src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--method", default="random")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--inflight", type=int, default=2,
                    help="batches in flight for the pipelined rows (threads, both engines)")
    args = ap.parse_args()
    fanouts = [25, 10]
    out = tempfile.mkdtemp(prefix="bench_dist_")
    t0 = time.perf_counter()
    g = gs.datasets.rmat(args.nodes, args.edges, seed=0, num_features=100)
    gs.partition_graph(g, "bench", args.parts, out, part_method=args.method)
    del g
    cfg = f"{out}/bench.json"
    whole = gs.dist.assemble_graph(cfg)
    feat = np.ascontiguousarray(whole.ndata["feat"])
    print(f"graph {whole.num_nodes():,} nodes {whole.num_edges():,} edges, {args.parts} parts "
          f"({args.method}); prepared in {time.perf_counter() - t0:.0f} s")

    import ray

    ray.init(include_dashboard=False, log_to_driver=False)
    dg = gs.dist.DistGraph(cfg, colocate=[0], timeout=120.0)
    latencies: list[float] = []
    call = dg.router.call

    def timed(calls, **kw):  # per-request latency: one batch of calls to the servers
        t = time.perf_counter()
        try:
            return call(calls, **kw)
        finally:
            latencies.append(time.perf_counter() - t)

    dg.router.call = timed  # type: ignore[method-assign]
    rng = np.random.default_rng(1)
    batches = [rng.choice(whole.num_nodes(), args.batch_size, replace=False)
               for _ in range(args.batches + 2)]

    def local_step(b: int) -> tuple[gs.sampling.SampledBlocks, np.ndarray]:
        blocks = gs.sampling.sample_blocks(whole, batches[b], fanouts, seed=b)
        return blocks, feat[blocks.input_nodes["_N"]]

    def dist_step(b: int) -> tuple[gs.sampling.SampledBlocks, np.ndarray, float]:
        blocks = gs.sampling.sample_blocks(dg, batches[b], fanouts, seed=b)
        t = time.perf_counter()
        x = dg.ndata["feat"][blocks.input_nodes["_N"]]
        return blocks, x, time.perf_counter() - t

    for b in range(2):  # warm-up: numba compile, page cache, Ray workers
        lb, lx = local_step(b)
        db, dx, _ = dist_step(b)
        if not (_blocks_equal(lb, db) and np.array_equal(lx, dx)):
            raise SystemExit("distributed and local results differ: no ratio quoted")
    latencies.clear()
    t = time.perf_counter()
    for b in range(2, args.batches + 2):
        local_step(b)
    local_s = time.perf_counter() - t
    t = time.perf_counter()
    fetch_s, fetched = 0.0, 0
    for b in range(2, args.batches + 2):
        _, x, f = dist_step(b)
        fetch_s += f
        fetched += x.nbytes
    dist_s = time.perf_counter() - t
    from concurrent.futures import ThreadPoolExecutor

    todo = range(2, args.batches + 2)
    with ThreadPoolExecutor(args.inflight) as pool:
        t = time.perf_counter()
        list(pool.map(local_step, todo))
        local_p = time.perf_counter() - t
        t = time.perf_counter()
        list(pool.map(dist_step, todo))
        dist_p = time.perf_counter() - t
    n = args.batches
    lat = np.array(latencies) * 1e3
    print(f"python {platform.python_version()}, ray {ray.__version__}, numba threads "
          f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}, loadavg "
          f"{os.getloadavg()}")
    rows = [("batches/s (2-hop [25,10] + feats)", f"{n / local_s:.2f}", f"{n / dist_s:.2f}",
             f"{local_s / dist_s:.2f}x"),
            ("ms per batch", f"{local_s / n * 1e3:.1f}", f"{dist_s / n * 1e3:.1f}", ""),
            (f"batches/s, {args.inflight} batches in flight", f"{n / local_p:.2f}",
             f"{n / dist_p:.2f}", f"{local_p / dist_p:.2f}x"),
            ("feature fetch MB/s", "", f"{fetched / fetch_s / 1e6:.0f}", ""),
            ("MB of features per batch", "", f"{fetched / n / 1e6:.1f}", ""),
            ("request latency p50 / p99 ms", "",
             f"{np.percentile(lat, 50):.1f} / {np.percentile(lat, 99):.1f}", "")]
    print(f"{'':36} {'local':>10} {'dist':>14} {'ratio':>7}")
    for r in rows:
        print(f"{r[0]:36} {r[1]:>10} {r[2]:>14} {r[3]:>7}")
    print(f"target: dist >= 0.5x local ({'met' if local_s / dist_s >= 0.5 else 'NOT met'})")
    dg.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
