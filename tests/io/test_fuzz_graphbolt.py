"""Seeded mutation fuzzing of read_graphbolt: metadata.yaml as text and as a document, and
the .npy files it names (STYLE §13).  Allowed: a sane graph, or our error naming the file."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from fuzz_graph import graph_problem

import graphshard as gs
from fuzzing import mutate_bytes, mutate_json, mutate_text, run_fuzz
from graphshard.io import read_graphbolt, write_graphbolt

yaml = pytest.importorskip("yaml")


def _source(tmp_path: Path) -> Path:
    g = gs.heterograph({("user", "buys", "item"): ([0, 1, 2], [1, 0, 1]),
                        ("item", "rev", "user"): ([0], [2])},
                       num_nodes_dict={"user": 3, "item": 2})
    g.nodes["user"].data["feat"] = np.ones((3, 2), np.float32)
    g.nodes["user"].data["label"] = np.array([0, 1, 1])
    g.nodes["user"].data["train_mask"] = np.array([True, False, True])
    g.nodes["user"].data["test_mask"] = np.array([False, True, False])
    g.edges["buys"].data["w"] = np.array([0.5, 1.5, 2.5])
    write_graphbolt(g, tmp_path / "src")
    return tmp_path / "src"


def _copy(src: Path, folder: Path) -> Path:
    shutil.copytree(src, folder / "gb")
    return folder / "gb"


def _cases(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


def _mask_problem(g) -> str | None:
    problem = graph_problem(g)
    if problem:
        return problem
    for nt in g.ntypes:
        for name in ("train_mask", "val_mask", "test_mask"):
            col = g.nodes[nt].data.get(name)
            if col is not None and (col.dtype != bool or len(col) != g.num_nodes(nt)):
                return f"{nt}/{name}: {col.dtype} of {len(col)} rows"
    return None


def test_fuzz_graphbolt_metadata_text(tmp_path: Path) -> None:
    src = _source(tmp_path)
    text = (src / "metadata.yaml").read_text()

    def case(rng: random.Random, folder: Path) -> Path:
        d = _copy(src, folder)
        (d / "metadata.yaml").write_bytes(mutate_text(rng, text))
        return d / "metadata.yaml"

    run_fuzz("graphbolt-yaml", case, read_graphbolt, _cases(tmp_path, "t"), check=_mask_problem,
             seed=44)


def test_fuzz_graphbolt_metadata_fields(tmp_path: Path) -> None:
    src = _source(tmp_path)
    doc = yaml.safe_load((src / "metadata.yaml").read_text())

    def case(rng: random.Random, folder: Path) -> Path:
        d = _copy(src, folder)
        (d / "metadata.yaml").write_text(yaml.safe_dump(mutate_json(rng, doc)))
        return d / "metadata.yaml"

    run_fuzz("graphbolt-fields", case, read_graphbolt, _cases(tmp_path, "f"), check=_mask_problem,
             seed=45)


def test_fuzz_graphbolt_arrays(tmp_path: Path) -> None:
    src = _source(tmp_path)
    files = sorted(p.relative_to(src) for p in src.rglob("*.npy"))

    def case(rng: random.Random, folder: Path) -> Path:
        d = _copy(src, folder)
        target = d / rng.choice(files)
        target.write_bytes(mutate_bytes(rng, target.read_bytes()))
        return d / "metadata.yaml"

    run_fuzz("graphbolt-npy", case, read_graphbolt, _cases(tmp_path, "a"), check=_mask_problem,
             seed=46)
