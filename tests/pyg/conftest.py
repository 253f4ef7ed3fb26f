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
    dg = gs.distributed.DistGraph(shop2.config, colocate=())
    yield dg
    dg.close()


@dataclass
class Parts:
    whole: gs.Graph  # the graph assembled from its parts (the partitions' IDs)
    config: str


def _partition(g: gs.Graph, name: str, out: Any) -> Parts:
    gs.partition_graph(g, name, 2, str(out), part_method="lp")
    config = str(out / f"{name}.json")
    return Parts(gs.distributed.assemble_graph(config), config)


@pytest.fixture(scope="session")
def cora_graph(shared_file) -> gs.Graph:
    """Planetoid Cora (features dense, Planetoid's split) with its edges as PyG's reader
    keeps them: 10,556, no duplicates or self loops."""
    from graphshard.datasets import load_planetoid
    from graphshard.io import apply_edge_policy

    g = load_planetoid(shared_file("planetoid", "ind.cora.graph"),
                       sparse_features=False).graph
    return apply_edge_policy(g, self_loops="drop", duplicates="drop")[0]


@pytest.fixture(scope="session")
def cora2(cora_graph, tmp_path_factory) -> Parts:
    """Cora in 2 parts (label propagation)."""
    return _partition(cora_graph, "cora", tmp_path_factory.mktemp("pyg_cora2"))


@pytest.fixture(scope="session")
def papers2(cora_graph, tmp_path_factory) -> Parts:
    """Cora typed as the Kùzu example's graph: one node type 'paper', one edge type
    ('paper', 'cites', 'paper'), in 2 parts."""
    src, dst = cora_graph.edges()
    g = gs.heterograph({("paper", "cites", "paper"): (src, dst)},
                       {"paper": cora_graph.num_nodes()})
    for k, v in cora_graph.ndata.items():
        g.nodes["paper"].data[k] = v
    return _partition(g, "papers", tmp_path_factory.mktemp("pyg_papers2"))


@pytest.fixture(scope="session")
def acm2(acm, tmp_path_factory) -> Parts:
    """HGB ACM (paper features only) in 2 parts."""
    return _partition(acm, "acm", tmp_path_factory.mktemp("pyg_acm2"))
