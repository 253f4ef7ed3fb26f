"""Bad input is refused before writing; outputs are replaced safely; corrupt files raise."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ConfigError, FormatError, PartitionNotFoundError, ValidationError


@pytest.fixture
def ring():
    g = gs.graph((np.arange(8), (np.arange(8) + 1) % 8))
    g.ndata["x"] = np.arange(8.0)
    return g


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"num_parts": 0}, ValidationError, r"num_parts must be an integer in \[1, 8\]"),
    ({"num_parts": 9}, ValidationError, r"num_parts must be an integer in \[1, 8\]"),
    ({"part_method": "nope"}, ValidationError, "unknown part_method 'nope'; choose one of"),
    ({"num_hops": 0}, ValidationError, "num_hops must be an integer >= 1"),
    ({"reshuffle": False}, ConfigError, "reshuffle=False is not supported"),
    ({"objtype": "x"}, ValidationError, "objtype must be 'cut' or 'vol'"),
    ({"assignment": [0, 1]}, ValidationError, "assignment has 2 entries but the graph has 8"),
    ({"assignment": [0] * 7 + [5]}, ValidationError, r"assignment\[7\] = 5 is not a part"),
    ({"balance_ntypes": [0, 1]}, ValidationError, "balance_ntypes must have one entry per node"),
])
def test_bad_arguments_write_nothing(ring, tmp_path, kwargs, error, message):
    args = {"num_parts": 2, **kwargs}
    out = tmp_path / "out"
    with pytest.raises(error, match=message):
        gs.partition_graph(ring, "ring", args.pop("num_parts"), out, **args)
    assert not out.exists() or not any(out.iterdir())


def test_replace_previous_output_and_refuse_foreign(ring, tmp_path):
    gs.partition_graph(ring, "ring", 4, tmp_path, part_method="hash")
    gs.partition_graph(ring, "ring", 2, tmp_path, part_method="metis")
    assert gs.load_partition_book(tmp_path / "ring.json").num_partitions() == 2
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "data.json").write_text('{"a": 1}')
    with pytest.raises(ConfigError, match="holds no graphshard partition config"):
        gs.partition_graph(ring, "ring", 2, foreign)
    assert (foreign / "data.json").read_text() == '{"a": 1}'


def test_corrupt_files_raise_format_error(ring, tmp_path):
    gs.partition_graph(ring, "ring", 2, tmp_path, part_method="hash")
    config = tmp_path / "ring.json"
    feats = tmp_path / "part1" / "node_feats.safetensors"
    data = bytearray(feats.read_bytes())
    data[-1] ^= 0xFF
    feats.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="SHA-256 differs"):
        gs.load_partition(config, 1)
    gs.load_partition(config, 0)  # the other part is intact
    feats.write_bytes(bytes(data[:20]))
    with pytest.raises(FormatError, match="bytes, but the config records"):
        gs.load_partition(config, 1)
    with pytest.raises(PartitionNotFoundError, match="no partition 5"):
        gs.load_partition(config, 5)
    cfg = json.loads(config.read_text())
    cfg["node_map"]["_N"] = cfg["node_map"]["_N"][:1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(cfg))
    with pytest.raises(FormatError, match=r"node_map\['_N'\] has 1 ranges, but num_parts is 2"):
        gs.load_partition_book(bad)


@pytest.mark.parametrize("cut", [0, 4, 7, 8, 30, 100])
def test_truncated_safetensors(tmp_path, cut):
    from graphshard.storage.tensorfile import load_tensors, save_tensors

    path = tmp_path / "t.safetensors"
    save_tensors(path, {"a": np.arange(10), "b": np.ones((2, 3), dtype=np.float32)})
    data = path.read_bytes()
    path.write_bytes(data[:cut])
    with pytest.raises(FormatError):
        load_tensors(path)


def test_import_stays_light():
    code = ("import sys, graphshard; "
            "print(sorted(m for m in ('ray', 'torch', 'dgl', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_short_of_space_warns_with_the_folder_and_figures(tmp_path, monkeypatch, caplog):
    from graphshard.storage import files as _files

    usage = type(shutil.disk_usage(tmp_path))
    monkeypatch.setattr(_files.shutil, "disk_usage", lambda p: usage(10**10, 10**10 - 2 * 10**8,
                                                                    2 * 10**8))
    missing = tmp_path / "not" / "yet"
    assert not _files.warn_if_short_of_space(missing, 10**8, "the demo")
    assert not caplog.records
    with caplog.at_level("WARNING", logger="graphshard.storage.files"):
        assert _files.warn_if_short_of_space(missing, 3 * 10**9, "the demo", "use another disk")
    assert caplog.records[0].getMessage() == (
        f"the demo needs about 3.0 GB in {missing}, which has 0.2 GB free: the run may fail "
        "for lack of space (use another disk)")
