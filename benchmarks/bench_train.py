"""Training examples on real graphs: GraphSAGE accuracy and walk-embedding Micro-F1.

    python benchmarks/bench_train.py                    # both parts
    python benchmarks/bench_train.py --only sage --epochs 200 --parts 4
    python benchmarks/bench_train.py --only walk --walk-times 10 --walk-len 40

GraphSAGE-mean on Amazon Computers (gnn-benchmark npz, symmetrised, row-normalised
bag-of-words features) with the split of Shchur et al. (20 train / 30 val per class, the
rest test, seeded), trained on the whole local graph and through a DistGraph over
``--parts`` METIS partitions (Ray servers on this machine); test accuracy at the best
validation epoch beside the published 82.4 +/- 1.8 (full-neighbour inference for
evaluation).  Walk embeddings on BlogCatalog (DeepWalk setting, skip-gram with negative
sampling, a context table unless ``--shared-table``), scored as Perozzi et al.:
one-vs-rest logistic regression on 10% of the nodes, each test node gets its true number
of top-scoring labels (mean of 3 splits); Micro/Macro-F1 beside the published DeepWalk
36.00 / 21.30 (80 walks of 40, window 10).
Needs torch, ray and scikit-learn (benchmark only).
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import graphshard as gs

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def amazon_computers(seed: int) -> gs.Graph:
    path = SHARED / "gnn-benchmark-shchur" / "amazon-computers.zip"
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".npz"))
        z = dict(np.load(zf.open(name), allow_pickle=False))
    adj = sp.csr_matrix((z["adj_data"], z["adj_indices"], z["adj_indptr"]),
                        shape=tuple(z["adj_shape"]))
    adj = ((adj + adj.T) > 0).tocoo()
    keep = adj.row != adj.col
    feat = sp.csr_matrix((z["attr_data"], z["attr_indices"], z["attr_indptr"]),
                         shape=tuple(z["attr_shape"])).toarray().astype(np.float32)
    feat /= np.maximum(feat.sum(1, keepdims=True), 1)
    labels = z["labels"].astype(np.int64)
    g = gs.graph((adj.row[keep], adj.col[keep]), num_nodes=adj.shape[0])
    g.ndata["feat"] = feat
    g.ndata["label"] = labels
    rng = np.random.default_rng(seed)
    train = np.zeros(len(labels), bool)
    val = np.zeros(len(labels), bool)
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        train[idx[:20]] = True
        val[idx[20:50]] = True
    g.ndata["train_mask"] = train
    g.ndata["val_mask"] = val
    g.ndata["test_mask"] = ~(train | val)
    return g


def _warm_up(store: object) -> None:
    """Compile the sampling kernels (and open server connections) before timing."""
    for fanouts in ([10, 25], [-1]):
        gs.sampling.sample_blocks(store, np.arange(64), fanouts, seed=0)


def bench_sage(args: argparse.Namespace) -> list[tuple[str, ...]]:
    import ray

    from graphshard.examples import train_sage

    g = amazon_computers(args.seed)
    kw = dict(fanouts=[10, 25], hidden=64, epochs=args.epochs, batch_size=256, lr=args.lr,
              dropout=0.5, weight_decay=5e-4, eval_every=args.eval_every, seed=args.seed)
    print(f"Amazon Computers: {g.num_nodes()} nodes, {g.num_edges()} directed edges")
    rows = []
    _warm_up(g)
    res = train_sage(g, **kw)
    rows.append(("local whole graph", f"{100 * res.test_at_best_val:.1f}",
                 f"{res.best_epoch + 1}", f"{sum(res.seconds):.1f}",
                 f"{sum(res.eval_seconds):.1f}"))
    print(rows[-1])
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        gs.partition_graph(g, "computers", args.parts, out)
        tpart = time.perf_counter() - t
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        dg = gs.dist.DistGraph(f"{out}/computers.json", colocate=())
        _warm_up(dg)
        try:
            res = train_sage(dg, **kw)
        finally:
            dg.close()
            ray.shutdown()
    rows.append((f"DistGraph {args.parts} parts (remote)", f"{100 * res.test_at_best_val:.1f}",
                 f"{res.best_epoch + 1}", f"{sum(res.seconds):.1f}",
                 f"{sum(res.eval_seconds):.1f}"))
    print(rows[-1], f"(partitioning {tpart:.1f} s, not timed)")
    rows.append(("published GraphSAGE-mean (Shchur et al.)", "82.4 +/- 1.8", "", "", ""))
    return rows


def blogcatalog() -> tuple[gs.Graph, np.ndarray]:
    root = SHARED / "blogcatalog-pgl"
    edges = np.loadtxt(root / "edges.csv", delimiter=",", dtype=np.int64) - 1
    n = len(np.loadtxt(root / "nodes.csv", dtype=np.int64))
    groups = np.loadtxt(root / "group-edges.csv", delimiter=",", dtype=np.int64) - 1
    y = np.zeros((n, int(groups[:, 1].max()) + 1), dtype=np.int8)
    y[groups[:, 0], groups[:, 1]] = 1
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    return gs.graph((src, dst), num_nodes=n), y


def micro_macro_f1(emb: np.ndarray, y: np.ndarray, ratio: float, seed: int
                   ) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.multiclass import OneVsRestClassifier

    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    k = int(ratio * len(y))
    tr, te = perm[:k], perm[k:]
    x = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    clf = OneVsRestClassifier(LogisticRegression(max_iter=1000), n_jobs=1).fit(x[tr], y[tr])
    score = clf.predict_proba(x[te])
    pred = np.zeros_like(y[te])
    top = np.argsort(-score, axis=1)
    for i, c in enumerate(y[te].sum(1)):
        pred[i, top[i, :c]] = 1
    return (f1_score(y[te], pred, average="micro"), f1_score(y[te], pred, average="macro"))


def bench_walk(args: argparse.Namespace) -> list[tuple[str, ...]]:
    from graphshard.examples import train_walk_embedding

    g, y = blogcatalog()
    print(f"BlogCatalog: {g.num_nodes()} nodes, {g.num_edges()} directed edges")
    res = train_walk_embedding(g, walk_len=args.walk_len, walk_times=args.walk_times,
                               win_size=5, neg_num=5, emb_size=128, lr=args.walk_lr, epochs=1,
                               batch_size=args.walk_batch, neg_distribution=args.negatives,
                               context_table=not args.shared_table, seed=args.seed)
    f1s = [micro_macro_f1(res.embeddings["_N"], y, 0.1, s) for s in range(3)]
    mi, ma = np.mean(f1s, axis=0) * 100
    setting = (f"walk_len {args.walk_len}, walk_times {args.walk_times}, win 5, neg 5 "
               f"{args.negatives}, d 128, 1 epoch, "
               f"{'shared table' if args.shared_table else 'context table'}")
    return [(f"graphshard local ({setting})", f"{mi:.2f}", f"{ma:.2f}",
             f"{sum(res.seconds):.1f}", f"{res.num_pairs[0]}"),
            ("published DeepWalk (Perozzi et al., 10%)", "36.00", "21.30", "", "")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["sage", "walk"])
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--parts", type=int, default=4)
    p.add_argument("--walk-len", type=int, default=40)
    p.add_argument("--walk-times", type=int, default=10)
    p.add_argument("--walk-lr", type=float, default=0.1)
    p.add_argument("--walk-batch", type=int, default=4096)
    p.add_argument("--negatives", choices=["uniform", "degree"], default="degree")
    p.add_argument("--shared-table", action="store_true",
                   help="score contexts against the node table (PGL's default)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    import numba
    import torch

    torch.set_num_threads(2)
    print(f"graphshard {gs.__version__}, torch {torch.__version__}, numba {numba.__version__}, "
          f"python {platform.python_version()}, threads {torch.get_num_threads()}")
    if args.only in (None, "sage"):
        rows = bench_sage(args)
        print("\n| run | test acc % (best val) | best epoch | train s | eval s |")
        print("|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    if args.only in (None, "walk"):
        rows = bench_walk(args)
        print("\n| run | Micro-F1 % | Macro-F1 % | train s | pairs |")
        print("|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
