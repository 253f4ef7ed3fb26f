"""``graphshard partition`` (a graph file or a generated graph to parts) and
``graphshard inspect`` (a partitioned graph's report)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from .. import datasets
from ..partition import DEFAULT_METHOD, METHODS, build_partitions, read_config
from ..storage import fsys
from ._common import (
    _FORMAT_HELP,
    _READ_FORMATS,
    _expect_config,
    _input_format,
    _input_options,
    _read_options,
    _reader_name,
    _reader_options,
    _render,
)

__all__ = ["inspect", "partition"]


@click.command()
@click.argument("input", required=False, type=click.Path(path_type=Path))
@click.option("--generate", metavar="SPEC",
              help=f"Generate instead of reading: {', '.join(datasets.GENERATORS)} with "
                   "key=value items, e.g. rmat:nodes=100000,edges=1000000,seed=1.")
@click.option("--format", "fmt", type=click.Choice(_READ_FORMATS),
              help=f"{_FORMAT_HELP} (a folder: a dataset it holds, else chunked).")
@click.option("--parts", "-k", type=click.IntRange(min=1), required=True,
              help="Number of parts.")
@click.option("--method", "-m", type=click.Choice(sorted(METHODS)), default=DEFAULT_METHOD,
              show_default=True, help="Partition method.")
@click.option("--halo", type=click.IntRange(min=1), default=1, show_default=True,
              help="Hops of HALO nodes.")
@click.option("--out", "-o", required=True,
              help="Output folder (new, empty, or a previous graphshard output), or its "
                   "s3://, gs://, hdfs:// or file:// URI (endpoint and keys: AWS_ENDPOINT_URL, "
                   "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).")
@click.option("--name", help="Graph name (default: input file stem or generator name).")
@click.option("--imbalance", type=float, default=0.03, show_default=True,
              help="Allowed part imbalance.")
@click.option("--objtype", type=click.Choice(["cut", "vol"]), default="cut", show_default=True)
@click.option("--balance-edges/--no-balance-edges", default=True, show_default=True,
              help="Balance the in-edges of each part too, i.e. each trainer's work (as "
                   "`pipeline` does); --no-balance-edges balances nodes only (DGL's "
                   "partition_graph default, and the Python function's).")
@click.option("--trainers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Trainers per machine.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--time-budget", type=click.FloatRange(min=0, min_open=True), default=None,
              help="For --method auto: CPU time its backend may take on a skewed graph, as a "
                   "multiple of METIS k-way's (default 1.0: KaMinPar; 4.4: Mt-KaHyPar's "
                   "lower cut in about 4x the time).")
@click.option("--save-orig-ids", "--save-orig-nids", "--save-orig-eids", "save_orig_ids",
              is_flag=True, help="Write the original node and edge IDs per part "
                                 "(orig_nids/orig_eids; the three names are one flag).")
@_input_options
@_reader_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def partition(input: Path | None, generate: str | None, fmt: str | None, parts: int,
              method: str, halo: int, out: str, name: str | None, imbalance: float,
              objtype: str, balance_edges: bool, trainers: int, seed: int,
              time_budget: float | None, save_orig_ids: bool, options: tuple[str, ...],
              as_json: bool, **read: Any) -> None:
    """Partition a graph file (or a generated graph) and print the report.

    INPUT is an edge list (CSV/TSV/TXT/SNAP .edgelist, Parquet, NPY, NPZ), a METIS
    .graph, or a downloaded dataset (Shchur .npz/.zip, HGB folder/.zip, Planetoid ind.*
    files, OGB folder), told apart by suffix and a look inside; --format overrides.

    \b
    Example:
      graphshard partition --generate sbm:nodes=5000,edges=40000 --parts 2 --out parts/
      graphshard partition edges.parquet --parts 8 --method metis --halo 1 --out parts/
      graphshard partition CA-CondMat_tab-sep.edgelist --relabel -k 4 --out parts/
      graphshard partition edges.csv --add-reverse --self-loops drop -k 4 --out parts/
    """
    if (input is None) == (generate is None):
        raise click.UsageError("give either INPUT or --generate (one of them)")
    if generate is not None:
        if options or any(v not in (None, False) for v in read.values()):
            raise click.UsageError("reader options are for reading INPUT, not for --generate")
        g = datasets.from_spec(generate)
        name = name or generate.partition(":")[0]
    else:
        from ..io.convert import read_graph

        assert input is not None  # one of INPUT and --generate, checked above
        fmt = _input_format(input, fmt)
        unset = read.get("relabel") is None  # neither --relabel nor --no-relabel
        opts = _read_options(fmt, read, options)
        if unset and _reader_name(fmt) == "edgelist" and "relabel" not in opts:
            opts.setdefault("sparse_ids", "refuse")  # IDs mostly in no edge: ask which
        g = read_graph(fmt, [input], **opts)
        name = name or input.name.split(".")[0]
    result = build_partitions(g, name, parts, out, num_hops=halo, part_method=method,
                              balance_edges=balance_edges, num_trainers_per_machine=trainers,
                              objtype=objtype, imbalance=imbalance, seed=seed,
                              save_orig_ids=save_orig_ids, time_budget=time_budget)
    _render(result.report, result.config_path, as_json)


@click.command()
@click.argument("config")
@click.option("--plot", type=click.Path(path_type=Path), help="Also draw the report as a PNG.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def inspect(config: str, plot: Path | None, as_json: bool) -> None:
    """Show the sizes, cut, halo and balance of a partitioned graph.

    CONFIG is the partition config JSON, a path or an s3://, gs://, hdfs:// URI.

    \b
    Example:
      graphshard inspect parts/rmat.json --plot parts/rmat.png
    """
    if not fsys.is_remote(config):
        _expect_config(fsys.local_path(config))
    cfg = read_config(config)
    report = cfg.read_report()
    if plot is not None:
        from ..partition.report_plot import plot_report

        name = os.path.basename(fsys.shown(config))
        plot_report(report, plot, title=f"{cfg.graph_name} ({name})")
    _render(report, config, as_json)
