"""Small graphs for the training tests; every test here needs torch."""

from __future__ import annotations

import pytest

import graphshard as gs
from shop import hetero_graph


@pytest.fixture(scope="module")
def sbm_graph() -> gs.Graph:
    """600 nodes in 3 communities, 8 noisy features, train/val/test masks."""
    return gs.datasets.sbm(600, 3600, num_blocks=3, num_features=8, seed=0)


@pytest.fixture(scope="module")
def shop_hetero() -> gs.Graph:
    """:func:`hetero_graph` with class IDs."""
    return hetero_graph(0)
