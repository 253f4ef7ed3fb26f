"""Published accuracy with the documented commands: ours beside the paper's figure.

Each row trains one of graphshard's trainers on a real graph from ``../shared/data`` with
the documented call, for several seeds (the seed also draws the split where the paper's
protocol is random splits), and prints the mean and standard deviation beside the published
mean +- sd and its source.  Settings per row: ``default`` (the trainer's own defaults) and
the paper's ``preset`` (:mod:`graphshard.train.presets`).  ``--trainers 1,2`` runs each
setting in one process and with 2 trainers (Ray actors, DDP) on 4 METIS parts of the same
graph (``partition_graph`` then ``train_*(config, num_trainers=2)``), the two side by side.

    python benchmarks/bench_reproduce.py                          # every row, 3 seeds, 1 process
    python benchmarks/bench_reproduce.py --rows cs,photo --seeds 2 --settings preset
    python benchmarks/bench_reproduce.py --rows dblp-rgcn --trainers 1,2

Rows (published figures as ``../shared/data/*/README.md`` quotes them):

- ``cora``, ``citeseer``: GraphSAGE-mean on Shchur et al.'s npz with their random split
  (20 training and 30 validation nodes per class) and their graph standardisation (every
  edge both ways, the largest connected component: ``undirected=True,
  largest_component=True``); Shchur et al. 2018, Table 1.
- ``cora-planetoid``, ``citeseer-planetoid``: GraphSAGE-mean on Planetoid's fixed split (20
  per class, 500 validation, 1000 test), beside GCN's published figure on that split (Kipf
  and Welling 2017, Table 2: the only published figure the data's README holds for it); the
  preset is ``shchur``, whose lr, L2 and dropout are Kipf and Welling's.  PubMed is not a
  row: the copy here lacks ``ind.pubmed.allx`` (features of 18,657 of its nodes).
- ``computers``, ``photo``, ``cs``: the same as ``cora`` on Amazon Computers / Photo and
  Coauthor CS.
- ``dblp-rgcn``, ``dblp-hgt``: R-GCN / HGT Macro-F1 on HGB DBLP, HGB's split; HGB (Lv et
  al. 2021) as quoted by ``hgb/README.md``; the preset is ``hgb``.
- ``acm-rgcn``, ``acm-hgt``: the same on HGB ACM (that README quotes no R-GCN or HGT figure
  for ACM: ours only).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _shared import shared_file


@dataclass(frozen=True)
class Row:
    """One dataset and trainer.

    ``load(seed)`` gives the graph (the seed draws a random split where the protocol has
    one) and the trainer's fixed arguments; ``trainer`` is ``"sage"`` or ``"hetero"``;
    ``score`` the result's attribute that is reported, in percent."""

    name: str
    what: str
    load: Callable[[int], tuple[Any, dict[str, Any]]]
    trainer: str
    score: str
    published: tuple[float, float | None] | None  # mean, sd (None: the source gives none)
    source: str
    preset: tuple[str, str] | None  # (preset, task) of graphshard.train.preset


def _shchur_row(name: str, what: str, parts: tuple[str, ...], published: tuple[float, float],
                ) -> Row:
    def load(seed: int) -> tuple[Any, dict[str, Any]]:
        from graphshard.datasets import load_shchur_npz

        return load_shchur_npz(shared_file(*parts), split_seed=seed, undirected=True,
                               largest_component=True), {}

    return Row(name, what, load, "sage", "test_at_best_val", published,
               "Shchur et al. 2018, Table 1 (GraphSAGE-mean)", ("shchur", "sage"))


def _planetoid_row(name: str, what: str, published: tuple[float, None]) -> Row:
    def load(seed: int) -> tuple[Any, dict[str, Any]]:
        from graphshard.datasets import load_planetoid

        ds = load_planetoid(shared_file("planetoid"), name=name.split("-")[0],
                            sparse_features=False)
        return ds.graph, {}

    return Row(name, what, load, "sage", "test_at_best_val", published,
               "Kipf & Welling 2017, Table 2 (GCN; fixed split)", ("shchur", "sage"))


def _hgb_row(name: str, what: str, file: str, model: str,
             published: tuple[float, float | None] | None, source: str) -> Row:
    def load(seed: int) -> tuple[Any, dict[str, Any]]:
        from graphshard.datasets import load_hgb

        ds = load_hgb(shared_file("hgb", file))
        return ds.graph, {"target": ds.target, "model": model}

    return Row(name, what, load, "hetero", "test_macro_f1", published, source, ("hgb", model))


_HGB = "HGB (Lv et al. 2021) via hgb/README.md"
ROWS = [
    _shchur_row("cora", "GraphSAGE, Cora (Shchur split)",
                ("planetoid", "npz_shchur", "cora.npz"), (79.2, 7.7)),
    _shchur_row("citeseer", "GraphSAGE, CiteSeer (Shchur split)",
                ("planetoid", "npz_shchur", "citeseer.npz"), (71.6, 1.9)),
    _planetoid_row("cora-planetoid", "GraphSAGE, Cora (Planetoid split)", (81.5, None)),
    _planetoid_row("citeseer-planetoid", "GraphSAGE, CiteSeer (Planetoid split)", (70.3, None)),
    _shchur_row("computers", "GraphSAGE, Amazon Computers",
                ("gnn-benchmark-shchur", "amazon-computers.zip"), (82.4, 1.8)),
    _shchur_row("photo", "GraphSAGE, Amazon Photo",
                ("gnn-benchmark-shchur", "amazon-photo.zip"), (91.4, 1.3)),
    _shchur_row("cs", "GraphSAGE, Coauthor CS", ("gnn-benchmark-shchur", "coauthor-cs.zip"),
                (91.3, 2.8)),
    _hgb_row("dblp-rgcn", "R-GCN Macro-F1, HGB DBLP", "DBLP.zip", "rgcn", (91.52, 0.50), _HGB),
    _hgb_row("dblp-hgt", "HGT Macro-F1, HGB DBLP", "DBLP.zip", "hgt", (93.01, 0.23), _HGB),
    _hgb_row("acm-rgcn", "R-GCN Macro-F1, HGB ACM", "ACM.zip", "rgcn", None,
             "no published R-GCN figure in hgb/README.md"),
    _hgb_row("acm-hgt", "HGT Macro-F1, HGB ACM", "ACM.zip", "hgt", None,
             "no published HGT figure for ACM in hgb/README.md"),
]


def run(row: Row, seed: int, setting: str, trainers: int, work: Path) -> float:
    """One training run of ``row``: its score in percent."""
    import graphshard as gs
    from graphshard.train import preset, train_hetero, train_sage

    graph, fixed = row.load(seed)
    kw = dict(fixed)
    if setting == "preset" and row.preset is not None:
        kw = preset(*row.preset, **kw)
    train = train_sage if row.trainer == "sage" else train_hetero
    if trainers == 1:
        res = train(graph, seed=seed, **kw)
    else:
        out = work / f"{row.name}-{seed}"
        gs.partition_graph(graph, row.name, 4, str(out))
        res = train(str(out / f"{row.name}.json"), num_trainers=trainers, seed=seed, **kw)
    return 100.0 * float(getattr(res, row.score))


def _fmt(scores: list[float]) -> str:
    if not scores:
        return "-"
    sd = statistics.stdev(scores) if len(scores) > 1 else math.nan
    return f"{statistics.fmean(scores):.1f} +- {sd:.1f} (n={len(scores)})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="", help="comma-separated row names (default: all): "
                    + ", ".join(r.name for r in ROWS))
    ap.add_argument("--seeds", type=int, default=3, help="seeds per row and setting")
    ap.add_argument("--settings", default="default,preset",
                    help="which settings to run, of default and preset (default: both)")
    ap.add_argument("--trainers", default="1",
                    help="comma-separated trainer counts: 1 (one process) and/or N (N trainers "
                    "on 4 parts; default 1)")
    ap.add_argument("--json", type=Path, help="also write the scores here")
    args = ap.parse_args(argv)
    wanted = [s for s in args.rows.split(",") if s]
    unknown = sorted(set(wanted) - {r.name for r in ROWS})
    if unknown:
        ap.error(f"unknown rows {unknown}; rows: {[r.name for r in ROWS]}")
    settings = [s for s in args.settings.split(",") if s]
    if set(settings) - {"default", "preset"}:
        ap.error(f"settings are default and preset, got {args.settings!r}")
    try:
        counts = [int(t) for t in args.trainers.split(",") if t]
    except ValueError:
        ap.error(f"--trainers takes integers, got {args.trainers!r}")
    if not counts or min(counts) < 1:
        ap.error(f"--trainers takes counts >= 1, got {args.trainers!r}")
    if max(counts) > 1:  # one Ray for every run (each team would otherwise start its own)
        import ray

        from graphshard.runtime.ray import init_ray

        init_ray(ray, include_dashboard=False, log_to_driver=False)
    out: dict[str, dict[str, list[float]]] = {}
    lines = ["| row | setting | trainers | ours | published | gap | source |",
             "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="reproduce") as tmp:
        for row in ROWS:
            if wanted and row.name not in wanted:
                continue
            for setting in settings:
                for trainers in counts:
                    scores = []
                    for seed in range(args.seeds):
                        t = time.perf_counter()
                        scores.append(run(row, seed, setting, trainers, Path(tmp)))
                        print(f"{row.name} {setting} trainers={trainers} seed {seed}: "
                              f"{scores[-1]:.2f} ({time.perf_counter() - t:.0f} s)",
                              file=sys.stderr, flush=True)
                    out.setdefault(row.name, {})[f"{setting}/{trainers}"] = scores
                    pub = row.published
                    gap = "-" if pub is None else f"{statistics.fmean(scores) - pub[0]:+.1f}"
                    published = ("-" if pub is None else f"{pub[0]}" if pub[1] is None
                                 else f"{pub[0]} +- {pub[1]}")
                    lines.append(f"| {row.what} | {setting} | {trainers} | {_fmt(scores)} | "
                                 f"{published} | {gap} | {row.source} |")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
