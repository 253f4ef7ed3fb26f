"""Small partitioned graphs for the distributed tests, and DistGraphs over them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import graphshard as gs
from shop import shop_graph


@dataclass
class Parted:
    config: str
    graph: gs.Graph
    nids: Any
    eids: Any
    whole: gs.Graph


def partition(g: gs.Graph, name: str, num_parts: int, out: str, **kw: Any) -> Parted:
    nids, eids = gs.partition_graph(g, name, num_parts, out, part_method="random",
                                    return_mapping=True, **kw)
    cfg = f"{out}/{name}.json"
    return Parted(cfg, g, nids, eids, gs.dist.assemble_graph(cfg))


@pytest.fixture(scope="session")
def shop_parts(tmp_path_factory) -> dict[int, Parted]:
    g = shop_graph()
    return {k: partition(g, f"shop{k}", k, str(tmp_path_factory.mktemp(f"shop{k}")))
            for k in (1, 2, 4)}


@pytest.fixture(scope="session")
def shop_dist(ray_cluster, shop_parts):
    """DistGraphs over 1, 2 and 4 servers (all remote), closed at the end of the session."""
    graphs = {k: gs.dist.DistGraph(p.config, colocate=(), timeout=120.0)
              for k, p in shop_parts.items()}
    yield graphs
    for dg in graphs.values():
        dg.close()


@pytest.fixture(scope="session")
def make_parts():
    """``make_parts(seed, name, num_parts, out)``: a fresh partitioned shop graph."""

    def make(seed: int, name: str, num_parts: int, out: str) -> Parted:
        return partition(shop_graph(seed), name, num_parts, out)

    return make


def pytest_collection_modifyitems(session, config, items):
    """The multi-node tests run first in the session: their 3-node cluster needs a test
    process that has joined no Ray yet, and the shared ``ray_cluster`` stays up once
    started (a process joins one Ray at a time)."""
    first = [item for item in items if item.path.name == "test_multinode.py"]
    if first:
        items[:] = first + [item for item in items if item.path.name != "test_multinode.py"]
