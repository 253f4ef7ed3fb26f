"""Sparse vs dense node features of one partitioned graph: bytes on disk, memory to read.

    .venv/bin/python benchmarks/bench_sparse_features.py [--zip PATH] [--parts 4]

Coauthor CS (gnn-benchmark, 18333 nodes, 6805 bag-of-words columns, 1092079 non-zeros) is
loaded with ``gs.datasets.load_shchur_npz`` twice: ``feat`` as SparseRows (float32 values,
int32 columns) and as a dense float32 array.  Both are partitioned into ``--parts`` parts
with the same assignment (METIS on the sparse run, given to the dense run).

  bytes   every file of the partition folder (config and part files)
  rss     peak RSS (VmHWM) of a fresh process that reads every feature row of every part
          as a co-located trainer does: load_partition_data, then PartIndex.node_features
          of all owned nodes (the memory-mapped pages read count, the rows copied too);
          also shown above the peak of a process that only imports the same modules

The child processes also return the float64 sum of the rows they read and the number of
rows; the two variants must agree before any ratio is printed.

With ``--train-seeds 0 1 2`` both folders also train ``gs.train.train_sage`` (one
trainer over the DistGraph of the parts; GraphSAGE-mean, fanouts [10, 25], hidden 64,
Adam lr 1e-2, weight decay 5e-4, batch 256, ``--epochs`` epochs evaluated every 5) on the
Shchur split (20 train / 30 val nodes per class, the rest test; split seed 0, the masks
stored in the parts), and print the test accuracy at the best validation epoch per seed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _shared import DATA

DEFAULT_ZIP = DATA / "gnn-benchmark-shchur" / "coauthor-cs.zip"


def _read_all(config: str) -> dict:
    """In the child: every node feature row of every part, as a co-located server reads."""
    import graphshard as gs
    from graphshard.distributed._index import PartIndex  # the benchmark may use the private index

    cfg = gs.partition.read_config(config)
    total, rows = 0.0, 0
    for p in range(cfg.num_parts):
        index = PartIndex(gs.partition.load_partition_data(cfg, p, verify=False))
        got = index.node_features("_N", "feat", index.owned_nodes("_N"))
        values = got.values if isinstance(got, gs.SparseRows) else got
        total += float(values.sum(dtype=np.float64))
        rows += len(got)
        del got, index
    return {"sum": total, "rows": rows, "rss_mb": _peak_rss_mb()}


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: per address space, so unlike ru_maxrss it does not
    carry the parent's peak across fork + exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _child_baseline() -> float:
    """Peak RSS (MB) of a child that imports graphshard and does nothing else."""
    out = subprocess.run([sys.executable, __file__, "--child", "-"], capture_output=True,
                         text=True, check=True)
    return float(json.loads(out.stdout)["rss_mb"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zip", default=str(DEFAULT_ZIP), help="Coauthor CS zip or npz")
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--out", default=None, help="work folder (a temporary one by default)")
    ap.add_argument("--train-seeds", type=int, nargs="*", default=[],
                    help="also train GraphSAGE on both folders with these seeds")
    ap.add_argument("--epochs", type=int, default=60, help="training epochs (--train-seeds)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "-":  # the baseline: imports only
        import graphshard.distributed._index
        import graphshard.partition

        print(json.dumps({"rss_mb": _peak_rss_mb()}))
        return
    if args.child:
        print(json.dumps(_read_all(args.child)))
        return

    import graphshard as gs
    from graphshard.partition import build_partitions

    out = Path(args.out or tempfile.mkdtemp(prefix="bench_sparse_"))
    g = gs.datasets.load_shchur_npz(args.zip)
    feat = g.ndata["feat"]
    print(f"graphshard {gs.__version__}, numpy {np.__version__}, Python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs; {Path(args.zip).name}: "
          f"{g.num_nodes()} nodes, {feat.num_cols} columns, nnz {feat.nnz} "
          f"(density {feat.nnz / (len(feat) * feat.num_cols):.4f}), {args.parts} parts")
    if args.train_seeds:
        _shchur_split(g)
    sparse = build_partitions(g, "cs", args.parts, out / "sparse", part_method="metis")
    g.ndata["feat"] = feat.to_dense()
    del feat
    build_partitions(g, "cs", args.parts, out / "dense", assignment=sparse.parts)
    del g

    base = _child_baseline()
    rows = {}
    for name in ("sparse", "dense"):
        res = subprocess.run([sys.executable, __file__, "--child", str(out / name / "cs.json")],
                             capture_output=True, text=True, check=True)
        rows[name] = {**json.loads(res.stdout), "bytes": _folder_bytes(out / name)}
    s, d = rows["sparse"], rows["dense"]
    if s["rows"] != d["rows"] or not np.isclose(s["sum"], d["sum"], rtol=1e-9):
        raise SystemExit(f"the variants disagree: {s} vs {d}")
    print(f"checked: both read {s['rows']} rows, sum of values {s['sum']:.1f}")
    print(f"{'':24}{'sparse':>12}{'dense':>12}{'dense/sparse':>14}")
    print(f"{'partition folder MB':24}{s['bytes'] / 1e6:12.1f}{d['bytes'] / 1e6:12.1f}"
          f"{d['bytes'] / s['bytes']:14.1f}")
    print(f"{'peak RSS of a read MB':24}{s['rss_mb']:12.1f}{d['rss_mb']:12.1f}"
          f"{d['rss_mb'] / s['rss_mb']:14.1f}")
    ds, dd = s["rss_mb"] - base, d["rss_mb"] - base
    print(f"{'  above import MB':24}{ds:12.1f}{dd:12.1f}{dd / max(ds, 1e-9):14.1f}"
          f"   (import graphshard alone: {base:.1f} MB)")
    for seed in args.train_seeds:
        acc = {}
        for name in ("sparse", "dense"):
            r = gs.train.train_sage(str(out / name / "cs.json"), epochs=args.epochs,
                                       eval_every=5, seed=seed, hidden=64, lr=1e-2,
                                       weight_decay=5e-4, batch_size=256)
            acc[name] = (r.best_epoch, r.val_at_best_val, r.test_at_best_val)
        print(f"seed {seed}: test accuracy at the best validation epoch, sparse "
              f"{acc['sparse'][2]:.4f} (epoch {acc['sparse'][0]}, val {acc['sparse'][1]:.4f}), "
              f"dense {acc['dense'][2]:.4f} (epoch {acc['dense'][0]}, val "
              f"{acc['dense'][1]:.4f})", flush=True)
    print(f"work folder: {out}")


def _shchur_split(g) -> None:
    """Shchur et al.'s split (split seed 0) as the graph's train/val/test node masks."""
    from bench_train import shchur_split  # the split bench_train.py trains on

    train, val = shchur_split(np.asarray(g.ndata["label"]), 0)
    g.ndata["train_mask"], g.ndata["val_mask"], g.ndata["test_mask"] = train, val, ~(train | val)


if __name__ == "__main__":
    main()
