"""The streamed R-MAT generator (issue 42): the graph of a seed whatever the chunking, each
chunk made alone, never every edge in memory, and ``graphshard chunk --generate``."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest
from click.testing import CliRunner

from graphshard.cli import cli
from graphshard.datasets import rmat_stream
from graphshard.datasets.rmat_stream import rmat_edges, write_rmat_chunked, write_spec_chunked
from graphshard.errors import ValidationError
from graphshard.io.chunked import read_chunked


def _read(path):
    g = read_chunked(path)
    return g, *g.edges()


def test_the_graph_does_not_depend_on_the_chunking(tmp_path, monkeypatch):
    monkeypatch.setattr(rmat_stream, "EDGE_BLOCK", 1000)  # many blocks, chunks across them
    monkeypatch.setattr(rmat_stream, "NODE_BLOCK", 300)
    write_rmat_chunked(tmp_path / "one", 5000, 40_000, 1, seed=4, num_features=3,
                       num_classes=4)
    write_rmat_chunked(tmp_path / "seven", 5000, 40_000, 7, seed=4, num_features=3,
                       num_classes=4)
    g1, s1, d1 = _read(tmp_path / "one")
    g7, s7, d7 = _read(tmp_path / "seven")
    assert np.array_equal(s1, s7) and np.array_equal(d1, d7)
    for name in ("feat", "label", "train_mask", "val_mask", "test_mask"):
        assert np.array_equal(g1.ndata[name], g7.ndata[name]), name
    # another seed is another graph
    other = rmat_edges(0, 40_000, 5000, 40_000, seed=5)
    assert not np.array_equal(other[0], s1)
    # a chunk made alone is that slice of the whole
    s, d = rmat_edges(12_345, 23_456, 5000, 40_000, seed=4)
    assert np.array_equal(s, s1[12_345:23_456]) and np.array_equal(d, d1[12_345:23_456])


def test_it_is_an_rmat_graph_with_learnable_labels(tmp_path):
    write_rmat_chunked(tmp_path, 1 << 14, 16 << 14, 4, seed=1, num_features=8, num_classes=5)
    g, src, dst = _read(tmp_path)
    n = g.num_nodes()
    assert (n, g.num_edges()) == (1 << 14, 16 << 14)
    assert src.min() >= 0 and max(src.max(), dst.max()) < n
    deg = np.bincount(dst, minlength=n)
    # skewed as R-MAT is: hubs far above the mean of 16, many nodes without in-edges
    assert deg.max() > 20 * deg.mean() and (deg == 0).mean() > 0.2
    masks = np.stack([g.ndata[m] for m in ("train_mask", "val_mask", "test_mask")])
    assert (masks.sum(axis=0) == 1).all() and 0.55 < masks[0].mean() < 0.65
    feat, label = g.ndata["feat"], g.ndata["label"]
    assert feat.dtype == np.float32 and set(np.unique(label)) == set(range(5))
    # the feature is its class's centroid plus noise: nearest class mean recovers the label
    means = np.stack([feat[label == k].mean(axis=0) for k in range(5)])
    nearest = np.argmin(((feat[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    assert (nearest == label).mean() > 0.6


def test_only_a_chunk_is_held_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(rmat_stream, "EDGE_BLOCK", 1 << 16)
    edges = 1 << 22
    tracemalloc.start()
    try:
        write_rmat_chunked(tmp_path, 1 << 20, edges, 16, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    coo = edges * 16  # all edges as two int64 arrays
    assert peak < coo / 2, f"peak {peak / 2**20:.0f} MiB vs the COO's {coo / 2**20:.0f} MiB"


def test_specs(tmp_path):
    assert write_spec_chunked("rmat:scale=10,edge_factor=4,seed=3", tmp_path / "a", 2) == \
        (1024, 4096)
    assert write_spec_chunked("rmat:nodes=1000,edges=3e3", tmp_path / "b", 2) == (1000, 3000)
    for spec, match in [("rmat:scale=10,nodes=5", "scale= or nodes="),
                        ("rmat:edges=5", "scale= or nodes="),
                        ("rmat:scale=10,edges=5,edge_factor=2", "edges= or edge_factor="),
                        ("rmat:scale=99", "1..40"), ("rmat:scale=1.5", "is not a int"),
                        ("rmat:scale=8,size=3", "bad item 'size=3'"),
                        ("rmat:scale=8,a=0.9", "a \\+ b \\+ c < 1"),
                        ("rmat:scale=8,features=4", "needs num_classes"),
                        ("sbm:nodes=9,edges=9", "only rmat")]:
        with pytest.raises(ValidationError, match=match):
            write_spec_chunked(spec, tmp_path / "bad", 2)
    assert not (tmp_path / "bad" / "metadata.json").exists()


def test_cli_chunk_generate_then_pipeline(tmp_path):
    runner = CliRunner()
    out = tmp_path / "rmat"
    res = runner.invoke(cli, ["chunk", "--generate", "rmat:scale=11,features=4,classes=3",
                               "--chunks", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "2,048 nodes, 32,768 edges in 3 chunks" in res.output
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["num_edges_per_chunk"] == [[10923, 10923, 10922]]
    assert sorted(meta["node_data"]["_N"]) == ["feat", "label", "test_mask", "train_mask",
                                               "val_mask"]
    res = runner.invoke(cli, ["pipeline", str(out), "--parts", "2", "--method", "random",
                               "--engine", "local", "--out", str(tmp_path / "parts")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "parts" / "rmat.json").exists()
    for args, message in [([], "give either INPUTS or --generate"),
                          (["x.csv", "--generate", "rmat:scale=4"], "give either INPUTS"),
                          (["--generate", "rmat:scale=4", "--relabel"], "reader options")]:
        res = runner.invoke(cli, ["chunk", *args, "--out", str(tmp_path / "no")])
        assert res.exit_code == 2 and message in res.output, res.output
