"""PyG's NodeLoader over graphshard's PyG backend vs graphshard's own BlockLoader.

    .venv/bin/python benchmarks/bench_pyg.py [--nodes 1000000 --edges 10000000]

An R-MAT graph with 100-dim float32 features is cut into 4 partitions and served by 4 Ray
graph servers on loopback (the trainer co-located with server 0, as in bench_dist.py).  Per
batch of 1024 seeds: 2-hop sampling and the features of every sampled node.

  ours       gs.distributed.BlockLoader(prefetch=8), fanouts [25, 10] (DGL order: 10 per seed, then
             25 per node of the first hop; DGL blocks resample the seeds at hop 2 too)
  pyg        torch_geometric.loader.NodeLoader over graphshard.pyg (FeatureStore,
             GraphStore, NeighborSampler), num_neighbors [10, 25] (PyG order and
             semantics), one batch at a time as PyG runs it with num_workers=0
  pyg+thr    the same loader's collate_fn on --workers threads (PrefetchLoader's path for
             other loaders, and its only one before the pipelined path below)
  pyg+pf     the same loader through graphshard.pyg.PrefetchLoader(workers=--workers): on
             this DistGraph its batches run as BlockLoader's do (server calls of several
             batches merged, features fetched with the hops), PyG's filter_fn on a thread

The per-batch figure compared is milliseconds per batch (wall); CPU milliseconds per batch
(this process and its Ray processes, all threads) are printed too, as they vary less when
other jobs share the cores; sampled edges and feature rows per batch also, since the two
hop semantics sample slightly different amounts.
Before any timing, a PyG batch on the DistGraph is checked equal to the same batch on the
local graph assembled from the parts, and BlockLoader's against sample_blocks.  Engines run
interleaved, ``--reps`` passes, medians printed.  Goal (issue 26): pyg+pf <= 1.25x ours.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import time
from typing import Any

import numpy as np
import psutil


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--method", default="random", help="partition method")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--prefetch", type=int, default=8, help="BlockLoader batches in flight")
    ap.add_argument("--workers", type=int, default=8, help="PrefetchLoader threads")
    ap.add_argument("--reps", type=int, default=3, help="interleaved passes (medians shown)")
    ap.add_argument("--out", default=None, help="partition folder, reused if it exists")
    args = ap.parse_args()

    import ray
    import torch
    import torch_geometric
    from torch_geometric.loader import NodeLoader

    import graphshard as gs
    from bench_dist import _prepare  # the same graph and partitions as bench_dist.py
    from graphshard.pyg import NeighborSampler, PrefetchLoader, remote_backend
    from graphshard.runtime.ray import init_ray  # a local Ray on loopback only

    t0 = time.perf_counter()
    cfg = _prepare(args)
    whole = gs.distributed.assemble_graph(cfg)
    print(f"graph {whole.num_nodes():,} nodes {whole.num_edges():,} edges, {args.parts} parts; "
          f"prepared in {time.perf_counter() - t0:.0f} s")
    init_ray(ray, include_dashboard=False, log_to_driver=False,
             _system_config={"max_direct_call_object_size": 32 * 2**20})
    dg = gs.distributed.DistGraph(cfg, colocate=[0], timeout=120.0)
    rng = np.random.default_rng(1)
    n, bs = args.batches, args.batch_size
    seeds = np.concatenate([rng.choice(whole.num_nodes(), bs, replace=False)
                            for _ in range(n)])
    batches = [seeds[i * bs:(i + 1) * bs] for i in range(n)]

    def pyg_loader(store):
        return NodeLoader(remote_backend(store, node_attrs={"x": "feat"}),
                          node_sampler=NeighborSampler(store, [10, 25], seed=3),
                          input_nodes=torch.from_numpy(seeds), batch_size=bs)

    # equality before timing (and warm-up: numba compile, page cache, Ray workers)
    for a, b in zip(pyg_loader(whole), PrefetchLoader(pyg_loader(dg), workers=args.workers),
                    strict=True):
        if not (torch.equal(a.n_id, b.n_id) and torch.equal(a.edge_index, b.edge_index)
                and torch.equal(a.x, b.x)):
            raise SystemExit("PyG batches differ between the local graph and the DistGraph")
        break
    for k, out in enumerate(gs.distributed.BlockLoader(dg, batches[:2], [25, 10], features="feat",
                                                prefetch=args.prefetch, seed=0)):
        ref = gs.sampling.sample_blocks(whole, batches[k], [25, 10], seed=k)
        if not np.array_equal(ref.input_nodes["_N"], out.blocks.input_nodes["_N"]):
            raise SystemExit("BlockLoader differs from sample_blocks on the local graph")

    sizes: dict[str, tuple[float, float]] = {}
    me = psutil.Process()

    def cpu_seconds() -> float:
        """CPU time of this process and its children (the local Ray's) so far."""
        total = 0.0
        for p in [me, *me.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system
        return total

    def run(name: str) -> None:
        edges = rows = 0
        if name == "ours":
            for out in gs.distributed.BlockLoader(dg, batches, [25, 10], features="feat",
                                           prefetch=args.prefetch, seed=0):
                edges += sum(b.num_edges() for b in out.blocks.blocks)
                rows += len(out.features["_N"])
        else:
            loader = pyg_loader(dg)
            it: Any = loader
            if name == "pyg+thr":  # the thread path, which PrefetchLoader takes elsewhere
                it = PrefetchLoader(loader, workers=args.workers)._threads()
            elif name == "pyg+pf":
                it = PrefetchLoader(loader, workers=args.workers)
            for batch in it:
                edges += batch.edge_index.shape[1]
                rows += batch.x.shape[0]
        sizes[name] = (edges / n, rows / n)

    engines = ["ours", "pyg", "pyg+thr", "pyg+pf"]
    times: dict[str, list[float]] = {k: [] for k in engines}
    cpus: dict[str, list[float]] = {k: [] for k in engines}
    for _ in range(args.reps):
        for name in engines:
            c, t = cpu_seconds(), time.perf_counter()
            run(name)
            times[name].append(time.perf_counter() - t)
            cpus[name].append(cpu_seconds() - c)
    med = {k: float(np.median(v)) for k, v in times.items()}
    cpu = {k: float(np.median(v)) for k, v in cpus.items()}
    print(f"python {platform.python_version()}, torch {torch.__version__}, torch_geometric "
          f"{torch_geometric.__version__}, ray {ray.__version__}, torch threads "
          f"{torch.get_num_threads()}, {args.reps} interleaved passes of {n} batches of {bs}, "
          f"loadavg {tuple(round(x, 1) for x in os.getloadavg())}")
    label = {"ours": f"graphshard BlockLoader ({args.prefetch} in flight)",
             "pyg": "PyG NodeLoader over graphshard.pyg",
             "pyg+thr": f"  + collate_fn on {args.workers} threads",
             "pyg+pf": f"  + PrefetchLoader ({args.workers} in flight)"}
    print(f"{'':44} {'batches/s':>9} {'ms/batch':>9} {'vs ours':>8} {'cpu ms/batch':>12} "
          f"{'vs ours':>8} {'edges/batch':>12} {'rows/batch':>11}")
    for k in engines:
        print(f"{label[k]:44} {n / med[k]:>9.2f} {med[k] / n * 1e3:>9.1f} "
              f"{med[k] / med['ours']:>7.2f}x {cpu[k] / n * 1e3:>12.1f} "
              f"{cpu[k] / cpu['ours']:>7.2f}x {sizes[k][0]:>12,.0f} {sizes[k][1]:>11,.0f}")
    ratio = med["pyg+pf"] / med["ours"]
    print(f"goal: PyG path <= 1.25x ours per batch: {ratio:.2f}x "
          f"({'met' if ratio <= 1.25 else 'NOT met'}); per-pass ms/batch ours "
          f"{[round(t / n * 1e3, 1) for t in times['ours']]}, pyg+pf "
          f"{[round(t / n * 1e3, 1) for t in times['pyg+pf']]}")
    dg.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
