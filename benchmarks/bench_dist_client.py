"""Memory of a DistGraph client (the trainer's process) while it samples and fetches.

    python benchmarks/bench_dist_client.py [--out /tmp/dist-1m] [--batches 40]

The graph and partitions are ``bench_dist.py``'s (R-MAT, 1M nodes, 10M edges, 100 float32
features per node, 4 random parts; made in ``--out`` if missing).  The client runs in a
fresh process of its own (so the partitioning driver's memory is not counted): it starts a
local Ray and the 4 graph servers, builds ``DistGraph(colocate=[0])`` (part 0 read in the
client from its memory-mapped files, as a trainer on a server's machine does), then runs
``--batches`` batches of 1,024 seeds through ``BlockLoader`` (fanouts [25, 10], features
``feat``, ``--prefetch`` in flight), then the same batches through ``sample_blocks`` plus
``dg.ndata["feat"][input_nodes]``.  Printed: the client's VmRSS after each phase and its
peak (VmHWM: per process image, not carried over from the parent as ``ru_maxrss`` can be),
and every server's RSS.  No DGL DistGraph runs beside it here: DGL's needs its own server
launcher, which this repository does not drive (the peer figure quoted in issue 42 came
from outside this repository).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _shared import memory_mb

MARK = "@@CLIENT@@"



def client(args: argparse.Namespace) -> None:
    import numpy as np
    import psutil
    import ray

    import graphshard as gs
    from graphshard.runtime.ray import init_ray

    phases = {"start": memory_mb()}
    init_ray(ray, include_dashboard=False, log_to_driver=False)
    phases["ray started"] = memory_mb()
    dg = gs.distributed.DistGraph(args.cfg, colocate=[0], timeout=300.0)
    phases["DistGraph (part 0 in-process)"] = memory_mb()
    rng = np.random.default_rng(1)
    batches = [rng.choice(dg.num_nodes(), args.batch_size, replace=False)
               for _ in range(args.batches)]
    for _ in gs.distributed.BlockLoader(dg, batches, [25, 10], features="feat",
                                        prefetch=args.prefetch, seed=0):
        pass
    phases[f"BlockLoader, {args.batches} batches"] = memory_mb()
    for i, b in enumerate(batches):
        blocks = gs.sampling.sample_blocks(dg, b, [25, 10], seed=i)
        dg.ndata["feat"][blocks.input_nodes["_N"]]
    phases["sample_blocks + feature fetch"] = memory_mb()
    pids = [int(i["pid"]) for i in ray.get([a.info.remote() for a in dg.router.actors])]
    servers = {p: psutil.Process(pid).memory_info().rss / 2**20
               for p, pid in enumerate(pids) if p not in dg.router.local}
    dg.close()
    ray.shutdown()
    print(MARK + json.dumps({"phases": phases, "servers": servers,
                             "version": gs.__version__}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/dist-1m", help="partition folder (made if missing)")
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--method", default="random")
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--prefetch", type=int, default=8)
    ap.add_argument("--client", metavar="CONFIG", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        args.cfg = args.client
        client(args)
        return
    cfg = Path(args.out) / "bench.json"
    if not cfg.exists():
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_dist import _prepare

        _prepare(args)
    cmd = [sys.executable, __file__, "--client", str(cfg), "--batches", str(args.batches),
           "--batch-size", str(args.batch_size), "--prefetch", str(args.prefetch)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    lines = [x for x in out.stdout.splitlines() if x.startswith(MARK)]
    if out.returncode or not lines:
        raise SystemExit(f"client failed:\n{out.stderr[-3000:]}")
    res = json.loads(lines[-1][len(MARK):])
    print(f"graphshard {res['version']}, {args.parts} parts of {cfg}, client co-located with "
          f"part 0, prefetch {args.prefetch}, loadavg {os.getloadavg()[0]:.1f}")
    print("| client phase | VmRSS MB | peak (VmHWM) MB |\n|---|---:|---:|")
    for name, m in res["phases"].items():
        print(f"| {name} | {m['rss']:,.0f} | {m['peak']:,.0f} |")
    print("remote servers' RSS MB: " + ", ".join(f"part {p} {mb:,.0f}"
                                                 for p, mb in res["servers"].items()))


if __name__ == "__main__":
    main()
