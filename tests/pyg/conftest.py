"""Stores for the PyG-backend conformance suite: one partitioned graph, read locally and
through graph servers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import graphshard as gs
from shop import shop_graph

pytest.importorskip("torch_geometric", reason="needs torch_geometric (pip install "
                    "'graphshard[pyg]')")


@dataclass
class Stores:
    original: gs.Graph       # the graph before partitioning (original IDs)
    nids: dict[str, Any]     # per node type: shuffled ID -> original ID
    eids: dict[Any, Any]     # per edge type: shuffled ID -> original ID
    config: str


@pytest.fixture(scope="session")
def shop2(tmp_path_factory) -> Stores:
    """The shop graph (2 node types, 3 edge types, dense + ragged features) in 2 parts."""
    g = shop_graph(1)
    out = tmp_path_factory.mktemp("pyg_shop2")
    nids, eids = gs.partition_graph(g, "shop", 2, str(out), part_method="random",
                                    return_mapping=True)
    return Stores(g, nids, eids, str(out / "shop.json"))


@pytest.fixture(scope="session", params=["local", "dist"])
def shop_store(request, shop2: Stores) -> Any:
    """The partitioned shop graph as a local Graph (assembled from the parts, so its IDs are
    the partitions') and as a DistGraph over 2 servers with no in-process part."""
    if request.param == "local":
        yield gs.distributed.assemble_graph(shop2.config)
        return
    request.getfixturevalue("ray_cluster")
    dg = gs.distributed.DistGraph(shop2.config, colocate=(), timeout=120.0)
    yield dg
    dg.close()
