"""``graphshard export`` and ``graphshard import``: partitions in another system's own
format (the formats of :data:`graphshard.partition.formats.PARTITION_FORMATS`)."""

from __future__ import annotations

from pathlib import Path

import click

from ..partition.formats import PARTITION_FORMATS, format_help, format_names
from ._common import console

__all__ = ["export", "import_"]


@click.command("export")
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--to", "dst_format", type=click.Choice(format_names("export")),
              default="dgl", show_default=True, help=format_help("export"))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Output folder: new, empty, or an earlier export (replaced).")
@click.option("--graphbolt", is_flag=True,
              help="--to dgl only: also write DGL's GraphBolt graphs (DGL >= 2.1; "
                   "load_partition(..., use_graphbolt=True)).")
def export(config: Path, dst_format: str, out: Path, graphbolt: bool) -> None:
    """Write partitions in another system's own format: DGL's partition folder (which
    dgl.distributed.load_partition and DistGraph load) or PyG's (which
    torch_geometric.distributed's LocalGraphStore.from_partition and
    LocalFeatureStore.from_partition load).

    \b
    Example:
      graphshard export parts/mygraph.json --to dgl --out dgl_parts/
      graphshard export parts/mygraph.json --to pyg --out pyg_parts/
    """
    if graphbolt and dst_format != "dgl":
        raise click.UsageError("--graphbolt applies to --to dgl only")
    export_ = PARTITION_FORMATS[dst_format].export
    if export_ is None:  # --to offers only formats with an export
        raise click.UsageError(f"graphshard imports {dst_format} partitions only")
    path = export_(config, out, graphbolt=True) if graphbolt else export_(config, out)
    if dst_format == "pyg":
        console.print(f"PyG partition folder: {path} (LocalGraphStore.from_partition("
                      f"'{path}', pid))")
    else:
        console.print(f"DGL partition config: {path}")


@click.command("import")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--from", "src_format", type=click.Choice(format_names("import")),
              default="dgl", show_default=True, help=format_help("import"))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Folder of our partitions: new, empty, or an earlier output of ours.")
@click.option("--name", "graph_name", default=None,
              help="--from pyg or glt only: name of our config (default: the folder's name; "
                   "DGL's JSON names its graph).")
def import_(source: Path, src_format: str, out: Path, graph_name: str | None) -> None:
    """Read another system's partitions into our format: DGL's partition folder (made by
    dgl.distributed.partition_graph or by graphshard export), PyG's (made by
    torch_geometric.distributed.Partitioner or by graphshard export) or GLT's (made by
    graphlearn_torch's partitioners).

    \b
    Example:
      graphshard import dgl_parts/mygraph.json --from dgl --out parts/
      graphshard import pyg_parts/ --from pyg --name mygraph --out parts/
      graphshard import glt_parts/ --from glt --name mygraph --out parts/
    """
    if graph_name is not None and src_format == "dgl":
        raise click.UsageError("--name applies to --from pyg or glt only (DGL's JSON names "
                               "its graph)")
    fmt = PARTITION_FORMATS[src_format]
    cfg = fmt.import_(source, out, graph_name=graph_name) if graph_name is not None \
        else fmt.import_(source, out)
    console.print(f"{cfg.path}: {cfg.num_parts} parts of {cfg.graph_name!r}, node types "
                  f"{cfg.ntypes}, {len(cfg.etypes)} edge types")
