"""Fuzzing the PyG partition folder reader (STYLE §13): seeded mutants of a folder written by
PyG's own Partitioner (META.json fields, a .pt file's bytes, or one value inside a .pt file)
either import into a partition whose parts load and hold every node and edge of the maps
once, or fail with our error naming the file."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from fuzzing import mutate_bytes, mutate_json, run_fuzz
from graphshard.partition import load_partition_data
from pyg_parts import shop_hetero

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric", reason="needs torch_geometric (pip install "
                    "'graphshard[pyg]')")
from graphshard.partition.pyg_io import import_pyg, load_pt  # noqa: E402


def _values(obj, path=()):
    """``(path, value)`` of every value inside a loaded .pt object (dicts and tuples)."""
    out = [(path, obj)]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out += _values(value, (*path, key))
    return out


def _mutant_value(rng: random.Random, value):
    """A value PyG's reader might meet instead of ``value``."""
    choices = [None, "abc", [1, 2], {}, 7, torch.tensor([-1]), torch.tensor([2**40]),
               torch.tensor([0.5, 1.5]), torch.zeros((2, 2), dtype=torch.int64),
               torch.zeros(0, dtype=torch.int64), torch.tensor([True, False])]
    if isinstance(value, torch.Tensor) and value.numel():
        choices += [value[:-1], torch.cat([value, value[:1]]), value.flip(0),
                    value.to(torch.float64), value.to(torch.bfloat16), value + 1]
    return rng.choice(choices)


def _mutate_object(rng: random.Random, obj):
    paths = [(p, v) for p, v in _values(obj) if p]
    if not paths:
        return _mutant_value(rng, obj)
    path, value = rng.choice(paths)
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    if rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = _mutant_value(rng, value)
    return obj


def test_fuzz_pyg_partition_folder(pyg_partitioner, tmp_path):
    _, h = shop_hetero()
    base = pyg_partitioner(h, 2, tmp_path / "base")
    files = sorted(p.relative_to(base) for p in base.rglob("*.pt"))
    meta = json.loads((base / "META.json").read_text())

    def make_case(rng: random.Random, folder: Path) -> Path:
        root = folder / "pyg"
        shutil.copytree(base, root)
        kind = rng.random()
        if kind < 0.3:
            (root / "META.json").write_text(json.dumps(mutate_json(rng, meta)))
        else:
            target = root / rng.choice(files)
            if kind < 0.5:
                target.write_bytes(mutate_bytes(rng, target.read_bytes()))
            else:
                torch.save(_mutate_object(rng, load_pt(torch, target)), target)
        return root

    def check(cfg) -> str | None:
        nodes = sum(cfg.type_sizes("node").values())
        edges = sum(cfg.type_sizes("edge").values())
        inner_n = inner_e = 0
        for p in range(cfg.num_parts):
            part = load_partition_data(cfg, p)
            inner_n += int(np.asarray(part.graph.ndata["inner_node"]).sum())
            inner_e += int(np.asarray(part.graph.edata["inner_edge"]).sum())
        return None if (inner_n, inner_e) == (nodes, edges) else \
            f"{inner_n}/{nodes} inner nodes, {inner_e}/{edges} inner edges"

    run_fuzz("pyg_partition", make_case, lambda root: import_pyg(root, root.parent / "out"),
             tmp_path, check=check)
