"""Seeded mutation fuzzing of read_edgelist: CSV/TSV text, Parquet, NPY and NPZ (issue 24).

Allowed outcomes: a sane graph or our FormatError naming the file. ``GRAPHSHARD_FUZZ_CASES``
sets the cases per reader (default 40).
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from fuzz_graph import graph_problem

from fuzzing import INTERESTING, mutate_bytes, mutate_text, run_fuzz
from graphshard.io import read_edgelist

CSV = "# edges\nsrc,dst,w\n0,1,0.5\n1,2,1.5\n2,0,2.5\n3,1,1.0\n"
TSV = "alice\tbob\nbob\tcarol\ncarol\talice\n"


def _load_csv(path: Path):
    return read_edgelist(path, weight="w")


def test_fuzz_csv(tmp_path: Path) -> None:
    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "e.csv"
        p.write_bytes(mutate_text(rng, CSV))
        return p

    run_fuzz("edgelist-csv", case, _load_csv, tmp_path, check=graph_problem, seed=1)


def test_fuzz_tsv_headerless(tmp_path: Path) -> None:
    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "e.tsv"
        p.write_bytes(mutate_text(rng, TSV))
        return p

    run_fuzz("edgelist-tsv", case, lambda p: read_edgelist(p, header=False), tmp_path,
             check=graph_problem, seed=2)


def _table(rng: random.Random) -> pa.Table:
    """A valid table with one column's values or type changed."""
    cols = {"src": [0, 1, 2, 3], "dst": [1, 2, 0, 1], "w": [0.5, 1.5, 2.5, 1.0]}
    name = rng.choice(list(cols))
    k = rng.randrange(4)
    op = rng.randrange(4)
    if op == 0:
        vals = cols[name] + []
        vals[k] = rng.choice([-1, 2**31, 2**63 - 1, 10**12, 1.5, float("nan"), None])
        try:
            return pa.table({**cols, name: vals})
        except pa.ArrowException:  # e.g. 2**63 - 1 among floats: write the column as text
            return pa.table({**cols, name: [None if v is None else str(v) for v in vals]})
    if op == 1:
        arr = rng.choice([np.array([2**64 - 1, 2**63, 0, 1], np.uint64),
                          np.array([0.0, 1.0, 2.0, 1e15]), np.array(["a", "b", "1", "c"]),
                          np.array([True, False, True, True]), np.array([1, 2, 3, 4], np.int8)])
        return pa.table({**{k_: pa.array(v) for k_, v in cols.items()}, name: pa.array(arr)})
    if op == 2:
        return pa.table({k_: v for k_, v in cols.items() if k_ != name})
    return pa.table({**cols, name: pa.array([[1], [2], [], None])})


def test_fuzz_parquet(tmp_path: Path) -> None:
    good = io.BytesIO()
    pq.write_table(pa.table({"src": [0, 1, 2], "dst": [1, 2, 0], "w": [0.5, 1.5, 2.5]}), good)

    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "e.parquet"
        if rng.random() < 0.5:
            p.write_bytes(mutate_bytes(rng, good.getvalue()))
        else:
            pq.write_table(_table(rng), p)
        return p

    run_fuzz("edgelist-parquet", case, _load_csv, tmp_path, check=graph_problem, seed=3)


def test_fuzz_npy(tmp_path: Path) -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([[0, 1], [1, 2], [2, 0]], np.int64))
    good = buf.getvalue()
    header_end = good.index(b"\n") + 1

    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "e.npy"
        op = rng.randrange(3)
        if op == 0:
            p.write_bytes(mutate_bytes(rng, good))
        elif op == 1:  # mutate a token of the header dict ('descr', 'shape', ...)
            head = good[:header_end].decode("latin-1")
            tokens = head.split(" ")
            tokens[rng.randrange(len(tokens))] = rng.choice(
                [*INTERESTING, "(3,", "(2,", "(0,", "(99999999999,", "'<u8',", "'<f4',",
                 "'|O',", "True,", "(3, 2, 1),"])
            p.write_bytes(" ".join(tokens).encode("latin-1") + good[header_end:])
        else:
            arr = rng.choice([np.array([[2**64 - 1, 1], [2**63, 0]], np.uint64),
                              np.array([[0.0, 1.5]]), np.zeros((3,)), np.zeros((0, 2)),
                              np.array([["a", "b"]]), np.array([[1 + 1j, 0]]),
                              np.array([[0, 10**12]]), np.array([[-1, 2]])])
            np.save(p, arr)
        return p

    run_fuzz("edgelist-npy", case, read_edgelist, tmp_path, check=graph_problem, seed=4)


def test_fuzz_npz(tmp_path: Path) -> None:
    buf = io.BytesIO()
    np.savez(buf, src=np.array([0, 1, 2]), dst=np.array([1, 2, 0]))
    good = buf.getvalue()

    def case(rng: random.Random, folder: Path) -> Path:
        p = folder / "e.npz"
        if rng.random() < 0.7:
            p.write_bytes(mutate_bytes(rng, good))
        else:
            arrays = {"src": np.array([0, 1, 2]), "dst": np.array([1, 2, 0])}
            key = rng.choice(["src", "dst"])
            arrays[key] = rng.choice([np.array([2**63, 1, 2], np.uint64), np.array([0.5, 1, 2]),
                                      np.array(["a", "b", "c"]), np.zeros((3, 2)),
                                      np.array([0, 1])])
            if rng.random() < 0.2:
                del arrays[key]
            np.savez(p, **arrays)
        return p

    run_fuzz("edgelist-npz", case, read_edgelist, tmp_path, check=graph_problem, seed=5)
