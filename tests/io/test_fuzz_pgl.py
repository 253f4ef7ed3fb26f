"""Seeded mutation fuzzing of read_pgl: edge files and node files (slot and GPU-engine
features), with and without symmetry (issue 24)."""

from __future__ import annotations

import random
from pathlib import Path

from fuzz_graph import graph_problem

from fuzzing import mutate_text, run_fuzz
from graphshard.io import read_pgl

EDGES = "1\t10\t0.5\n2\t10\t1.5\n2\t11\t0.25\n3\t12\t1\n"
NODES = ("u\t1\ts 1:5,2:7\ta 0.5 1.5\nu\t2\ts 1:6,2:8\ta 0.1 0.2\nu\t3\ts 1:7,2:9\ta 1 2\n"
         "i\t10\tc hello\ni\t11\tc world\ni\t12\tc !\n")


def test_fuzz_pgl_edges(tmp_path: Path) -> None:
    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "u2buy2i.txt"
        p.write_bytes(mutate_text(rng, EDGES))
        return p

    run_fuzz("pgl-edges", case, lambda p: read_pgl({"u2buy2i": p}, symmetry=True), tmp_path,
             check=graph_problem, seed=8)


def test_fuzz_pgl_nodes(tmp_path: Path) -> None:
    def case(rng: random.Random, folder: Path) -> Path:
        (folder / "u2buy2i.txt").write_text(EDGES)
        p = folder / "nodes.txt"
        p.write_bytes(mutate_text(rng, NODES))
        return p

    def load(p: Path):
        return read_pgl({"u2buy2i": p.parent / "u2buy2i.txt"}, {"u": p, "i": p})

    run_fuzz("pgl-nodes", case, load, tmp_path, check=graph_problem, seed=9)
