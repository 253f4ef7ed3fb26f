"""Table of a harness JSON-lines file: each peer beside DGL and pymetis, as ratios.

    python benchmarks/partition_table.py /tmp/graphshard-bench/partition.jsonl
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict


def main(path: str) -> None:
    rows: dict[tuple[str, int], dict[str, dict]] = defaultdict(dict)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("{") and '"peer"' in line:
                r = json.loads(line)
                if r.get("rc") == 0 and r.get("edge_cut") is not None:
                    rows[(r["graph"], r["k"])][r["peer"]] = r
    ratios: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    print("| graph | k | peer | wall s | peak MB | edge cut | balance | time/DGL | RSS/DGL "
          "| cut/DGL | cut/pymetis |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (graph, k), peers in sorted(rows.items()):
        dgl, pym = peers.get("dgl-metis"), peers.get("pymetis")
        for name, r in sorted(peers.items()):
            cells = []
            for ref, key in ((dgl, "wall_s"), (dgl, "peak_rss_mb"), (dgl, "edge_cut"),
                             (pym, "edge_cut")):
                value = r[key] / ref[key] if ref and ref[key] else None
                cells.append("-" if value is None else f"{value:.2f}")
                if value and name.startswith("graphshard"):
                    ratios[name][f"{key}/{'dgl' if ref is dgl else 'pymetis'}"].append(value)
            print(f"| {graph} | {k} | {name} | {r['wall_s']:.1f} | {r['peak_rss_mb']:.0f} | "
                  f"{r['edge_cut']:,} | {r['balance']:.3f} | " + " | ".join(cells) + " |")
    for name, groups in ratios.items():
        means = ", ".join(f"{k} {math.exp(sum(map(math.log, v)) / len(v)):.2f}"
                          for k, v in groups.items())
        print(f"\ngeometric means for {name}: {means}")


if __name__ == "__main__":
    main(sys.argv[1])
