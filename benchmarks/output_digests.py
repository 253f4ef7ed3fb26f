"""Digests of what the engine writes and samples, to compare two trees after a refactor.

Run it on each tree (e.g. a ``git worktree`` of the old commit with ``PYTHONPATH=<tree>/src``)
and compare the two JSON files: the pipeline's part files (lp, hash), the in-memory part
files (metis, hash), a block sample and a walk, on a seeded R-MAT.  Equal digests mean the
refactor changed no output byte.

    python benchmarks/output_digests.py --out /tmp/new.json
    PYTHONPATH=../old/src python benchmarks/output_digests.py --out /tmp/old.json
    python benchmarks/output_digests.py --compare /tmp/old.json /tmp/new.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np


def _part_files(config_path: str | Path) -> dict[str, object]:
    cfg = json.loads(Path(config_path).read_text())
    return {"edge_cut": cfg["graphshard"]["report"]["edge_cut"],
            "files": {k: v["sha256"] for k, v in sorted(cfg["graphshard"]["files"].items())}}


def digests(spec: str, work: Path) -> dict[str, object]:
    """The digests of one run (see the module's text)."""
    import graphshard as gs

    res: dict[str, object] = {"graphshard": gs.__file__, "graph": spec}
    g = gs.datasets.from_spec(spec)
    gs.io.write_chunked(g, work / "chunked", 4)
    for method, options in (("lp", {"seed": 1}), ("hash", None)):
        r = gs.pipeline.run_pipeline(work / "chunked", 8, work / f"pipeline-{method}",
                                     method=method, assign_options=options)
        res[f"pipeline {method}"] = _part_files(r.partitions.config_path)
    for method in ("metis", "hash"):
        r = gs.partition.build_partitions(g, "g", 4, work / f"memory-{method}",
                                          part_method=method)
        res[f"in-memory {method}"] = _part_files(r.config_path)
    seeds = np.arange(0, g.num_nodes(), 97)
    blocks = gs.sampling.sample_blocks(g, seeds, [10, 5], seed=11)
    h = hashlib.sha256()
    for block in blocks.blocks:
        for et in sorted(block.src):
            h.update(np.ascontiguousarray(block.src[et]).tobytes())
            h.update(np.ascontiguousarray(block.eids[et]).tobytes())
    res["blocks [10, 5]"] = h.hexdigest()
    walks = gs.sampling.random_walk(g, seeds, walk_len=8, seed=5)
    res["walks"] = hashlib.sha256(np.ascontiguousarray(
        getattr(walks, "traces", walks)).tobytes()).hexdigest()
    return res


def compare(a_path: Path, b_path: Path) -> int:
    """Print one line per output, SAME or DIFFERENT; exit status 1 if any differs."""
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    differ = 0
    for key in a:
        if key == "graphshard":
            continue
        same = a[key] == b.get(key)
        differ += not same
        cut = (f"  edge cut {a[key]['edge_cut']:,} / {b[key]['edge_cut']:,}"
               if isinstance(a[key], dict) and isinstance(b.get(key), dict) else "")
        print(f"{key:22s} {'SAME' if same else 'DIFFERENT'}{cut}")
    print(f"{a['graphshard']} vs {b['graphshard']}")
    return 1 if differ else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", default="rmat:nodes=50000,edges=400000,seed=3")
    p.add_argument("--out", type=Path, help="Write the digests here (JSON).")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    with tempfile.TemporaryDirectory() as work:
        res = digests(args.graph, Path(work))
    text = json.dumps(res, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
