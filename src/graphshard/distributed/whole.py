"""The whole partitioned graph in one process, in the shuffled IDs the servers use.

Running the local engine on this graph and the distributed one on the servers gives
identical samples for a seed (draws are keyed by node ID and rows keep edge-ID order): the
reference of the differential tests and of the benchmark.

Example:
    >>> import tempfile, graphshard as gs
    >>> out = tempfile.mkdtemp()
    >>> gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2, out,
    ...                    part_method="hash")
    >>> assemble_graph(f"{out}/ring.json").num_edges()
    4
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph import Graph, heterograph
from ..partition.config import ConfigLike, as_config
from ..partition.files import load_partition_data
from ..ragged import Ragged
from ..sparse import SparseRows
from ._index import PartIndex

__all__ = ["assemble_graph"]


def assemble_graph(config: ConfigLike, *, features: bool = True, verify: bool = True
                   ) -> Graph:
    """All partitions of ``config`` joined into one Graph (shuffled per-type IDs).

    Args:
        config: Path of the partition config JSON, or the config already read.
        features: Also join the node and edge features (rows in shuffled ID order).
        verify: Check every part file's SHA-256 against the config first (a flipped bit
            is an error naming the file, not a wrong value); False skips the hashing.

    Returns:
        A Graph whose per-type node and edge IDs are those of the partition book.
    """
    cfg = as_config(config)
    parts = [PartIndex(load_partition_data(cfg, p, verify=verify))
             for p in range(cfg.num_parts)]
    first = parts[0]
    edges = {}
    for et in first.canonical_etypes:
        ends = [ix.find_edges(np.arange(ix._edge_lo[et], ix._edge_lo[et] + ix._edge_n[et]),
                              et) for ix in parts]
        edges[et] = (np.concatenate([s for s, _ in ends]), np.concatenate([d for _, d in ends]))
    num_nodes = {t: sum(ix._node_n[t] for ix in parts) for t in first.ntypes}
    g = heterograph(edges, num_nodes)
    if features:
        for key in first.node_feats:
            ntype, name = key.split("/", 1)
            g.nodes[ntype].data[name] = _concat([ix.node_feats[key] for ix in parts])
        for key in first.edge_feats:
            etype, name = key.split("/", 1)
            src, rel, dst = etype.split(":")
            g.edges[(src, rel, dst)].data[name] = _concat(
                [ix.edge_feats[key] for ix in parts])
    return g


def _concat(cols: list[Any]) -> Any:
    """Columns of consecutive parts joined (arrays, Ragged or SparseRows)."""
    if isinstance(cols[0], SparseRows):
        return SparseRows.concat(cols)
    if not isinstance(cols[0], Ragged):
        return np.concatenate(cols)
    starts = np.cumsum([0] + [len(c.values) for c in cols[:-1]])
    offsets = np.concatenate([[0]] + [c.offsets[1:] + s for c, s in zip(cols, starts,
                                                                       strict=True)])
    return Ragged(np.concatenate([c.values for c in cols]), offsets)
