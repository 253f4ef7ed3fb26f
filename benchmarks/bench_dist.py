"""Distributed vs local mini-batch sampling + feature fetch on one graph.

    /tmp/venv-gs/bin/python benchmarks/bench_dist.py [--nodes 1000000 --edges 10000000]

An R-MAT graph with 100-dim float32 features is cut into 4 partitions (gs.partition_graph)
and served by 4 Ray graph servers on loopback.  Per batch of 1024 seeds: 2-hop sampling
(fanouts [25, 10], DGL order: 10 per seed, 25 per first-hop node) and the input nodes'
features.  The local engine runs the same batches on the whole graph in the same shuffled
IDs, and every distributed path is compared with it for equality before any figure is
printed.  The trainer is co-located with server 0 (reads part 0 from its memory-mapped
files) and reaches the other three through Ray.  Numba compilation and Ray start-up are
outside the timings; the engines run interleaved, ``--reps`` times, and the medians are
printed (the machine may be shared: compare ratios, not absolute figures).

Distributed paths:
  generic  gs.sampling.sample_blocks(dg) then dg.ndata["feat"][input_nodes]: one round per
           hop plus one for the features (3 rounds of 3 remote calls)
  fused    gs.distributed.sample_blocks(dg, features="feat"): features ride in the sampling calls
           (hop, then hop + features of the nodes added, then the last features)
  loader   gs.distributed.BlockLoader(prefetch=K): K batches in flight, the calls of a group of
           K/2 batches merged into one call per server (two groups take turns)
  cached   the loader on a DistGraph that keeps the features of the top --cache-fraction
           remote nodes by out-degree (dg.cache_node_features), built before the timings
  inproc   the loader on a DistGraph that reads every part in this process
           (colocate=all): the same distributed code (per-part indexes, merging, reindex,
           scatter of the rows) without Ray, so "loader" minus "inproc" is the transport

Transport alone: an actor holding a buffer returns, per batch and remote server, as many
bytes as that server's share of the batch's input-node features (no gather, no sampling);
its CPU (this process, the actor, raylet and GCS) is what Ray costs to move the feature
rows alone, beside the local engine's whole batch.
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
               and np.array_equal(x.dst[et], y.dst[et])
               and all(np.array_equal(x.src_nodes[t], y.src_nodes[t]) for t in y.src_nodes)
               for x, y in zip(a.blocks, b.blocks, strict=True) for et in y.src)


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of this process and ``pids`` (0 without psutil)."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil comes with ray
        return 0.0
    total = 0.0
    for pid in [os.getpid(), *pids]:
        t = psutil.Process(pid).cpu_times()
        total += t.user + t.system
    return total


def _transport_cpu_ms(ray, batch_bytes: list[list[int]], pids: list[int]) -> float:
    """CPU ms per batch (this process, a probe actor, ``pids``) for returning
    ``batch_bytes[b][s]`` bytes from the actor, one call per (batch, server) pair, all calls
    of a batch in flight together."""

    @ray.remote(num_cpus=0)
    class Probe:
        def __init__(self) -> None:
            self.buf = np.ones(max(max(b) for b in batch_bytes) // 4 + 1, np.float32)

        def pid(self) -> int:
            return os.getpid()

        def rows(self, nbytes: int) -> np.ndarray:
            return self.buf[: nbytes // 4]

    probe = Probe.remote()
    probe_pids = [ray.get(probe.pid.remote()), *pids]
    for sizes in batch_bytes[:2]:  # warm-up
        ray.get([probe.rows.remote(n) for n in sizes])
    c = _cpu_seconds(probe_pids)
    for sizes in batch_bytes:
        ray.get([probe.rows.remote(n) for n in sizes])
    ms = (_cpu_seconds(probe_pids) - c) / len(batch_bytes) * 1e3
    ray.kill(probe)
    return ms


def _prepare(args: argparse.Namespace) -> str:
    out = args.out or tempfile.mkdtemp(prefix="bench_dist_")
    cfg = f"{out}/bench.json"
    if not os.path.exists(cfg):
        g = gs.datasets.rmat(args.nodes, args.edges, seed=0, num_features=100)
        gs.partition_graph(g, "bench", args.parts, out, part_method=args.method)
    return cfg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--method", default="random")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--prefetch", type=int, default=8, help="batches in flight (loader)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved passes (medians shown)")
    ap.add_argument("--inline-mb", type=float, default=32.0,
                    help="Ray's max_direct_call_object_size in MB (results up to this size "
                         "travel in the reply, not through the object store); 0: Ray default")
    ap.add_argument("--cache-fraction", type=float, default=0.1,
                    help="feature cache of the 'cached' row (0: no such row)")
    ap.add_argument("--out", default=None, help="partition folder, reused if it exists")
    args = ap.parse_args()
    fanouts = [25, 10]
    t0 = time.perf_counter()
    cfg = _prepare(args)
    whole = gs.distributed.assemble_graph(cfg)
    feat = np.ascontiguousarray(whole.ndata["feat"])
    print(f"graph {whole.num_nodes():,} nodes {whole.num_edges():,} edges, {args.parts} parts "
          f"({args.method}); prepared in {time.perf_counter() - t0:.0f} s")

    import ray

    system = ({"max_direct_call_object_size": int(args.inline_mb * 2**20)}
              if args.inline_mb > 0 else {})
    from graphshard.runtime.ray import init_ray  # a local Ray on loopback only

    init_ray(ray, include_dashboard=False, log_to_driver=False, _system_config=system)
    dg = gs.distributed.DistGraph(cfg, colocate=[0], timeout=120.0)
    pids = [int(i["pid"]) for i in ray.get([a.info.remote() for a in dg.router.actors])]
    pids = [pid for p, pid in enumerate(pids) if p not in dg.router.local]
    try:  # Ray's own processes work for the distributed rows too (object store, GCS)
        node = ray._private.worker._global_node
        pids += [p.process.pid for k in ("raylet", "gcs_server")
                 for p in node.all_processes.get(k, [])]
    except AttributeError:  # pragma: no cover - a Ray without this private attribute
        pass
    latencies: list[float] = []
    gather = dg.router.gather

    def timed(pending):  # request latency: submit -> all answers of one round
        try:
            return gather(pending)
        finally:
            latencies.append(time.monotonic() - pending.started)

    dg.router.gather = timed  # type: ignore[method-assign]
    rng = np.random.default_rng(1)
    n = args.batches
    batches = [rng.choice(whole.num_nodes(), args.batch_size, replace=False)
               for _ in range(n + 2)]
    todo = range(2, n + 2)

    def local_step(b: int) -> tuple[gs.sampling.SampledBlocks, np.ndarray]:
        blocks = gs.sampling.sample_blocks(whole, batches[b], fanouts, seed=b)
        return blocks, feat[blocks.input_nodes["_N"]]

    def generic_step(b: int) -> tuple[gs.sampling.SampledBlocks, np.ndarray]:
        blocks = gs.sampling.sample_blocks(dg, batches[b], fanouts, seed=b)
        return blocks, dg.ndata["feat"][blocks.input_nodes["_N"]]

    def fused_step(b: int) -> tuple[gs.sampling.SampledBlocks, np.ndarray]:
        out = gs.distributed.sample_blocks(dg, batches[b], fanouts, features="feat", seed=b)
        return out.blocks, out.features["_N"]

    def loader(lo: int, hi: int, g: gs.distributed.DistGraph = dg) -> gs.distributed.BlockLoader:
        return gs.distributed.BlockLoader(g, batches[lo:hi], fanouts, features="feat",
                                   prefetch=args.prefetch, seed=lo)

    engines = ["local", "generic", "fused", "loader", "inproc"]
    dgi = gs.distributed.DistGraph(cfg, colocate=list(range(args.parts)), timeout=120.0)
    if args.cache_fraction > 0:
        engines.append("cached")
        dgc = gs.distributed.DistGraph(cfg, colocate=[0], timeout=120.0)
        t = time.perf_counter()
        cache = dgc.cache_node_features("feat", fraction=args.cache_fraction)
        print(f"{cache} built in {time.perf_counter() - t:.1f} s")

    for b in range(2):  # warm-up (numba compile, page cache, Ray workers) + equality
        lb, lx = local_step(b)
        for db, dx in (generic_step(b), fused_step(b)):
            if not (_blocks_equal(lb, db) and np.array_equal(lx, dx)):
                raise SystemExit("distributed and local results differ: no ratio quoted")
    for g in [dg, dgi, dgc] if "cached" in engines else [dg, dgi]:
        for b, out in enumerate(loader(0, 2, g)):
            lb, lx = local_step(b)
            if not (_blocks_equal(lb, out.blocks) and np.array_equal(lx, out.features["_N"])):
                raise SystemExit("loader and local results differ: no ratio quoted")

    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    fused_lat: list[float] = []
    fused_req: list[float] = []
    fetch_s, fetched = 0.0, 0
    for _ in range(args.reps):
        for name in [*engines, "features"]:
            c, t = _cpu_seconds([] if name == "local" else pids), time.perf_counter()
            latencies.clear()
            if name == "local":
                for b in todo:
                    local_step(b)
            elif name == "generic":
                for b in todo:
                    generic_step(b)
            elif name == "fused":
                for b in todo:
                    s = time.perf_counter()
                    fused_step(b)
                    fused_lat.append(time.perf_counter() - s)
                fused_req += latencies
            elif name in ("loader", "cached", "inproc"):
                g = {"loader": dg, "inproc": dgi}.get(name) or dgc
                for _ in loader(2, n + 2, g):
                    pass
            else:  # feature fetch alone, for the bandwidth figure
                for b in todo:
                    ids = local_step(b)[0].input_nodes["_N"]
                    s = time.perf_counter()
                    fetched += dg.ndata["feat"][ids].nbytes
                    fetch_s += time.perf_counter() - s
                continue
            times.setdefault(name, []).append(time.perf_counter() - t)
            cpu.setdefault(name, []).append(_cpu_seconds([] if name == "local" else pids) - c)
    owner = dg.owners
    remote = [p for p in range(args.parts) if p not in dg.router.local]
    row_bytes = feat.shape[1] * feat.itemsize
    batch_bytes = []
    for b in todo:
        own = np.bincount(owner(local_step(b)[0].input_nodes["_N"], "_N"),
                          minlength=args.parts)
        batch_bytes.append([int(own[p]) * row_bytes for p in remote])
    transport_ms = _transport_cpu_ms(ray, batch_bytes * args.reps, pids) if remote else 0.0
    med = {k: float(np.median(v)) for k, v in times.items()}
    cpu_ms = {k: float(np.median(v)) / n * 1e3 for k, v in cpu.items()}
    # CPU times tick in 10 ms: a tiny run can read 0 for the local engine (ratios: nan)
    local_cpu = cpu_ms["local"] or float("nan")
    lat, req = np.array(fused_lat) * 1e3, np.array(fused_req) * 1e3
    print(f"python {platform.python_version()}, ray {ray.__version__}, inline results up to "
          f"{args.inline_mb:g} MB, {args.reps} interleaved passes of {n} batches, prefetch "
          f"{args.prefetch}, loadavg {tuple(round(x, 1) for x in os.getloadavg())}")
    label = {"local": "local engine (whole graph)", "generic": "dist generic store path",
             "fused": "dist fused, 1 batch at a time",
             "loader": f"dist loader, {args.prefetch} in flight",
             "cached": f"dist loader + {args.cache_fraction:g} feature cache",
             "inproc": "dist loader, every part in-process"}
    print(f"{'':36} {'batches/s':>10} {'ms/batch':>9} {'vs local':>9} {'CPU ms/batch':>13}"
          "  (CPU: this process, servers, raylet, GCS)")
    for k in engines:
        print(f"{label[k]:36} {n / med[k]:>10.2f} {med[k] / n * 1e3:>9.1f} "
              f"{med['local'] / med[k]:>8.2f}x {cpu_ms[k]:>13.1f}")
    print(f"fused batch latency p50 / p99 ms     {np.percentile(lat, 50):.1f} / "
          f"{np.percentile(lat, 99):.1f}")
    print(f"fused request latency p50 / p99 ms   {np.percentile(req, 50):.1f} / "
          f"{np.percentile(req, 99):.1f}  (one round: submit -> all servers answered)")
    print(f"feature fetch alone                  {fetched / fetch_s / 1e6:.0f} MB/s, "
          f"{fetched / (n * args.reps) / 1e6:.1f} MB per batch")
    remote_mb = float(np.mean([sum(b) for b in batch_bytes])) / 1e6
    print("no remote part: every part is co-located" if not remote else
          f"Ray transport alone of the remote rows ({remote_mb:.1f} MB a batch in "
          f"{len(remote)} calls): {transport_ms:.1f} CPU ms/batch = "
          f"{transport_ms / local_cpu:.2f}x the local engine's whole batch")
    best = min(med[k] for k in engines if k not in ("local", "generic", "inproc"))
    ratio = med["local"] / best
    print(f"target: dist >= 0.5x local: {ratio:.2f}x ({'met' if ratio >= 0.5 else 'NOT met'})")
    cpu_x = cpu_ms["loader"] / local_cpu
    print(f"target: loader CPU per batch <= 1.5x local: {cpu_x:.2f}x "
          f"({'met' if cpu_x <= 1.5 else 'NOT met'}); every part in-process: "
          f"{cpu_ms['inproc'] / local_cpu:.2f}x CPU, "
          f"{med['local'] / med['inproc']:.2f}x throughput")
    dg.close()
    dgi.close()
    if "cached" in engines:
        dgc.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
