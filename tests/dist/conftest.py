"""Small partitioned graphs for the distributed tests, and DistGraphs over them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import graphshard as gs


def shop_graph(seed: int = 0) -> gs.Graph:
    """Users and items: buys, bought_by (reverse) and follows, with features and weights."""
    rng = np.random.default_rng(seed)
    nu, ni = 90, 50
    bu, bi = rng.integers(0, nu, 400), rng.integers(0, ni, 400)
    fu, fv = rng.integers(0, nu, 300), rng.integers(0, nu, 300)
    g = gs.heterograph({("u", "buys", "i"): (bu, bi), ("i", "bought_by", "u"): (bi, bu),
                        ("u", "follows", "u"): (fu, fv)}, {"u": nu, "i": ni})
    g.nodes["u"].data["feat"] = rng.normal(size=(nu, 4)).astype(np.float32)
    g.nodes["i"].data["feat"] = rng.normal(size=(ni, 4)).astype(np.float32)
    g.nodes["i"].data["label"] = rng.integers(0, 3, ni)
    g.nodes["u"].data["tags"] = gs.Ragged.from_rows(
        [list(rng.integers(0, 9, rng.integers(0, 4))) for _ in range(nu)], dtype="int64")
    g.edges["buys"].data["w"] = rng.random(400).astype(np.float32)
    g.edges["follows"].data["w"] = (rng.random(300) * (rng.random(300) > 0.3)).astype(
        np.float32)
    return g


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
    graphs = {k: gs.dist.DistGraph(p.config, colocate=(), timeout=30.0)
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
