"""Readers and writers, one module per format, and a registry to convert between them.

Example:
    >>> from graphshard import io
    >>> "read_metis" in io.__all__, sorted(io.READERS)
    (True, ['chunked', 'edgelist', 'euler', 'metis', 'pgl'])
"""

from .chunked import (
    iter_edge_chunks,
    iter_edge_data_chunks,
    iter_node_data_chunks,
    load_chunked_meta,
    read_chunked,
    write_chunked,
)
from .convert import READERS, WRITERS, convert, read_graph, write_graph
from .edgelist import node_id_strings, read_edgelist
from .euler import read_euler, write_euler
from .interop import (
    from_dgl,
    from_networkx,
    from_pyg,
    from_scipy,
    to_dgl,
    to_networkx,
    to_pyg,
    to_scipy,
)
from .metis import read_metis
from .pgl import read_pgl

__all__ = [
    "READERS",
    "WRITERS",
    "convert",
    "from_dgl",
    "from_networkx",
    "from_pyg",
    "from_scipy",
    "iter_edge_chunks",
    "iter_edge_data_chunks",
    "iter_node_data_chunks",
    "load_chunked_meta",
    "node_id_strings",
    "read_chunked",
    "read_edgelist",
    "read_euler",
    "read_graph",
    "read_metis",
    "read_pgl",
    "to_dgl",
    "to_networkx",
    "to_pyg",
    "to_scipy",
    "write_chunked",
    "write_euler",
    "write_graph",
]
