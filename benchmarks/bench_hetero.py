"""Heterogeneous node classification on HGB: R-GCN and HGT, one process vs partitions.

    python benchmarks/bench_hetero.py                          # DBLP, both models, 3 seeds
    python benchmarks/bench_hetero.py --datasets DBLP ACM --epochs 30 --seeds 0 1 2
    python benchmarks/bench_hetero.py --datasets DBLP ACM --models hgt --patience 5
    python benchmarks/bench_hetero.py --datasets ACM DBLP --models rgcn --runs local \
        --epochs 5 --seeds 0 --dgl-python /tmp/venv-dgl/bin/python    # ours vs DGL only

:func:`graphshard.train.train_hetero` (R-GCN on ``RGCNConv``'s parameters, or PyG's
``HGTConv``, through PyG's ``NodeLoader`` on graphshard's PyG backend) with the same
hyper-parameters on both sides (``--runs``): (1) ``local``, one process on the whole graph
(torch with ``--threads`` threads); (2) ``dist``, ``--trainers`` trainer processes (Ray
actors, 1 CPU each, DDP on gloo) over ``--parts`` METIS partitions balanced on node type and
training nodes, served by Ray graph servers on this machine.
HGB's split: label.dat (a seeded 20% held out for validation) and label.dat.test, half of
HGB's test set: label.dat.test_full's labels are unrelated to the true ones in our copies
(see :func:`graphshard.datasets.load_hgb`).  The published rows (HGB, Lv et al. 2021) are on
the full test set.  With ``--dgl-python`` (the DGL 2.1 venv of ``../shared/bench/README.md``)
R-GCN also runs as DGL's mini-batch R-GCN (``benchmarks/dgl_rgcn.py``: HeteroGraphConv of
GraphConv per relation) with the same fanouts, width, batch, optimiser settings, epochs and
seeds, in its own process with the same torch thread count and the environment the
benchmark started with (DGL as its users run it: without the ``GOMP_SPINCOUNT`` that
``import graphshard`` sets for our side), each seed right after ours (interleaved, so both
see the same load), with the ratio ours / DGL.  Both sides evaluate the
validation and test nodes after every epoch with full neighbourhoods (ours:
``eval_fanouts=[-1, -1]``), as DGL's example and the published numbers do.  Scores: test
Macro-/Micro-F1 (%) at the epoch of best validation Macro-F1, mean +/- sd over seeds; epoch
seconds: median training seconds of an epoch (evaluation excluded), and median seconds of
training plus that epoch's evaluation (the first epoch dropped from both).  Needs torch,
torch_geometric and ray.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

import graphshard  # noqa: F401  (first: its OpenMP setting precedes torch's libgomp)
from _shared import shared_file
from graphshard._util.openmp import peer_environ

PUBLISHED = {("DBLP", "rgcn"): (91.52, 92.07), ("DBLP", "hgt"): (93.01, 93.49)}
MODEL_KW = {
    "rgcn": dict(fanouts=[10, 10], eval_fanouts=[-1, -1], hidden=64, batch_size=64, lr=5e-3,
                 dropout=0.3, weight_decay=1e-4),
    "hgt": dict(fanouts=[10, 10], eval_fanouts=[-1, -1], hidden=64, heads=4, batch_size=64,
                lr=1e-3, dropout=0.3, weight_decay=1e-4),
}


def _epoch_seconds(seconds: list[float]) -> float:
    return float(np.median(seconds[1:] if len(seconds) > 1 else seconds))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=["DBLP"])
    p.add_argument("--models", nargs="+", default=["rgcn", "hgt"], choices=list(MODEL_KW))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--patience", type=int, default=None,
                   help="stop a run after this many epochs without a better validation score")
    p.add_argument("--parts", type=int, default=4)
    p.add_argument("--trainers", type=int, default=2)
    p.add_argument("--threads", type=int, default=2, help="torch threads of the 1-process run")
    p.add_argument("--runs", nargs="+", default=["local", "dist"], choices=["local", "dist"],
                   help="our runs: one process (local) and/or trainers on parts (dist)")
    p.add_argument("--dgl-python", default=None,
                   help="python of the DGL 2.1 venv: add DGL's R-GCN as the peer row")
    args = p.parse_args()

    import ray
    import torch

    import graphshard as gs
    from graphshard.runtime.ray import init_ray  # a local Ray on loopback only
    from graphshard.train import train_hetero

    torch.set_num_threads(args.threads)
    os.environ.setdefault("RAY_worker_niceness", "0")  # as bench_train.py: same priority
    if "dist" in args.runs:
        init_ray(ray, num_cpus=args.trainers, include_dashboard=False, log_to_driver=False)
    print(f"torch {torch.__version__}, python {platform.python_version()}, {os.cpu_count()} "
          f"CPUs, epochs {args.epochs} (patience {args.patience}), seeds {args.seeds}", flush=True)
    rows = []
    for name in args.datasets:
        ds = gs.datasets.load_hgb(shared_file("hgb", f"{name}.zip"))
        g, target = ds.graph, ds.target
        print(f"{name}: {g.num_nodes()} nodes, {g.num_edges()} edges, target {target}, "
              f"{int(g.nodes[target].data['train_mask'].sum())} train nodes", flush=True)
        # balance: one weight class per node type, training nodes of the target a class of
        # their own (so each trainer's partitions hold about the same number)
        kinds = [np.full(g.num_nodes(t), i) for i, t in enumerate(g.ntypes)]
        kinds[g.ntypes.index(target)][g.nodes[target].data["train_mask"]] = len(g.ntypes)
        config, handle = "", None
        if "dist" in args.runs:
            out = tempfile.mkdtemp(prefix=f"bench-hetero-{name}-")
            t0 = time.perf_counter()
            gs.partition_graph(g, name, args.parts, out, part_method="metis",
                               balance_ntypes=np.concatenate(kinds))
            print(f"  partitioned into {args.parts} in {time.perf_counter() - t0:.1f} s",
                  flush=True)
            config = f"{out}/{name}.json"
            handle = gs.distributed.serve(config)
        try:
            for model in args.models:
                res: dict[str, list] = {"local": [], "dist": [], "dgl": []}
                peer = model == "rgcn" and args.dgl_python
                for seed in args.seeds:
                    kw = dict(MODEL_KW[model], model=model, target=target, epochs=args.epochs,
                              patience=args.patience, seed=seed)
                    for key in args.runs:
                        r = (train_hetero(g, **kw) if key == "local" else
                             train_hetero(config, num_trainers=args.trainers, **kw))
                        both = [a + b for a, b in zip(r.seconds, r.eval_seconds, strict=True)]
                        res[key].append((100 * r.test_macro_f1, 100 * r.test_micro_f1,
                                         _epoch_seconds(r.seconds), _epoch_seconds(both),
                                         r.best_epoch))
                        print(f"  {model} seed {seed} {key}: macro {res[key][-1][0]:.2f} "
                              f"micro {res[key][-1][1]:.2f} epoch {res[key][-1][2]:.2f} s "
                              f"(+ eval {res[key][-1][3]:.2f} s) best epoch {r.best_epoch}",
                              flush=True)
                    if peer:  # interleaved: the peer's run of this seed right after ours
                        res["dgl"].append(_dgl_run(name, seed, args))
                rows += _rows(name, model, res, args)
                if peer:
                    a = np.array(res["dgl"])
                    rows.append((name, model, "DGL 2.1 R-GCN, 1 process", _f(a[:, 0]),
                                 _f(a[:, 1]), f"{np.median(a[:, 2]):.2f}",
                                 f"{np.median(a[:, 3]):.2f}"))
                    if "local" in args.runs:
                        b = np.array(res["local"])
                        rows.append((name, model, "1 process / DGL", "", "",
                                     f"x{np.median(b[:, 2]) / np.median(a[:, 2]):.2f}",
                                     f"x{np.median(b[:, 3]) / np.median(a[:, 3]):.2f}"))
        finally:
            if handle is not None:
                handle.shutdown()
    if "dist" in args.runs:
        ray.shutdown()
    _print(rows)


def _rows(name: str, model: str, res: dict[str, list], args: argparse.Namespace
          ) -> list[tuple[str, ...]]:
    f = _f
    label = {"local": "1 process, whole graph", "dist": f"{args.trainers} trainers, "
             f"{args.parts} parts"}
    rows = [(name, model, label[key], f(a[:, 0]), f(a[:, 1]), f"{np.median(a[:, 2]):.2f}",
             f"{np.median(a[:, 3]):.2f}")
            for key in args.runs for a in [np.array(res[key])]]
    if len(args.runs) == 2:
        a, b = np.array(res["local"]), np.array(res["dist"])
        rows.append((name, model, "difference (dist - 1 process)",
                     f"{b[:, 0].mean() - a[:, 0].mean():+.2f}",
                     f"{b[:, 1].mean() - a[:, 1].mean():+.2f}",
                     f"x{np.median(b[:, 2]) / np.median(a[:, 2]):.2f}",
                     f"x{np.median(b[:, 3]) / np.median(a[:, 3]):.2f}"))
    if (name, model) in PUBLISHED:
        ma, mi = PUBLISHED[(name, model)]
        rows.append((name, model, "published (HGB, full test set)", f"{ma:.2f}", f"{mi:.2f}",
                     "", ""))
    return rows


def _dgl_run(name: str, seed: int, args: argparse.Namespace) -> tuple[float, ...]:
    """DGL 2.1's R-GCN with the same settings and seed, a subprocess in the peer venv:
    (Macro-F1 %, Micro-F1 %, epoch s, epoch + eval s)."""
    import json
    import subprocess

    kw = MODEL_KW["rgcn"]
    cmd = [args.dgl_python, str(Path(__file__).with_name("dgl_rgcn.py")),
           str(shared_file("hgb", f"{name}.zip")),
           "--fanouts", ",".join(map(str, kw["fanouts"])),
           "--hidden", str(kw["hidden"]), "--batch-size", str(kw["batch_size"]),
           "--lr", str(kw["lr"]), "--dropout", str(kw["dropout"]), "--weight-decay",
           str(kw["weight_decay"]), "--epochs", str(args.epochs), "--seed", str(seed),
           "--threads", str(args.threads)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True,
                          env={**peer_environ(), "DGLBACKEND": "pytorch"})
    r = json.loads(done.stdout.strip().splitlines()[-1])
    both = [a + b for a, b in zip(r["epoch_seconds"], r["eval_seconds"], strict=True)]
    out = (100 * r["test_macro_f1"], 100 * r["test_micro_f1"],
           _epoch_seconds(r["epoch_seconds"]), _epoch_seconds(both))
    print(f"  rgcn seed {seed} DGL: macro {out[0]:.2f} micro {out[1]:.2f} epoch "
          f"{out[2]:.2f} s (+ eval {out[3]:.2f} s) ({r['peer']})", flush=True)
    return out


def _f(x: np.ndarray) -> str:
    return f"{x.mean():.2f} +/- {x.std():.2f}"


def _print(rows: list[tuple[str, ...]]) -> None:
    head = ("dataset", "model", "run", "Macro-F1", "Micro-F1", "epoch s", "epoch+eval s")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
