"""Memory of a DistGraph client (the trainer's process) while it samples and fetches,
beside DGL's DistGraph client doing the same.

    python benchmarks/bench_dist_client.py [--out /tmp/dist-1m] [--batches 40] \
        [--dgl-python /tmp/venv-dgl/bin/python] [--reps 1]

The graph and partitions are ``bench_dist.py``'s (R-MAT, 1M nodes, 10M edges, 100 float32
features per node, 4 random parts; made in ``--out`` if missing).  The client runs in a
fresh process of its own (so the partitioning driver's memory is not counted): it starts a
local Ray and the 4 graph servers, builds ``DistGraph(colocate=[0])`` (part 0 read in the
client from its memory-mapped files, as a trainer on a server's machine does), then runs
``--batches`` batches of 1,024 seeds through ``BlockLoader`` (fanouts [25, 10], features
``feat``, ``--prefetch`` in flight), then the same batches through ``sample_blocks`` plus
``dg.ndata["feat"][input_nodes]``.  Printed: the client's VmRSS after each phase and its
peak (VmHWM: per process image, not carried over from the parent as ``ru_maxrss`` can be),
and every server's RSS.

With ``--dgl-python`` (the DGL 2.1 venv of ``../shared/bench/README.md``) DGL's own stack
runs on the same partitions: our export (``graphshard.partition.dgl_io.export_dgl``, made in
``--dgl-out`` if missing, same node IDs, same parts), one ``DistGraphServer`` per part, each
part on a "machine" of its own (its own /dev/shm, by ``unshare``: tests/dgl_machines.py, the
launcher of test_dgl_interop.py's DistGraph test), and on machine 0 beside server 0 a client
that runs ``dgl.distributed.initialize``, ``DistGraph``, then the same batches (same seeds)
through ``DistNodeDataLoader`` with ``NeighborSampler([25, 10])`` (DGL's order, as ours: 10
per seed, 25 per first-hop node; sampling in the client, no sampler processes), fetching
``g.ndata["feat"][input_nodes]`` per batch.  Both clients' phases are printed side by side
with the ratio ours / DGL; ``--reps`` runs ours then DGL that many times (medians).  The DGL
row is skipped, with a message, where that Python or ``unshare`` is missing.  Every process
runs under ``--timeout`` and is killed with its process group at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _shared import memory_mb

MARK = "@@CLIENT@@"
ROOT = Path(__file__).resolve().parents[1]
#: the phases both clients report, in order, with what each side does in it
PHASES = {"imports": "imports done (numpy, Ray, graphshard / dgl, torch)",
          "connected": "connected (Ray started / dgl.distributed.initialize)",
          "DistGraph": "DistGraph (part 0 on this machine)",
          "loader": "loader, {batches} batches with features",
          "generic": "sample_blocks + feature fetch (ours only)"}


def _batches(num_nodes: int, args: argparse.Namespace) -> list:
    """The seed batches, the same on both sides: ``default_rng(1)``, without replacement."""
    import numpy as np

    rng = np.random.default_rng(1)
    return [rng.choice(num_nodes, args.batch_size, replace=False) for _ in range(args.batches)]


def client(args: argparse.Namespace) -> None:
    import numpy as np  # noqa: F401 (counted in the imports phase, as DGL's side counts it)
    import psutil
    import ray

    import graphshard as gs
    from graphshard.runtime.ray import init_ray

    phases = {"imports": memory_mb()}
    init_ray(ray, include_dashboard=False, log_to_driver=False)
    phases["connected"] = memory_mb()
    dg = gs.distributed.DistGraph(args.cfg, colocate=[0], timeout=300.0)
    phases["DistGraph"] = memory_mb()
    batches = _batches(dg.num_nodes(), args)
    for _ in gs.distributed.BlockLoader(dg, batches, [25, 10], features="feat",
                                        prefetch=args.prefetch, seed=0):
        pass
    phases["loader"] = memory_mb()
    for i, b in enumerate(batches):
        blocks = gs.sampling.sample_blocks(dg, b, [25, 10], seed=i)
        dg.ndata["feat"][blocks.input_nodes["_N"]]
    phases["generic"] = memory_mb()
    pids = [int(i["pid"]) for i in ray.get([a.info.remote() for a in dg.router.actors])]
    servers = {p: psutil.Process(pid).memory_info().rss / 2**20
               for p, pid in enumerate(pids) if p not in dg.router.local}
    dg.close()
    ray.shutdown()
    print(MARK + json.dumps({"phases": phases, "servers": servers,
                             "version": gs.__version__}), flush=True)


def dgl_client(args: argparse.Namespace) -> None:
    """DGL's side, run by the DGL Python on machine 0 (tests/dgl_machines.py): the same
    batches through DistNodeDataLoader, features fetched per batch; the phases go to
    ``args.result`` as JSON (the client's stdout is the machine's log)."""
    os.environ["DGL_DIST_MODE"] = "distributed"
    os.environ["DGL_NUM_SERVER"] = "1"  # servers per machine
    os.environ["DGL_NUM_SAMPLER"] = "0"  # sampling in this process, as ours does
    import dgl
    import numpy as np
    import torch

    phases = {"imports": memory_mb()}
    dgl.distributed.initialize(args.dgl_client)
    try:
        phases["connected"] = memory_mb()
        g = dgl.distributed.DistGraph(args.graph_name)
        phases["DistGraph"] = memory_mb()
        seeds = torch.from_numpy(np.concatenate(_batches(g.num_nodes(), args)))
        loader = dgl.dataloading.DistNodeDataLoader(
            g, seeds, dgl.dataloading.NeighborSampler([25, 10]),
            batch_size=args.batch_size, shuffle=False, drop_last=False)
        rows = 0
        for input_nodes, _, _ in loader:
            rows += len(g.ndata["feat"][input_nodes])
        phases["loader"] = memory_mb()
        tmp = args.result + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"phases": phases, "rows": rows, "version": dgl.__version__,
                       "torch": torch.__version__}, f)
        os.replace(tmp, args.result)
    finally:
        dgl.distributed.exit_client()  # also shuts the servers down (their only client)


def _run_ours(cfg: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--client", str(cfg), "--batches", str(args.batches),
           "--batch-size", str(args.batch_size), "--prefetch", str(args.prefetch)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        stdout, stderr = "", f"timed out after {args.timeout:.0f} s"
    finally:
        with contextlib.suppress(ProcessLookupError):  # Ray's processes, if still there
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    lines = [x for x in stdout.splitlines() if x.startswith(MARK)]
    if proc.returncode or not lines:
        raise SystemExit(f"our client failed:\n{stderr[-3000:]}")
    return json.loads(lines[-1][len(MARK):])


def _dgl_missing(args: argparse.Namespace) -> str | None:
    """Why the DGL row cannot run here, or None."""
    sys.path.insert(0, str(ROOT / "tests"))  # tests/dgl_machines.py
    from dgl_machines import own_shm_works

    if not (os.path.isfile(args.dgl_python) and os.access(args.dgl_python, os.X_OK)):
        return f"{args.dgl_python}: no such Python"
    if not own_shm_works():
        return ("`unshare --user --map-root-user --mount` does not run here (each DGL "
                "server needs a /dev/shm of its own)")
    return None


def _dgl_export(cfg: Path, args: argparse.Namespace) -> Path:
    """Our partitions in DGL's format (``--dgl-out``), exported by the DGL Python once."""
    out = Path(args.dgl_out or f"{args.out}-dgl")
    if not (out / cfg.name).exists():
        code = ("import sys; from graphshard.partition.dgl_io import export_dgl; "
                "export_dgl(sys.argv[1], sys.argv[2])")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        subprocess.run([args.dgl_python, "-c", code, str(cfg), str(out)], env=env, check=True,
                       timeout=args.timeout)
    return out / cfg.name


def _run_dgl(part_config: Path, args: argparse.Namespace) -> dict:
    from dgl_machines import run_machines, write_ip_config

    with tempfile.TemporaryDirectory(prefix="bench_dist_client_dgl_") as tmp:
        ip_config = write_ip_config(Path(tmp), args.parts)
        result = Path(tmp) / "result.json"
        client = [args.dgl_python, __file__, "--dgl-client", str(ip_config), "--result",
                  str(result), "--graph-name", part_config.stem, "--batches",
                  str(args.batches), "--batch-size", str(args.batch_size)]
        rc, logs = run_machines(ip_config, part_config, client, python=args.dgl_python,
                                timeout=args.timeout)
        if rc != 0 or not result.exists():
            raise SystemExit(f"DGL's client failed (rc {rc}):\n" + "\n".join(
                f"machine {m}: {log[-1500:]}" for m, log in logs.items()))
        return json.loads(result.read_text())


def _median_phases(runs: list[dict]) -> dict[str, dict[str, float]]:
    return {k: {m: statistics.median(r["phases"][k][m] for r in runs) for m in ("rss", "peak")}
            for k in runs[0]["phases"]}


def _report(ours: list[dict], dgl: list[dict], args: argparse.Namespace) -> None:
    a = _median_phases(ours)
    b = _median_phases(dgl) if dgl else {}

    def cell(side: dict, k: str, m: str) -> str:
        return f"{side[k][m]:,.0f}" if k in side else "-"

    def ratio(k: str, m: str) -> str:
        return f"{a[k][m] / b[k][m]:.2f}x" if k in b else "-"

    print("| client phase | ours VmRSS MB | DGL VmRSS MB | ours/DGL | ours peak MB | "
          "DGL peak MB | ours/DGL |\n|---|---:|---:|---:|---:|---:|---:|")
    for k, name in PHASES.items():
        print(f"| {name.format(batches=args.batches)} | {cell(a, k, 'rss')} | "
              f"{cell(b, k, 'rss')} | {ratio(k, 'rss')} | {cell(a, k, 'peak')} | "
              f"{cell(b, k, 'peak')} | {ratio(k, 'peak')} |")
    if len(ours) > 1:
        print("peaks per rep MB: ours " + ", ".join(f"{r['phases']['generic']['peak']:,.0f}"
                                                   for r in ours)
              + ("; DGL " + ", ".join(f"{r['phases']['loader']['peak']:,.0f}" for r in dgl)
                 if dgl else ""))
    print("our remote servers' RSS MB: " + ", ".join(
        f"part {p} {mb:,.0f}" for p, mb in ours[-1]["servers"].items()))


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
    ap.add_argument("--dgl-python", default=None,
                    help="a Python with DGL 2.1: adds DGL's DistGraph client beside ours")
    ap.add_argument("--dgl-out", default=None,
                    help="DGL export of --out (made if missing; default: <--out>-dgl)")
    ap.add_argument("--reps", type=int, default=1, help="runs of each client, interleaved")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per client run")
    ap.add_argument("--client", metavar="CONFIG", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--dgl-client", metavar="IP_CONFIG", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--result", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--graph-name", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        args.cfg = args.client
        client(args)
        return
    if args.dgl_client:
        dgl_client(args)
        return
    cfg = Path(args.out) / "bench.json"
    if not cfg.exists():
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_dist import _prepare

        _prepare(args)
    skip = _dgl_missing(args) if args.dgl_python else "no --dgl-python given"
    part_config = _dgl_export(cfg, args) if skip is None else None
    ours: list[dict] = []
    dgl: list[dict] = []
    for _ in range(args.reps):
        ours.append(_run_ours(cfg, args))
        if part_config is not None:
            dgl.append(_run_dgl(part_config, args))
    load = os.getloadavg()
    peer = (f"DGL {dgl[0]['version']} (torch {dgl[0]['torch']}), its client beside server 0"
            if dgl else f"no DGL row: {skip}")
    print(f"graphshard {ours[0]['version']}, {args.parts} parts of {cfg}, client co-located "
          f"with part 0, prefetch {args.prefetch}; {peer}; {args.reps} rep(s), medians; "
          f"loadavg {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    _report(ours, dgl, args)


if __name__ == "__main__":
    main()
