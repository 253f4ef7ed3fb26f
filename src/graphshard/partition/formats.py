"""Other systems' partition formats that graphshard exports to and imports from: one
registry, from which ``graphshard export --to`` and ``graphshard import --from`` take their
choices and help.

Example:
    >>> sorted(PARTITION_FORMATS), format_names("export")
    (['dgl', 'glt', 'pyg'], ['dgl', 'pyg'])
    >>> PARTITION_FORMATS["pyg"].import_source
    'its folder (the one holding META.json)'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .config import PartitionConfig
from .dgl_io import export_dgl, import_dgl
from .glt_io import import_glt
from .pyg_io import export_pyg, import_pyg

__all__ = ["PARTITION_FORMATS", "PartitionFormat", "format_help", "format_names"]


@dataclass(frozen=True)
class PartitionFormat:
    """One foreign partition format.

    Attributes:
        name: The ``--to`` / ``--from`` choice.
        summary: What the folder is and who loads it (``--help``).
        import_source: What ``graphshard import`` takes for it.
        export: ``export(config, out_dir, **options)`` -> what to tell the user to load;
            None for a format graphshard only imports.
        import_: ``import_(source, out_dir, **options)`` -> our written config.
    """

    name: str
    summary: str
    import_source: str
    export: Callable[..., Path] | None
    import_: Callable[..., PartitionConfig]

    def __repr__(self) -> str:
        return f"PartitionFormat({self.name!r})"


PARTITION_FORMATS: dict[str, PartitionFormat] = {
    "dgl": PartitionFormat(
        "dgl", "DGL's partition folder (<graph_name>.json, part<i>/graph.dgl, node_feat.dgl, "
        "edge_feat.dgl) for dgl.distributed.load_partition and DistGraph; needs dgl and torch",
        "its <graph_name>.json", export_dgl, import_dgl),
    "pyg": PartitionFormat(
        "pyg", "PyG's partition folder (META.json, node_map, edge_map, part_<i>/graph.pt, "
        "node_feats.pt, edge_feats.pt) for torch_geometric.distributed's "
        "LocalGraphStore/LocalFeatureStore.from_partition; needs torch",
        "its folder (the one holding META.json)", export_pyg, import_pyg),
    "glt": PartitionFormat(
        "glt", "GraphLearn-for-PyTorch's partition folder (META, node_pb, edge_pb, "
        "part<i>/graph, node_feat, edge_feat) written by graphlearn_torch's partitioners; "
        "import only; needs torch",
        "its folder (the one holding META)", None, import_glt),
}


def format_names(kind: str) -> list[str]:
    """The formats ``graphshard export --to`` (``kind="export"``) or ``import --from``
    (``kind="import"``) takes, sorted."""
    return sorted(n for n, f in PARTITION_FORMATS.items()
                  if kind == "import" or f.export is not None)


def format_help(kind: str) -> str:
    """The help of ``export --to`` (``kind="export"``: each format's summary) or of
    ``import --from`` (what each takes).

    Example:
        >>> for line in format_help("import").split(". "):
        ...     print(line)
        dgl: its <graph_name>.json
        pyg: its folder (the one holding META.json)
        glt: its folder (the one holding META).
    """
    return " ".join(f"{f.name}: {f.summary if kind == 'export' else f.import_source}."
                    for f in PARTITION_FORMATS.values()
                    if kind == "import" or f.export is not None)

