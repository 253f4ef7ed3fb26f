"""``graphshard export`` and ``graphshard import``: partitions in DGL's own format."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import console

__all__ = ["export", "import_"]


@click.command("export")
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--to", "dst_format", type=click.Choice(["dgl"]), default="dgl",
              show_default=True, help="dgl: DGL's partition folder (needs dgl installed).")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Output folder: new, empty, or an earlier export (replaced).")
@click.option("--graphbolt", is_flag=True,
              help="Also write DGL's GraphBolt graphs (DGL >= 2.1; load_partition("
                   "..., use_graphbolt=True)).")
def export(config: Path, dst_format: str, out: Path, graphbolt: bool) -> None:
    """Write partitions in another system's own format: DGL's partition folder, which
    dgl.distributed.load_partition and DistGraph load.

    \b
    Example:
      graphshard export parts/mygraph.json --to dgl --out dgl_parts/
    """
    from ..partition.dgl_io import export_dgl

    path = export_dgl(config, out, graphbolt=graphbolt)
    console.print(f"DGL partition config: {path}")


@click.command("import")
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--from", "src_format", type=click.Choice(["dgl"]), default="dgl",
              show_default=True, help="dgl: a DGL partition folder's JSON (needs dgl).")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Folder of our partitions: new, empty, or an earlier output of ours.")
def import_(config: Path, src_format: str, out: Path) -> None:
    """Read another system's partitions into our format: DGL's partition folder (made by
    dgl.distributed.partition_graph or by graphshard export).

    \b
    Example:
      graphshard import dgl_parts/mygraph.json --from dgl --out parts/
    """
    from ..partition.dgl_io import import_dgl

    cfg = import_dgl(config, out)
    console.print(f"{cfg.path}: {cfg.num_parts} parts of {cfg.graph_name!r}, node types "
                  f"{cfg.ntypes}, {len(cfg.etypes)} edge types")
