"""Balance on every constraint (issue 30, row 2): METIS multi-constraint as it comes out of
METIS, against graphshard's ``metis`` method (the same METIS call, then
``enforce_balance`` repairing every column), with a train mask as ``balance_ntypes`` and
optionally the in-edges column of ``balance_edges``, at ``imbalance`` 3%.

    python benchmarks/bench_balance.py                        # CS, DBLP, ACM; k 4 8 16
    python benchmarks/bench_balance.py --graphs acm --k 8 --balance-edges

Each row: the worst column's balance (the heaviest part over the average, per column),
that column, the cut as a share of the adjacency entries, and for graphshard whether a
"balance not met" warning was logged ("-": every column within its limit, which for a
column of few nodes is the average rounded up, "yes": a warning names the columns over
and by how much, "NO": over without a warning).  The columns are the ones
``partition_graph(balance_ntypes=..., balance_edges=...)`` builds
(:func:`graphshard.partition.constraints.balance_weights`): one 0/1 column per label, the
label being the train mask (as in issue 30), or node type x train mask with ``--by-type``
(the train nodes and each type spread evenly), plus each node's in-degree with
``--balance-edges``.  Graphs from ``../shared/data``:
Coauthor CS (train mask: Shchur's 20 per class, split seed 0), HGB DBLP and ACM (their
``train_mask``).  Not timed: METIS takes under 2 s on each.
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np

from _shared import shared_file


def load(name: str, by_type: bool):
    """``(homogeneous src, dst, num_nodes, labels)`` of a graph: labels the train mask, or
    node type x train mask with ``by_type``."""
    import graphshard as gs

    if name == "cs":
        from bench_train import shchur_split

        g = gs.datasets.load_shchur_npz(shared_file("gnn-benchmark-shchur", "coauthor-cs.zip"))
        train, _ = shchur_split(np.asarray(g.ndata["label"]), 0)
        masks = [train]
    else:
        g = gs.datasets.load_hgb(shared_file("hgb", f"{name.upper()}.zip"), features=False).graph
        masks = [np.asarray(g.nodes[t].data["train_mask"]) if "train_mask" in g.nodes[t].data
                 else np.zeros(g.num_nodes(t), bool) for t in g.ntypes]
    labels = np.concatenate([2 * t * by_type + m.astype(np.int64) for t, m in enumerate(masks)])
    src, dst, _ = g.homogeneous_edges()
    return np.asarray(src), np.asarray(dst), g.num_nodes(), labels


class Warnings(logging.Handler):
    """Collects graphshard's "balance not met" warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "balance not met" in record.getMessage():
            self.messages.append(record.getMessage())


def worst(adj, parts: np.ndarray, k: int, imbalance: float) -> tuple[float, int, bool]:
    """The largest part weight over the average among all columns, that column, and
    whether every column is within its limit (``max_part_weight``: ``(1 + imbalance)``
    times the average, rounded down, but at least the average rounded up)."""
    from graphshard.partition.balance import max_part_weight

    w = np.asarray(adj.vertex_weights).reshape(adj.num_nodes, -1).astype(np.int64)
    sums = np.zeros((k, w.shape[1]), dtype=np.int64)
    np.add.at(sums, parts, w)
    total = sums.sum(axis=0)
    limits = np.array([max_part_weight(int(t), k, imbalance) for t in total])
    ratio = sums.max(axis=0) / np.maximum(total / k, 1e-12)
    return float(ratio.max()), int(ratio.argmax()), bool((sums <= limits).all())


def cut_share(adj, parts: np.ndarray) -> float:
    rows = np.repeat(np.arange(adj.num_nodes), np.diff(adj.indptr))
    return float(np.mean(parts[rows] != parts[adj.indices]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", nargs="+", default=["cs", "dblp", "acm"],
                   choices=["cs", "dblp", "acm"])
    p.add_argument("--k", nargs="+", type=int, default=[4, 8, 16])
    p.add_argument("--imbalance", type=float, default=0.03)
    p.add_argument("--balance-edges", action=argparse.BooleanOptionalAction, default=None,
                   help="only with (or without) the in-edges column (default: both)")
    p.add_argument("--by-type", action="store_true",
                   help="one column per node type x train mask (default: train mask only)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    from graphshard.partition.adjacency import symmetric_adjacency
    from graphshard.partition.constraints import balance_weights
    from graphshard.partition.methods import METHODS, MethodOptions, run_method

    handler = Warnings()
    logging.getLogger("graphshard").addHandler(handler)
    edges_opts = [False, True] if args.balance_edges is None else [args.balance_edges]
    print(f"labels: {'node type x ' if args.by_type else ''}train mask; "
          f"imbalance {args.imbalance}, seed {args.seed}; balance = heaviest part / average, "
          "worst column; cut = share of adjacency entries")
    print("| graph | k | edges col | columns | METIS balance (col) | METIS cut | "
          "graphshard balance (col) | graphshard cut | cut ratio | warning | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.graphs:
        src, dst, n, labels = load(name, args.by_type)
        base = symmetric_adjacency(src, dst, n)
        for balance_edges in edges_opts:
            w = balance_weights(n, np.bincount(dst, minlength=n), balance_ntypes=labels,
                                balance_edges=balance_edges)
            adj = base.with_vertex_weights(w)
            for k in args.k:
                opts = MethodOptions(imbalance=args.imbalance, seed=args.seed)
                raw = np.asarray(METHODS["metis"].fn(adj, k, opts))  # METIS alone
                handler.messages.clear()
                t0 = time.perf_counter()
                ours = np.asarray(run_method(adj, k, "metis", opts))  # + enforce_balance
                secs = time.perf_counter() - t0
                (rb, rc, _), (ob, oc, within) = (worst(adj, raw, k, args.imbalance),
                                                 worst(adj, ours, k, args.imbalance))
                rcut, ocut = cut_share(adj, raw), cut_share(adj, ours)
                # "-": within every limit; "yes": over, and said so; "NO": over, silently
                warned = "yes" if handler.messages else ("-" if within else "NO")
                print(f"| {name} | {k} | {'yes' if balance_edges else 'no'} | {w.shape[1]} | "
                      f"{rb:.3f} ({rc}) | {rcut:.4f} | {ob:.3f} ({oc}) | {ocut:.4f} | "
                      f"{ocut / rcut:.3f} | {warned} | {secs:.1f} |", flush=True)
                for msg in handler.messages:
                    print(f"    warning: {msg}")


if __name__ == "__main__":
    main()
