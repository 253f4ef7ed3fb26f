"""Fuzzing written partition folders (STYLE §13): mutate the config JSON, the bytes of a
part file, or a part file's safetensors header (with the recorded size and SHA-256 kept or
updated, so that the parser itself is reached behind a valid checksum), then load every
part and the book.  Allowed: a correct load, or our error naming the file.

``GRAPHSHARD_FUZZ_CASES=300`` runs the issue's count (see tests/fuzzing.py)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from fuzzing import mutate_bytes, mutate_json, mutate_text, run_fuzz
from graphshard.ragged import Ragged
from graphshard.sparse import SparseRows
from graphshard.storage.files import file_sha256


def _hetero() -> gs.Graph:
    rng = np.random.default_rng(0)
    bu, bi = rng.integers(0, 12, 40), rng.integers(0, 7, 40)
    g = gs.heterograph({("u", "buys", "i"): (bu, bi), ("i", "bought_by", "u"): (bi, bu),
                        ("u", "follows", "u"): (rng.integers(0, 12, 20),
                                                rng.integers(0, 12, 20))}, {"u": 12, "i": 7})
    g.nodes["u"].data["feat"] = rng.normal(size=(12, 3)).astype(np.float32)
    g.nodes["i"].data["label"] = rng.integers(0, 3, 7)
    g.nodes["u"].data["tags"] = Ragged.from_rows([list(range(k % 3)) for k in range(12)],
                                                 dtype="int64")
    g.edges["buys"].data["w"] = rng.random(40).astype(np.float32)
    g.nodes["i"].data["bow"] = SparseRows(np.arange(8) // 2 * 3, np.arange(9) % 5,
                                          np.arange(9, dtype=np.float32), 5)
    return g


def _homo() -> gs.Graph:
    g = gs.graph((np.arange(10), (np.arange(10) + 1) % 10))
    g.ndata["x"] = np.arange(10.0)
    return g


@pytest.fixture(scope="module", params=["homo", "hetero"])
def written(request, tmp_path_factory):
    """(folder, config name, the loads of the intact partition)."""
    out = tmp_path_factory.mktemp(f"parts-{request.param}")
    if request.param == "homo":
        gs.partition_graph(_homo(), "g", 2, out, part_method="hash")
    else:
        gs.partition_graph(_hetero(), "g", 3, out, num_hops=2, save_orig_ids=True,
                           part_method="random")
    return out, "g.json", _load(out / "g.json")


def _load(config: Path) -> list[tuple]:
    book = gs.load_partition_book(config)
    return [gs.load_partition(config, p) for p in range(book.num_partitions())]


def _arrays(loaded: tuple) -> dict[str, np.ndarray]:
    """Every array of one load_partition result, by name (Ragged as values and offsets)."""
    g, nfeat, efeat, book, _name, ntypes, etypes = loaded
    out = {"src": g.edges()[0], "dst": g.edges()[1],
           "book": np.array([[m["num_nodes"], m["num_edges"]] for m in book.metadata()]),
           "types": np.array([*ntypes, *map(":".join, etypes)])}
    out.update({f"n/{k}": v for k, v in g.ndata.items()})
    out.update({f"e/{k}": v for k, v in g.edata.items()})
    for prefix, feats in (("nf", nfeat), ("ef", efeat)):
        for k, v in feats.items():
            if isinstance(v, Ragged):
                out[f"{prefix}/{k}/values"], out[f"{prefix}/{k}/offsets"] = v.values, v.offsets
            elif isinstance(v, SparseRows):
                for a in ("indptr", "indices", "values"):
                    out[f"{prefix}/{k}/{a}"] = getattr(v, a)
                out[f"{prefix}/{k}/num_cols"] = np.array(v.num_cols)
            else:
                out[f"{prefix}/{k}"] = v
    return out


def _invariants(loaded: tuple, part_id: int) -> str | None:
    """What any accepted part must satisfy, checked independently of the loader."""
    g, nfeat, _efeat, book, _name, ntypes, _etypes = loaded
    n, m = g.num_nodes(), g.num_edges()
    if any(len(v) != n for v in g.ndata.values()) or any(len(v) != m for v in g.edata.values()):
        return f"part {part_id}: node/edge data lengths differ from the graph"
    src, dst = g.edges()
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        return f"part {part_id}: local IDs out of range"
    owned = book.partid2nids(part_id)
    if not np.array_equal(g.ndata["_ID"][:len(owned)], owned) or \
            int(np.count_nonzero(g.ndata["inner_node"])) != len(owned):
        return f"part {part_id}: inner nodes are not the book's range"
    if not np.array_equal(g.ndata["part_id"], book.nid2partid(g.ndata["_ID"])):
        return f"part {part_id}: part_id disagrees with the book"
    for t in ntypes:
        for key, col in nfeat.items():
            if key.startswith(f"{t}/") and len(col) != len(book.partid2nids(part_id, t)):
                return f"part {part_id}: feature {key} has the wrong number of rows"
    return None


def _relist(config: Path, rel: str) -> None:
    cfg = json.loads(config.read_text())
    file = config.parent / rel
    cfg["graphshard"]["files"][rel] = {"bytes": file.stat().st_size, "sha256": file_sha256(file)}
    config.write_text(json.dumps(cfg, indent=1))


def _mutate_header(rng: random.Random, data: bytes) -> bytes:
    """A safetensors file with its JSON header mutated (and the length prefix fixed)."""
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    blob = json.dumps(mutate_json(rng, header)).encode()
    return len(blob).to_bytes(8, "little") + blob + data[8 + size:]


def test_fuzz_partition_folders(written, tmp_path):
    base, name, intact = written
    config_kind = {}

    def make_case(rng: random.Random, folder: Path) -> Path | None:
        shutil.copytree(base, folder / "parts")
        config = folder / "parts" / name
        cfg = json.loads(config.read_text())
        kind = rng.choice(["json", "json", "text", "bytes", "bytes", "header", "header"])
        config_kind["kind"] = kind
        if kind == "json":
            config.write_text(json.dumps(mutate_json(rng, cfg)))
        elif kind == "text":
            config.write_bytes(mutate_text(rng, config.read_text()))
        else:
            rel = rng.choice(sorted(cfg["graphshard"]["files"]))
            file = config.parent / rel
            data = file.read_bytes()
            file.write_bytes(mutate_bytes(rng, data) if kind == "bytes"
                             else _mutate_header(rng, data))
            if kind == "header" or rng.random() < 0.7:  # else the checksum catches it
                _relist(config, rel)
        return config

    def check(loads: list[tuple]) -> str | None:
        for p, loaded in enumerate(loads):
            problem = _invariants(loaded, p)
            if problem:
                return problem
        if config_kind["kind"] in ("json", "text"):  # same part files: same arrays
            if len(loads) != len(intact):
                return f"{len(loads)} parts loaded, {len(intact)} written"
            for p, (got, want) in enumerate(zip(loads, intact, strict=True)):
                a, b = _arrays(got), _arrays(want)
                if sorted(a) != sorted(b) or any(
                        a[k].dtype != b[k].dtype or not np.array_equal(a[k], b[k])
                        for k in a):
                    return f"part {p}: arrays differ from the written ones"
        return None

    run_fuzz(f"partition folder ({'homo' if 'homo' in str(base) else 'hetero'})",
             make_case, _load, tmp_path, check=check)


@pytest.mark.parametrize(("change", "message"), [
    (lambda h: h.update({"__metadata__": 5}), "__metadata__ must be an object of strings"),
    (lambda h: h["a"].update({"shape": [4, 2**63]}), "tensor 'a' .* does not fit"),
])
def test_header_cases_found_by_the_fuzz_test(tmp_path, change, message):
    """Raw AttributeError before; a shape whose product overflows int64 wrapped (with a
    RuntimeWarning) instead of being compared exactly."""
    import warnings

    from graphshard.errors import FormatError
    from graphshard.storage.tensorfile import load_tensors, save_tensors

    path = tmp_path / "t.safetensors"
    save_tensors(path, {"a": np.zeros((4, 3), np.float32)}, {"k": "v"})
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    change(header)
    blob = json.dumps(header).encode()
    path.write_bytes(len(blob).to_bytes(8, "little") + blob + data[8 + size:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FormatError, match=message):
            load_tensors(path)
