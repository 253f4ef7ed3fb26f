"""PyG's partition folders for tests: a heterogeneous graph PyG's Partitioner takes, and the
Partitioner run by the ``pyg_partitioner`` fixture (tests/partition/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import graphshard as gs
from shop import shop_graph


def _t(a: Any) -> Any:
    import torch

    return torch.from_numpy(np.ascontiguousarray(a))


def shop_hetero() -> tuple[gs.Graph, Any]:
    """The shop graph with its dense features only, and as PyG's HeteroData (``x`` of both
    node types, ``edge_attr`` of every edge type: PyG's to_homogeneous keeps an attribute
    only when every type has it)."""
    from torch_geometric.data import HeteroData

    shop = shop_graph(3)
    g = gs.heterograph({et: shop.edges(etype=et) for et in shop.canonical_etypes},
                       {t: shop.num_nodes(t) for t in shop.ntypes})
    h = HeteroData()
    for t in shop.ntypes:
        g.nodes[t].data["x"] = shop.nodes[t].data["feat"]
        h[t].x = _t(shop.nodes[t].data["feat"])
    w = {"buys": shop.edges["buys"].data["w"], "follows": shop.edges["follows"].data["w"],
         "bought_by": shop.edges["buys"].data["w"] * 2}
    for et in shop.canonical_etypes:
        s, d = shop.edges(etype=et)
        h[et].edge_index = _t(np.stack([s, d]))
        h[et].edge_attr = _t(w[et[1]][:, None])
        g.edges[et].data["edge_attr"] = w[et[1]][:, None]
    return g, h


def run_partitioner(monkeypatch: Any, data: Any, num_parts: int, root: Path) -> Path:
    """PyG's ``Partitioner(data, num_parts, root)``.  Without pyg-lib or torch-sparse (this
    project's CPU venv) PyG's ``ClusterData`` has no METIS: its ``_metis`` (the part of each
    node) is then replaced by a seeded assignment; everything PyG writes is still PyG's
    own code."""
    import torch
    import torch_geometric.typing as pyg_typing
    from torch_geometric.distributed import Partitioner
    from torch_geometric.loader.cluster import ClusterData

    if not (pyg_typing.WITH_METIS or pyg_typing.WITH_TORCH_SPARSE):
        def seeded_parts(self: Any, edge_index: Any, num_nodes: int) -> Any:
            gen = torch.Generator().manual_seed(7)
            return torch.randint(0, self.num_parts, (num_nodes,), generator=gen)

        monkeypatch.setattr(ClusterData, "_metis", seeded_parts)
    Partitioner(data, num_parts, str(root)).generate_partition()
    return root
