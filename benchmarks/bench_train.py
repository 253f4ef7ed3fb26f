"""Training examples on real graphs: GraphSAGE accuracy and speed, walk-embedding F1.

    python benchmarks/bench_train.py --only sage --datasets computers cs --seeds 0 1 2
    python benchmarks/bench_train.py --only sage --dgl /tmp/venv-dgl/bin/python
    python benchmarks/bench_train.py --only walk   # BlogCatalog, the library's walk defaults
    python benchmarks/bench_train.py --only walk --walk-times 10 --walk-lr 0.05 \
        --sample 0                            # a cheaper setting of the TUNING.md ablation
    python benchmarks/bench_train.py --only walk --score-emb t-s0.npy --splits 10  # score only
    python benchmarks/bench_train.py --only dblp            # HGB DBLP, metapath APVPA

GraphSAGE-mean (fanouts [10, 25], hidden 64, dropout 0.5, Adam lr 1e-2, wd 5e-4, batch 256
per trainer) on Amazon Computers and Coauthor CS (gnn-benchmark npz, symmetrised,
row-normalised bag-of-words), split as Shchur et al. (20 train / 30 val per class, the rest
test), one split (``--split-seed``) for every model seed.  Per seed, interleaved: (1) one
process on the whole local graph; (2) ``--trainers`` trainer processes (Ray actors, DDP on
gloo) over ``--parts`` METIS partitions balanced on the train mask, served by Ray graph
servers on this machine; (3) with ``--dgl PYTHON``, DGL's own GraphSAGE (SAGEConv mean,
NeighborSampler, one process) in that interpreter.  Test accuracy at the best validation
epoch (full-neighbour inference), mean over seeds, beside the published 82.4 +/- 1.8 and
91.3 +/- 2.8.  Epoch time is the median training time of an epoch (evaluation excluded,
the first epoch dropped: compilation and start-up); samples/s = training nodes per second.

Walk embeddings: BlogCatalog, skip-gram with negative sampling trained with the library's
defaults (``WalkOptions``: DeepWalk's setting since issue 27) except where a flag is given
(each flag left out passes nothing; the table prints the full setting used), scored as
Perozzi et al. (one-vs-rest logistic regression, C = 1, on 10% of the nodes, each test node
gets its true number of labels; mean of ``--splits`` random splits, 3 by default, 10 in the
paper, 2 in DeepWalk's scoring script), mean +/- sd over ``--seeds``, beside DeepWalk's
36.00 / 21.30.  Three scorings of the same tables: raw embeddings with sklearn's lbfgs
solver; raw with liblinear, the solver of DeepWalk's script (sklearn's default in 2014;
liblinear also penalises the intercept), i.e. DeepWalk's scoring exactly; L2-normalised
(not DeepWalk's).  HGB DBLP with metapath author-paper-venue-paper-author, authors classified by
logistic regression on HGB's labelled authors (label.dat; 5 random 80/20 splits).
label.dat.test_full is not used: its labels do not fit the graph (an author's most
frequent venue predicts label.dat's labels but gives chance, ~25%, on test_full), so it
looks like HGB's masked test file.
Needs torch, ray and scikit-learn: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import scipy.sparse as sp

from _shared import shared_file

SHCHUR = {"computers": ("amazon-computers.zip", "82.4 +/- 1.8"),
          "cs": ("coauthor-cs.zip", "91.3 +/- 2.8")}
SAGE_KW = dict(fanouts=[10, 25], hidden=64, batch_size=256, dropout=0.5, weight_decay=5e-4)


def shchur_arrays(name: str, split_seed: int) -> dict[str, np.ndarray]:
    """Edges (symmetrised, no self loops), features, labels and the Shchur split (NumPy
    only: the DGL worker reads the same arrays)."""
    with zipfile.ZipFile(shared_file("gnn-benchmark-shchur", SHCHUR[name][0])) as zf:
        member = next(n for n in zf.namelist() if n.endswith(".npz"))
        npz = np.load(io.BytesIO(zf.read(member)), allow_pickle=False)
        z = {k: npz[k] for k in npz.files if k.startswith(("adj_", "attr_", "labels"))}
        z.pop("attr_names", None)  # strings (and class_names: objects) are not needed
    adj = sp.csr_matrix((z["adj_data"], z["adj_indices"], z["adj_indptr"]),
                        shape=tuple(z["adj_shape"]))
    adj = ((adj + adj.T) > 0).tocoo()
    keep = adj.row != adj.col
    feat = sp.csr_matrix((z["attr_data"], z["attr_indices"], z["attr_indptr"]),
                         shape=tuple(z["attr_shape"])).toarray().astype(np.float32)
    feat /= np.maximum(feat.sum(1, keepdims=True), 1)
    labels = z["labels"].astype(np.int64)
    train, val = shchur_split(labels, split_seed)
    return {"src": adj.row[keep].astype(np.int64), "dst": adj.col[keep].astype(np.int64),
            "feat": feat, "label": labels, "train_mask": train, "val_mask": val,
            "test_mask": ~(train | val)}


def shchur_split(labels: np.ndarray, split_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Shchur et al.'s split as (train, val) node masks: 20 train and 30 validation nodes
    per class, drawn with ``split_seed``; the rest is test."""
    rng = np.random.default_rng(split_seed)
    train = np.zeros(len(labels), bool)
    val = np.zeros(len(labels), bool)
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        train[idx[:20]] = True
        val[idx[20:50]] = True
    return train, val


def shchur_graph(name: str, split_seed: int):
    import graphshard as gs

    a = shchur_arrays(name, split_seed)
    g = gs.graph((a["src"], a["dst"]), num_nodes=len(a["label"]))
    for k in ("feat", "label", "train_mask", "val_mask", "test_mask"):
        g.ndata[k] = a[k]
    return g


def _epoch_seconds(seconds: list[float]) -> float:
    return float(np.median(seconds[1:] if len(seconds) > 1 else seconds))


def _run_dgl(python: str, name: str, args: argparse.Namespace, seed: int) -> dict:
    cmd = [python, __file__, "--dgl-worker", name, "--split-seed", str(args.split_seed),
           "--epochs", str(args.epochs), "--eval-every", str(args.eval_every),
           "--lr", str(args.lr), "--seeds", str(seed)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                         env={"DGLBACKEND": "pytorch", "PATH": "/usr/bin:/bin"})
    if out.returncode:
        raise RuntimeError(f"DGL worker failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_sage(args: argparse.Namespace) -> list[tuple[str, ...]]:
    import ray

    import graphshard as gs
    from graphshard.train import train_sage

    rows = []
    # Ray starts its workers at niceness 15: on a shared machine the trainer actors would
    # then lose the CPU to every other process, and the comparison with the one-process run
    # (niceness 0) would measure the scheduler.  Same priority for both:
    os.environ.setdefault("RAY_worker_niceness", "0")
    from graphshard.runtime.ray import init_ray  # a local Ray on loopback only

    init_ray(ray, num_cpus=2, include_dashboard=False, log_to_driver=False)
    for name in args.datasets:
        g = shchur_graph(name, args.split_seed)
        print(f"{name}: {g.num_nodes()} nodes, {g.num_edges()} directed edges, "
              f"{int(np.asarray(g.ndata['train_mask']).sum())} train nodes", flush=True)
        gs.sampling.sample_blocks(g, np.arange(64), [10, 25], seed=0)  # compile
        out = tempfile.mkdtemp(prefix=f"bench-train-{name}-")
        gs.partition_graph(g, name, args.parts, out, part_method="metis",
                           balance_ntypes=np.asarray(g.ndata["train_mask"]))
        handle = gs.distributed.serve(f"{out}/{name}.json")
        res: dict[str, list] = {"local": [], "dist": [], "dgl": []}
        try:
            for seed in args.seeds:
                kw = dict(SAGE_KW, epochs=args.epochs, lr=args.lr, eval_every=args.eval_every,
                          seed=seed)
                r = train_sage(g, **kw)
                res["local"].append((r.test_at_best_val, _epoch_seconds(r.seconds),
                                     r.samples[-1], sum(r.seconds)))
                print(f"  seed {seed} local: {res['local'][-1]}", flush=True)
                r = train_sage(f"{out}/{name}.json", num_trainers=args.trainers, **kw)
                res["dist"].append((r.test_at_best_val, _epoch_seconds(r.seconds),
                                    r.samples[-1], sum(r.seconds)))
                print(f"  seed {seed} {args.trainers} trainers: {res['dist'][-1]}", flush=True)
                if args.dgl:
                    d = _run_dgl(args.dgl, name, args, seed)
                    res["dgl"].append((d["test_at_best_val"], d["epoch_seconds"],
                                       d["samples"], d["train_seconds"]))
                    print(f"  seed {seed} DGL: {res['dgl'][-1]}", flush=True)
        finally:
            handle.shutdown()
        base = np.array(res["local"])
        labels = {"local": "graphshard, 1 process, whole graph",
                  "dist": f"graphshard, {args.trainers} trainers (DDP), {args.parts} parts",
                  "dgl": f"DGL {d['version'] if args.dgl else ''}, 1 process"}
        for key in ("local", "dist", "dgl"):
            if not res[key]:
                continue
            a = np.array(res[key])
            acc = 100 * a[:, 0]
            rows.append((name, labels[key], f"{acc.mean():.2f} +/- {acc.std():.2f}",
                         f"{np.median(a[:, 1]):.3f}",
                         f"{np.median(a[:, 1] / base[:, 1]):.2f}",
                         f"{np.median(a[:, 2] / a[:, 1]):.0f}"))
        rows.append((name, "published GraphSAGE-mean (Shchur et al.)", SHCHUR[name][1], "", "",
                     ""))
    ray.shutdown()
    return rows


def dgl_worker(args: argparse.Namespace) -> None:
    """GraphSAGE-mean in DGL on the same arrays and split; prints one JSON line."""
    import dgl
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    seed = args.seeds[0]
    a = shchur_arrays(args.dgl_worker, args.split_seed)
    g = dgl.graph((torch.from_numpy(a["src"]), torch.from_numpy(a["dst"])),
                  num_nodes=len(a["label"]))
    feat, label = torch.from_numpy(a["feat"]), torch.from_numpy(a["label"])
    train = torch.from_numpy(np.flatnonzero(a["train_mask"]))
    torch.manual_seed(seed)
    dims = [feat.shape[1], SAGE_KW["hidden"], int(label.max()) + 1]
    layers = torch.nn.ModuleList(dgl.nn.SAGEConv(dims[i], dims[i + 1], "mean")
                                 for i in range(2))
    opt = torch.optim.Adam(layers.parameters(), lr=args.lr,
                           weight_decay=SAGE_KW["weight_decay"])
    sampler = dgl.dataloading.NeighborSampler(SAGE_KW["fanouts"])
    loader = dgl.dataloading.DataLoader(g, train, sampler, batch_size=SAGE_KW["batch_size"],
                                        shuffle=True, drop_last=False)

    def forward(blocks, h, training):
        for i, (layer, b) in enumerate(zip(layers, blocks, strict=True)):
            h = layer(b, h)
            if i < len(layers) - 1:
                h = F.dropout(F.relu(h), SAGE_KW["dropout"], training)
        return h

    secs, best_val, test_at = [], -1.0, 0.0
    val_ids, test_ids = np.flatnonzero(a["val_mask"]), np.flatnonzero(a["test_mask"])
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        layers.train()
        for _, out_nodes, blocks in loader:
            loss = F.cross_entropy(forward(blocks, feat[blocks[0].srcdata[dgl.NID]], True),
                                   label[out_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
        secs.append(time.perf_counter() - t0)
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            layers.eval()
            with torch.no_grad():  # full neighbourhoods: the whole graph, layer by layer
                pred = forward([g, g], feat, False).argmax(1).numpy()
            val = float((pred[val_ids] == a["label"][val_ids]).mean())
            if val > best_val:
                best_val = val
                test_at = float((pred[test_ids] == a["label"][test_ids]).mean())
    print(json.dumps({"version": dgl.__version__, "test_at_best_val": test_at,
                      "epoch_seconds": _epoch_seconds(secs), "samples": len(train),
                      "train_seconds": sum(secs)}))


def blogcatalog():
    import graphshard as gs

    root = shared_file("blogcatalog-pgl")
    edges = np.loadtxt(root / "edges.csv", delimiter=",", dtype=np.int64) - 1
    n = len(np.loadtxt(root / "nodes.csv", dtype=np.int64))
    groups = np.loadtxt(root / "group-edges.csv", delimiter=",", dtype=np.int64) - 1
    y = np.zeros((n, int(groups[:, 1].max()) + 1), dtype=np.int8)
    y[groups[:, 0], groups[:, 1]] = 1
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    return gs.graph((src, dst), num_nodes=n), y


def micro_macro_f1(emb: np.ndarray, y: np.ndarray, ratio: float, seed: int, *,
                   normalise: bool = True, solver: str = "lbfgs") -> tuple[float, float]:
    """Micro/Macro-F1 of one-vs-rest logistic regression (C = 1) trained on ``ratio`` of
    the nodes (split keyed by ``seed``), each test node given its true number of labels,
    the most probable first.  ``solver="liblinear"`` is the solver of DeepWalk's scoring
    script (sklearn's default then; it also penalises the intercept), ``"lbfgs"`` today's."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.multiclass import OneVsRestClassifier

    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    k = int(ratio * len(y))
    tr, te = perm[:k], perm[k:]
    x = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12) if normalise \
        else emb
    clf = OneVsRestClassifier(LogisticRegression(max_iter=1000, solver=solver),
                              n_jobs=1).fit(x[tr], y[tr])
    score = clf.predict_proba(x[te])
    pred = np.zeros_like(y[te])
    top = np.argsort(-score, axis=1)
    for i, c in enumerate(y[te].sum(1)):
        pred[i, top[i, :c]] = 1
    return (f1_score(y[te], pred, average="micro"), f1_score(y[te], pred, average="macro"))


#: BlogCatalog scorings, in the order of the columns of ``_walk_scores``:
#: (label, L2-normalise, solver).
WALK_SCORINGS = (("raw, lbfgs", False, "lbfgs"), ("raw, liblinear (DeepWalk's solver)", False,
                                                  "liblinear"),
                 ("L2-normalised, lbfgs", True, "lbfgs"))


def _walk_scores(e: np.ndarray, y: np.ndarray, splits: int) -> list[float]:
    """Micro, Macro (in %) of every scoring of ``WALK_SCORINGS``, mean over the splits."""
    out: list[float] = []
    for _, norm, solver in WALK_SCORINGS:
        out += list(100 * np.mean([micro_macro_f1(e, y, 0.1, s, normalise=norm, solver=solver)
                                   for s in range(splits)], axis=0))
    return out


#: ``--flag`` -> ``train_walk_embedding`` keyword of the BlogCatalog run; a flag left unset
#: passes nothing, so the run uses the library's default (``WalkOptions``).
WALK_ARGS = {"walk_len": "walk_len", "walk_times": "walk_times", "win_size": "win_size",
             "neg_num": "neg_num", "emb_size": "emb_size", "walk_lr": "lr",
             "walk_epochs": "epochs", "walk_batch": "batch_size", "negatives": "neg_distribution",
             "walk_optimizer": "optimizer", "lr_decay": "lr_decay", "end_lr": "end_lr",
             "random_window": "random_window", "sample": "subsample"}


def walk_kwargs(args: argparse.Namespace) -> dict:
    """The BlogCatalog keywords the command line sets (the rest: the library's defaults)."""
    kw = {k: getattr(args, a) for a, k in WALK_ARGS.items() if getattr(args, a) is not None}
    if args.shared_table is not None:
        kw["context_table"] = not args.shared_table
    return kw


def walk_setting(kw: dict) -> str:
    """The full setting a local run of ``kw`` uses (defaults resolved), for the table."""
    from graphshard.train import WalkOptions

    o = WalkOptions(**kw).resolve()
    return (f"walk_len {o.walk_len}, walk_times {o.walk_times}, "
            f"win {o.win_size}{' random' if o.random_window else ''}, "
            f"neg {o.neg_num} {o.neg_distribution}, d {o.emb_size}, {o.epochs} epoch(s), "
            f"batch {o.batch_size}, {o.optimizer} lr {o.lr:g}"
            f"{' linear decay' if o.lr_decay == 'linear' else ''}, "
            f"{'context table' if o.context_table else 'shared table'}, sample {o.sample:g}")


def bench_walk(args: argparse.Namespace) -> list[tuple[str, ...]]:
    from graphshard.train import train_walk_embedding

    g, y = blogcatalog()
    print(f"BlogCatalog: {g.num_nodes()} nodes, {g.num_edges()} directed edges")
    kw = walk_kwargs(args)
    runs = []  # per seed: (micro, macro) per scoring, then seconds, pairs
    for seed in args.seeds if not args.score_emb else args.score_emb:
        if args.score_emb:  # saved tables: scoring only
            e, secs, pairs = np.load(seed), float("nan"), 0
        else:
            res = train_walk_embedding(g, **kw, seed=seed)
            e, secs, pairs = res.embeddings["_N"], sum(res.seconds), res.num_pairs[0]
            if args.save_emb:
                np.save(f"{args.save_emb}-s{seed}.npy", e)
        runs.append((*_walk_scores(e, y, args.splits), secs, pairs))
        print(f"  {'seed' if not args.score_emb else 'table'} {seed}: Micro/Macro-F1 "
              + ", ".join(f"{lab} {runs[-1][2 * i]:.2f} / {runs[-1][2 * i + 1]:.2f}"
                          for i, (lab, _, _) in enumerate(WALK_SCORINGS))
              + f"; {secs:.1f} s, {pairs} pairs", flush=True)
    a = np.array(runs)
    setting = (f"{walk_setting(kw)}, {len(runs)} seed(s) x {args.splits} splits"
               if not args.score_emb else f"saved tables {args.score_emb}")

    def pm(col: int) -> str:
        return f"{a[:, col].mean():.2f} +/- {a[:, col].std():.2f}"

    ns = len(WALK_SCORINGS)
    trained = not args.score_emb
    rows = [(f"graphshard local, {lab}" + (f" ({setting})" if i == 0 else ""), pm(2 * i),
             pm(2 * i + 1), f"{a[:, 2 * ns].mean():.1f}" if i == 0 and trained else "",
             f"{int(a[0, 2 * ns + 1])}" if i == 0 and trained else "")
            for i, (lab, _, _) in enumerate(WALK_SCORINGS)]
    return [*rows, ("published DeepWalk (Perozzi et al., 10%)", "36.00", "21.30", "", "")]


_DBLP_REL = {"author-paper": "a2p", "paper-term": "p2t", "paper-venue": "p2v",
             "paper-author": "p2a", "term-paper": "t2p", "venue-paper": "v2p"}


def dblp():
    """HGB DBLP as a heterograph (relations renamed a2p, p2v, ...: metapaths join names
    with '-'), and the author labels (train: label.dat, test: label.dat.test_full)."""
    import graphshard as gs

    with zipfile.ZipFile(shared_file("hgb", "DBLP.zip")) as zf:
        info = json.loads(zf.read("DBLP/info.dat"))
        links = np.loadtxt(io.BytesIO(zf.read("DBLP/link.dat")), dtype=np.float64)
        with zf.open("DBLP/node.dat") as fh:
            heads = [ln.split(b"\t", 3)[:3] for ln in fh]
        labels = {k: np.loadtxt(io.BytesIO(zf.read(f"DBLP/{k}")), dtype=str, delimiter="\t")
                  for k in ("label.dat", "label.dat.test_full")}
    node_id = np.array([int(h[0]) for h in heads])
    node_type = np.array([int(h[2]) for h in heads])[np.argsort(node_id)]
    if np.any(np.diff(node_type) < 0):
        raise ValueError("DBLP node IDs are not grouped by type")
    counts = np.bincount(node_type)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    names = info["node.dat"]["node type"]
    src, dst, ltype = links[:, 0].astype(np.int64), links[:, 1].astype(np.int64), links[:, 2]
    data = {}
    for key, lt in info["link.dat"]["link type"].items():
        sel = ltype == int(key)
        st, dt = int(lt["start"]), int(lt["end"])
        data[(names[str(st)], _DBLP_REL[lt["meaning"]], names[str(dt)])] = (
            src[sel] - offsets[st], dst[sel] - offsets[dt])
    g = gs.heterograph(data, {names[str(i)]: int(c) for i, c in enumerate(counts)})
    split = {k: (v[:, 0].astype(np.int64), v[:, 3].astype(np.int64))
             for k, v in labels.items()}
    return g, split["label.dat"], split["label.dat.test_full"]


def bench_dblp(args: argparse.Namespace) -> list[tuple[str, ...]]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    from graphshard.train import train_walk_embedding

    g, (tr_id, tr_y), (te_id, _) = dblp()  # test_full is printed, not scored (see below)
    print(f"DBLP: {dict((t, g.num_nodes(t)) for t in g.ntypes)}, {g.num_edges()} edges; "
          f"{len(tr_id)} train / {len(te_id)} test authors")
    rows = []
    for seed in args.seeds:
        # DBLP's own fixed setting (the figures so far): Adagrad, whatever the library's
        # defaults; --walk-lr, --walk-batch, --negatives, --shared-table still apply
        res = train_walk_embedding(g, metapath="a2p-p2v-v2p-p2a", walk_len=args.dblp_walk_len,
                                   walk_times=args.dblp_walk_times, win_size=5, neg_num=5,
                                   emb_size=128, optimizer="adagrad", lr_decay="none",
                                   lr=args.walk_lr or 0.1, epochs=1,
                                   batch_size=args.walk_batch or 4096,
                                   neg_distribution=args.negatives or "degree",
                                   context_table=not args.shared_table, seed=seed,  # None: True
                                   subsample=0.0, random_window=False)  # as before issue 27
        e = res.embeddings["author"]
        x = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
        f1s = []
        for split in range(5):  # label.dat only: test_full's labels do not fit the graph
            perm = np.random.default_rng(split).permutation(len(tr_id))
            a, b = perm[:int(0.8 * len(perm))], perm[int(0.8 * len(perm)):]
            clf = LogisticRegression(max_iter=2000).fit(x[tr_id[a]], tr_y[a])
            pred = clf.predict(x[tr_id[b]])
            f1s.append((f1_score(tr_y[b], pred, average="macro"),
                        f1_score(tr_y[b], pred, average="micro")))
        ma, mi = 100 * np.mean(f1s, axis=0)
        rows.append((seed, ma, mi, sum(res.seconds), res.num_pairs[0]))
        print(f"  seed {seed}: {rows[-1]}", flush=True)
    a = np.array(rows)
    setting = (f"APVPA, walk_len {args.dblp_walk_len}, walk_times {args.dblp_walk_times}, "
               f"win 5, neg 5 {args.negatives or 'degree'}, d 128, adagrad, 1 epoch, "
               f"{len(args.seeds)} seeds")
    return [(f"graphshard metapath2vec ({setting})",
             f"{a[:, 1].mean():.2f} +/- {a[:, 1].std():.2f}",
             f"{a[:, 2].mean():.2f} +/- {a[:, 2].std():.2f}", f"{a[:, 3].mean():.1f}",
             f"{int(a[0, 4])}"),
            ("published HGB (supervised, with features): GCN", "90.84", "91.47", "", ""),
            ("published HGB: GraphSAGE / Simple-HGN", "92.53 / 94.01", "93.06 / 94.46", "",
             "")]


def _table(header: str, rows: list[tuple[str, ...]]) -> None:
    print("\n" + header)
    print("|" + "|".join("---" for _ in range(header.count("|") - 1)) + "|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["sage", "walk", "dblp"])
    p.add_argument("--datasets", nargs="+", choices=sorted(SHCHUR), default=sorted(SHCHUR))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--split-seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--parts", type=int, default=4)
    p.add_argument("--trainers", type=int, default=2)
    p.add_argument("--dgl", metavar="PYTHON", help="interpreter with dgl 2.1 (peer run)")
    p.add_argument("--dgl-worker", choices=sorted(SHCHUR), help=argparse.SUPPRESS)
    lib = " (default: the library's, graphshard.train.WalkOptions)"
    p.add_argument("--walk-len", type=int, help="nodes per walk" + lib)
    p.add_argument("--walk-times", type=int, help="walks per node" + lib)
    p.add_argument("--dblp-walk-len", type=int, default=41)
    p.add_argument("--dblp-walk-times", type=int, default=10)
    p.add_argument("--walk-lr", type=float, help="learning rate" + lib + "; DBLP: 0.1")
    p.add_argument("--walk-batch", type=int, help="pairs per step" + lib + "; DBLP: 4096")
    p.add_argument("--win-size", type=int, help="skip-gram half window (BlogCatalog)" + lib)
    p.add_argument("--neg-num", type=int, help="negatives per pair (BlogCatalog)" + lib)
    p.add_argument("--emb-size", type=int, help="embedding width (BlogCatalog)" + lib)
    p.add_argument("--walk-epochs", type=int, help="epochs (BlogCatalog)" + lib)
    p.add_argument("--walk-optimizer", choices=["auto", "adagrad", "sgd", "pair_sgd"],
                   help="optimizer (BlogCatalog)" + lib + "; sgd's lr applies to the batch "
                   "mean, pair_sgd's to every pair (word2vec)")
    p.add_argument("--lr-decay", choices=["auto", "none", "linear"],
                   help="learning-rate schedule (BlogCatalog)" + lib)
    p.add_argument("--end-lr", type=float, default=None,
                   help="last rate of --lr-decay linear (default lr * 1e-4)")
    p.add_argument("--random-window", action=argparse.BooleanOptionalAction,
                   help="word2vec's reduced window: 1..win-size per centre (BlogCatalog)" + lib)
    p.add_argument("--sample", type=float,
                   help="word2vec's subsampling of frequent nodes, 0 = off (BlogCatalog)" + lib)
    p.add_argument("--splits", type=int, default=3,
                   help="random 10%%/90%% splits scored per table (BlogCatalog; DeepWalk: 10)")
    p.add_argument("--score-emb", nargs="+", metavar="NPY",
                   help="score saved BlogCatalog tables (.npy) instead of training")
    p.add_argument("--save-emb", metavar="PREFIX",
                   help="save each seed's BlogCatalog table as PREFIX-s<seed>.npy")
    p.add_argument("--negatives", choices=["uniform", "degree"],
                   help="negative distribution" + lib + "; DBLP: degree")
    p.add_argument("--threads", type=int, default=2, help="torch threads of this process")
    p.add_argument("--shared-table", action=argparse.BooleanOptionalAction,
                   help="score contexts against the node table (PGL's), or with "
                   "--no-shared-table against a context table (word2vec's)" + lib
                   + "; DBLP: a context table")
    args = p.parse_args()
    if args.dgl_worker:
        dgl_worker(args)
        return
    import numba
    import torch

    import graphshard as gs

    torch.set_num_threads(args.threads)
    print(f"graphshard {gs.__version__}, torch {torch.__version__}, numba {numba.__version__}, "
          f"python {platform.python_version()}, threads {torch.get_num_threads()}; "
          f"{' '.join(sys.argv[1:])}", flush=True)
    if args.only in (None, "sage"):
        _table("| dataset | run | test acc % (best val, mean +/- sd over seeds) | epoch s "
               "(median) | epoch time / 1-process | samples/s |", bench_sage(args))
    if args.only in (None, "walk"):
        _table("| run | Micro-F1 % | Macro-F1 % | train s | pairs |", bench_walk(args))
    if args.only in (None, "dblp"):
        _table("| run | Macro-F1 % | Micro-F1 % | train s | pairs |", bench_dblp(args))


if __name__ == "__main__":
    main()
