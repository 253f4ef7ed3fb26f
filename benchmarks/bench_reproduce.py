"""Published accuracy with the documented commands: ours beside the paper's figure.

Each row trains one of graphshard's trainers on a real graph from ``../shared/data`` with
the documented call, for several seeds (the seed also draws the split where the paper's
protocol is random splits), and prints the mean and standard deviation beside the published
mean +- sd and its source.  Settings per row: ``default`` (the trainer's own defaults) and,
where one exists, the paper's ``preset`` (:mod:`graphshard.train.presets`).

    python benchmarks/bench_reproduce.py                          # every row, 3 seeds
    python benchmarks/bench_reproduce.py --rows cs,photo --seeds 2 --settings preset

Rows (published figures as ``../shared/data/*/README.md`` quotes them):

- ``cora``, ``citeseer``: GraphSAGE-mean on Shchur et al.'s npz with their random split
  (20 training and 30 validation nodes per class) and their graph standardisation
  (``undirected=True``); Shchur et al. 2018, Table 1.
- ``computers``, ``photo``, ``cs``: the same on Amazon Computers / Photo and Coauthor CS.
  (Shchur et al. also keep only the largest connected component; we train on every node.)
- ``dblp-rgcn``, ``dblp-hgt``: R-GCN / HGT Macro-F1 on HGB DBLP, HGB's split; HGB (Lv et al.
  2021) as quoted by ``hgb/README.md``.
- ``acm-rgcn``: R-GCN on HGB ACM (no published R-GCN figure in that README: ours only).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _shared import shared_file


@dataclass(frozen=True)
class Row:
    """One dataset and trainer: ``run(seed, setting) -> score`` in percent."""

    name: str
    what: str
    run: Callable[[int, str], float]
    published: tuple[float, float] | None
    source: str
    settings: tuple[str, ...] = ("default",)


def _sage_row(name: str, what: str, parts: tuple[str, ...], published: tuple[float, float],
              ) -> Row:
    def run(seed: int, setting: str) -> float:
        from graphshard.datasets import load_shchur_npz
        from graphshard.train import preset, train_sage

        g = load_shchur_npz(shared_file(*parts), split_seed=seed, undirected=True)
        kw = preset("shchur", "sage") if setting == "preset" else {}
        res = train_sage(g, seed=seed, **kw)
        return 100.0 * res.test_at_best_val

    return Row(name, what, run, published, "Shchur et al. 2018, Table 1 (GraphSAGE-mean)",
               ("default", "preset"))


def _hgb_row(name: str, what: str, file: str, model: str,
             published: tuple[float, float] | None, source: str) -> Row:
    def run(seed: int, setting: str) -> float:
        from graphshard.datasets import load_hgb
        from graphshard.train import train_hetero

        ds = load_hgb(shared_file("hgb", file))
        res = train_hetero(ds.graph, target=ds.target, model=model, seed=seed)
        return 100.0 * res.test_macro_f1

    return Row(name, what, run, published, source)


ROWS = [
    _sage_row("cora", "GraphSAGE, Cora (Shchur split)", ("planetoid", "npz_shchur", "cora.npz"),
              (79.2, 7.7)),
    _sage_row("citeseer", "GraphSAGE, CiteSeer (Shchur split)",
              ("planetoid", "npz_shchur", "citeseer.npz"), (71.6, 1.9)),
    _sage_row("computers", "GraphSAGE, Amazon Computers",
              ("gnn-benchmark-shchur", "amazon-computers.zip"), (82.4, 1.8)),
    _sage_row("photo", "GraphSAGE, Amazon Photo", ("gnn-benchmark-shchur", "amazon-photo.zip"),
              (91.4, 1.3)),
    _sage_row("cs", "GraphSAGE, Coauthor CS", ("gnn-benchmark-shchur", "coauthor-cs.zip"),
              (91.3, 2.8)),
    _hgb_row("dblp-rgcn", "R-GCN Macro-F1, HGB DBLP", "DBLP.zip", "rgcn", (91.52, 0.50),
             "HGB (Lv et al. 2021) via hgb/README.md"),
    _hgb_row("dblp-hgt", "HGT Macro-F1, HGB DBLP", "DBLP.zip", "hgt", (93.01, 0.23),
             "HGB (Lv et al. 2021) via hgb/README.md"),
    _hgb_row("acm-rgcn", "R-GCN Macro-F1, HGB ACM", "ACM.zip", "rgcn", None,
             "no published R-GCN figure in hgb/README.md"),
]


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
    ap.add_argument("--json", type=Path, help="also write the scores here")
    args = ap.parse_args(argv)
    wanted = [s for s in args.rows.split(",") if s]
    unknown = sorted(set(wanted) - {r.name for r in ROWS})
    if unknown:
        ap.error(f"unknown rows {unknown}; rows: {[r.name for r in ROWS]}")
    settings = [s for s in args.settings.split(",") if s]
    out: dict[str, dict[str, list[float]]] = {}
    lines = ["| row | setting | ours | published | gap | source |", "|---|---|---|---|---|---|"]
    for row in ROWS:
        if wanted and row.name not in wanted:
            continue
        for setting in (s for s in settings if s in row.settings):
            scores = []
            for seed in range(args.seeds):
                t = time.perf_counter()
                scores.append(row.run(seed, setting))
                print(f"{row.name} {setting} seed {seed}: {scores[-1]:.2f} "
                      f"({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
            out.setdefault(row.name, {})[setting] = scores
            pub = row.published
            gap = "-" if pub is None else f"{statistics.fmean(scores) - pub[0]:+.1f}"
            lines.append(f"| {row.what} | {setting} | {_fmt(scores)} | "
                         f"{'-' if pub is None else f'{pub[0]} +- {pub[1]}'} | {gap} | "
                         f"{row.source} |")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
