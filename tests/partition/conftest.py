"""Fixtures of the partition tests."""

from __future__ import annotations

import pytest

from pyg_parts import run_partitioner


@pytest.fixture
def pyg_partitioner(monkeypatch):
    """``run(data, num_parts, root)``: PyG's own Partitioner writing ``root`` (skips
    without torch_geometric)."""
    pytest.importorskip("torch_geometric", reason="needs torch_geometric (pip install "
                        "'graphshard[pyg]')")
    return lambda data, num_parts, root: run_partitioner(monkeypatch, data, num_parts, root)
