"""Checksums where data is served (issue 41 item 8): a bit-flipped part file is refused
when a server loads it and when the partitions are assembled, by default; ``verify=False``
skips the hashing (and then serves what the file holds)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import graphshard as gs
from graphshard.distributed._served import _BackgroundServer


@pytest.fixture
def flipped(tmp_path):
    """A 2-part graph whose part 1 node features have one bit flipped, and the original."""
    g = gs.graph(([0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]))
    g.ndata["feat"] = np.arange(12, dtype=np.float32).reshape(6, 2)
    gs.partition_graph(g, "ring", 2, tmp_path / "p", part_method="random")
    cfg = json.loads((tmp_path / "p" / "ring.json").read_text())
    path = tmp_path / "p" / cfg["part-1"]["node_feats"]
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x40  # inside the last float of the tensor data
    path.write_bytes(bytes(data))
    return tmp_path / "p" / "ring.json", path


def test_assemble_graph_refuses_a_flipped_part(flipped):
    config, path = flipped
    with pytest.raises(gs.FormatError, match="SHA-256") as err:
        gs.distributed.assemble_graph(config)
    assert path.name in str(err.value)
    g = gs.distributed.assemble_graph(config, verify=False)  # hashing skipped: served as is
    assert np.isfinite(g.ndata["feat"]).sum() >= 11


def test_a_server_refuses_to_serve_a_flipped_part(flipped, tmp_path):
    config, _ = flipped
    srv = _BackgroundServer(str(config), 1, str(tmp_path / "t"))
    with pytest.raises(gs.distributed.ServerError, match=r"partition 1 failed to load: "
                       r"FormatError: .*SHA-256"):
        srv.info()
    assert srv.health()["stage"] == "failed"
    ok = _BackgroundServer(str(config), 0, str(tmp_path / "t0"))
    assert ok.info()["part_id"] == 0  # the intact part serves
    unchecked = _BackgroundServer(str(config), 1, str(tmp_path / "t1"), verify=False)
    assert unchecked.info()["part_id"] == 1


def test_serve_names_the_damaged_part(flipped, ray_cluster):
    config, _ = flipped
    with pytest.raises(gs.distributed.ServerError, match=r"graph server of partition 1 "
                       r"failed to load: FormatError: .*SHA-256"):
        gs.distributed.serve(config)
    assert gs.distributed.find_servers(config) is None  # nothing left running
