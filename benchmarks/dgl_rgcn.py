"""DGL 2.1's R-GCN on an HGB dataset, mini-batch: the peer side of the R-GCN epoch-time row.

    DGLBACKEND=pytorch /tmp/venv-dgl/bin/python benchmarks/dgl_rgcn.py \
        ../shared/data/hgb/DBLP.zip --fanouts 10,10 --hidden 64 --batch-size 256 --epochs 5

Runs in the DGL venv of ``../shared/bench/README.md`` (torch 2.2.1, dgl 2.1.0) and imports
nothing of graphshard.  The model is the relational GCN of DGL's ``rgcn-hetero`` example: a
linear projection per node type (a learnable embedding for a type without features), then
``--layers`` of ``HeteroGraphConv({rel: GraphConv(norm="right")}, aggregate="sum")`` with a
self-loop weight, ReLU and dropout, trained with DGL's ``NeighborSampler`` over the labelled
nodes of HGB's label.dat (a seeded 20% held out for validation, as HGB does) and evaluated on
label.dat.test with full neighbourhoods (the copy's label.dat.test_full disagrees with both
label.dat and label.dat.test: chance-level agreement, so it is not used).  Prints one JSON
line: seconds per training epoch (sampling, feature gathering, steps; no evaluation),
seconds of each epoch's evaluation (validation and test nodes, full neighbourhoods),
Micro/Macro-F1 at the best validation epoch, and the versions.
"""

from __future__ import annotations

import argparse
import io
import json
import time
import zipfile

import numpy as np


def read_hgb(path: str) -> dict:
    """Nodes by type (features where present), links by type, labels and the HGB split."""
    with zipfile.ZipFile(path) as zf:
        root = zf.namelist()[0].split("/")[0]
        node_lines = zf.read(f"{root}/node.dat").decode().splitlines()
        links = np.loadtxt(io.BytesIO(zf.read(f"{root}/link.dat")), dtype=np.float64,
                           ndmin=2)
        labels = [zf.read(f"{root}/{n}").decode().splitlines()
                  for n in ("label.dat", "label.dat.test")]
    ntype = np.array([int(line.split("\t")[2]) for line in node_lines])
    feats: dict[int, list] = {}
    for line in node_lines:
        parts = line.split("\t")
        if len(parts) > 3 and parts[3]:
            feats.setdefault(int(parts[2]), []).append(
                np.array(parts[3].split(","), dtype=np.float32))
    offsets = {t: int(np.flatnonzero(ntype == t)[0]) for t in np.unique(ntype)}
    out = {"ntype": ntype, "offsets": offsets, "links": links,
           "feats": {t: np.stack(v) for t, v in feats.items()}}
    for key, lines in zip(("trainval", "test"), labels, strict=True):
        rows = [line.split("\t") for line in lines if line.strip()]
        out[key] = (np.array([int(r[0]) for r in rows]), np.array([int(r[3].split(",")[0])
                                                                    for r in rows]))
    return out


def f1_scores(pred: np.ndarray, true: np.ndarray, num_classes: int) -> tuple[float, float]:
    """Micro- and Macro-F1 of single-label predictions."""
    conf = np.bincount(true * num_classes + pred, minlength=num_classes ** 2).reshape(
        num_classes, num_classes)
    tp = np.diag(conf).astype(float)
    fp, fn = conf.sum(0) - tp, conf.sum(1) - tp
    micro = tp.sum() / max(tp.sum() + 0.5 * (fp.sum() + fn.sum()), 1e-12)
    per = np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1e-12), 0.0)
    return float(micro), float(per.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("zip")
    ap.add_argument("--fanouts", default="10,10", help="per layer, input layer first")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print every training loss")
    args = ap.parse_args()

    import dgl
    import dgl.nn as dglnn
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = read_hgb(args.zip)
    ntype, offsets, links = data["ntype"], data["offsets"], data["links"]
    names = {t: f"t{t}" for t in offsets}
    edges = {}
    for r in np.unique(links[:, 2]).astype(int):
        sel = links[links[:, 2] == r]
        s, d = sel[:, 0].astype(np.int64), sel[:, 1].astype(np.int64)
        st, dt = int(ntype[s[0]]), int(ntype[d[0]])
        edges[(names[st], f"r{r}", names[dt])] = (torch.from_numpy(s - offsets[st]),
                                                   torch.from_numpy(d - offsets[dt]))
    counts = {names[t]: int((ntype == t).sum()) for t in offsets}
    g = dgl.heterograph(edges, num_nodes_dict=counts)
    ids, y = data["trainval"]
    target = int(ntype[ids[0]])
    tname = names[target]
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(len(ids))
    n_val = round(0.2 * len(ids))
    val_i, train_i = perm[:n_val], perm[n_val:]
    test_ids, test_y = data["test"]
    num_classes = int(max(y.max(), test_y.max())) + 1
    labels = torch.full((counts[tname],), -1, dtype=torch.long)
    labels[ids - offsets[target]] = torch.from_numpy(y)
    labels[test_ids - offsets[target]] = torch.from_numpy(test_y)
    feats = {names[t]: torch.from_numpy(x) for t, x in data["feats"].items()}

    class RGCN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            h = args.hidden
            self.proj = nn.ModuleDict({k: nn.Linear(v.shape[1], h) for k, v in feats.items()})
            self.emb = nn.ModuleDict({k: nn.Embedding(n, h) for k, n in counts.items()
                                      if k not in feats})
            dims = [h] * len(args.fanouts.split(",")) + [num_classes]
            self.layers = nn.ModuleList(
                dglnn.HeteroGraphConv({rel: dglnn.GraphConv(dims[i], dims[i + 1], norm="right",
                                                            allow_zero_in_degree=True)
                                       for _, rel, _ in g.canonical_etypes}, aggregate="sum")
                for i in range(len(dims) - 1))
            self.loops = nn.ModuleList(nn.Linear(dims[i], dims[i + 1])
                                       for i in range(len(dims) - 1))

        def forward(self, blocks: list, input_nodes: dict) -> dict:
            h = {k: (self.proj[k](feats[k][v]) if k in feats else self.emb[k](v))
                 for k, v in input_nodes.items()}
            for i, (layer, loop, block) in enumerate(zip(self.layers, self.loops, blocks,
                                                         strict=True)):
                out = layer(block, h)
                h = {k: out.get(k, 0) + loop(h[k][:block.num_dst_nodes(k)])
                     for k in block.dsttypes if block.num_dst_nodes(k) > 0}
                if i < len(self.layers) - 1:
                    h = {k: F.dropout(F.relu(v), args.dropout, self.training)
                         for k, v in h.items()}
            return h

    model = RGCN()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    fan = [int(f) for f in args.fanouts.split(",")]
    train_nodes = {tname: torch.from_numpy(ids[train_i] - offsets[target])}
    loader = dgl.dataloading.DataLoader(g, train_nodes, dgl.dataloading.NeighborSampler(fan),
                                        batch_size=args.batch_size, shuffle=True)
    full = dgl.dataloading.MultiLayerFullNeighborSampler(len(fan))

    def predict(nodes: np.ndarray) -> np.ndarray:
        model.eval()
        pred = np.empty(counts[tname], dtype=np.int64)
        with torch.no_grad():  # DGL's loader may reorder output nodes: scatter by their IDs
            for inp, out_nodes, blocks in dgl.dataloading.DataLoader(
                    g, {tname: torch.from_numpy(nodes - offsets[target])}, full,
                    batch_size=1024):
                pred[out_nodes[tname].numpy()] = model(blocks, inp)[tname].argmax(1).numpy()
        model.train()
        return pred[nodes - offsets[target]]

    seconds, eval_seconds, val_f1, test_f1 = [], [], [], []
    for _ in range(args.epochs):
        t = time.perf_counter()
        for inp, out_nodes, blocks in loader:
            logits = model(blocks, inp)[tname]
            loss = F.cross_entropy(logits, labels[out_nodes[tname]])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if args.verbose:
                print(float(loss))
        seconds.append(time.perf_counter() - t)
        t = time.perf_counter()
        val_f1.append(f1_scores(predict(ids[val_i]), y[val_i], num_classes))
        test_f1.append(f1_scores(predict(test_ids), test_y, num_classes))
        eval_seconds.append(time.perf_counter() - t)
        if args.verbose:
            print("train", f1_scores(predict(ids[train_i]), y[train_i], num_classes),
                  "val", val_f1[-1], "test", test_f1[-1])
    best = int(np.argmax([v[0] for v in val_f1]))
    print(json.dumps({"peer": f"dgl {dgl.__version__} R-GCN (HeteroGraphConv)",
                      "torch": torch.__version__, "threads": args.threads,
                      "epoch_seconds": seconds, "median_epoch_seconds": float(np.median(seconds)),
                      "eval_seconds": eval_seconds,
                      "best_epoch": best, "test_micro_f1": test_f1[best][0],
                      "test_macro_f1": test_f1[best][1], "args": vars(args)}))


if __name__ == "__main__":
    main()
