"""Seeded mutation fuzzing of read_metis: plain, vertex/edge-weighted and multi-constraint
``.graph`` files, and gzip bytes (issue 24)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from fuzz_graph import graph_problem

from fuzzing import mutate_bytes, mutate_text, run_fuzz
from graphshard.io import read_metis

GRAPHS = [
    "% triangle plus a tail\n4 4\n2 3\n1 3\n1 2 4\n3\n",
    "4 4 001\n2 5 3 1\n1 5 3 2\n1 1 2 2 4 7\n3 7\n",
    "4 4 011 2\n1 9 2 5 3 1\n2 8 1 5 3 2\n3 7 1 1 2 2 4 7\n4 6 3 7\n",
    "4 4 111\n1 2 2 1\n1 3 1 1\n1 4 1 1 2 1 4 1\n1 5 3 1\n",
]


def _check(g) -> str | None:
    return graph_problem(g)


def test_fuzz_metis_text(tmp_path: Path) -> None:
    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "g.graph"
        p.write_bytes(mutate_text(rng, rng.choice(GRAPHS)))
        return p

    run_fuzz("metis", case, read_metis, tmp_path, check=_check, seed=6)


def test_fuzz_metis_gzip(tmp_path: Path) -> None:
    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "g.graph.gz"
        p.write_bytes(mutate_bytes(rng, gzip.compress(rng.choice(GRAPHS).encode(), mtime=0)))
        return p

    run_fuzz("metis-gz", case, read_metis, tmp_path, check=_check, seed=7)
