"""Readers and writers, one module per format, and a registry to convert between them.

Example:
    >>> from graphshard import io
    >>> "read_metis" in io.__all__, sorted(io.READERS)
    (True, ['chunked', 'edgelist', 'euler', 'euler-dat', 'graphbolt', 'hgb', 'metis', 'ogb', \
'pgl', 'planetoid', 'shchur'])
"""

from __future__ import annotations

from .._util.lazy import lazy_exports

# eager: light (readers load on first call), and the function ``convert`` must win over the
# submodule of the same name, which Python sets as an attribute of this package on import
from .convert import READERS, WRITERS, convert, read_graph, write_graph

#: public name -> the module that defines it, imported on first use (``graphshard.cli``
#: imports the format registry on every command; the readers pull in pyarrow and scipy)
_WHERE = {
    **dict.fromkeys(["iter_edge_chunks", "iter_edge_data_chunks", "iter_node_data_chunks",
                     "load_chunked_meta", "read_chunked", "write_chunked"], "chunked"),
    **dict.fromkeys(["node_id_strings", "read_edgelist"], "edgelist"),
    **dict.fromkeys(["EdgeCounts", "apply_edge_policy"], "_policy"),
    **dict.fromkeys(["read_euler", "write_euler"], "euler"),
    **dict.fromkeys(["is_euler_dat", "read_euler_dat", "write_euler_dat"], "euler_dat"),
    **dict.fromkeys(["read_graphbolt", "write_graphbolt"], "graphbolt"),
    **dict.fromkeys(["from_dgl", "from_networkx", "from_pyg", "from_scipy", "to_dgl",
                     "to_networkx", "to_pyg", "to_scipy"], "interop"),
    "read_metis": "metis",
    "read_pgl": "pgl",
}

__all__ = [
    "READERS",
    "WRITERS",
    "EdgeCounts",
    "apply_edge_policy",
    "convert",
    "from_dgl",
    "from_networkx",
    "from_pyg",
    "from_scipy",
    "is_euler_dat",
    "iter_edge_chunks",
    "iter_edge_data_chunks",
    "iter_node_data_chunks",
    "load_chunked_meta",
    "node_id_strings",
    "read_chunked",
    "read_edgelist",
    "read_euler",
    "read_euler_dat",
    "read_graph",
    "read_graphbolt",
    "read_metis",
    "read_pgl",
    "to_dgl",
    "to_networkx",
    "to_pyg",
    "to_scipy",
    "write_chunked",
    "write_euler",
    "write_euler_dat",
    "write_graph",
    "write_graphbolt",
]


__getattr__, __dir__ = lazy_exports(__name__, {k: "." + v for k, v in _WHERE.items()})
