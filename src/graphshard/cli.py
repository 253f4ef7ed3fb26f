"""The ``graphshard`` command: parse, call one library function, render the result.

Results go to stdout (a table, or JSON with ``--json``); logs and progress bars to stderr.
Exit status: 0 ok, 1 for a graphshard error, a file-system error (disk full, no
permission, a missing file) or too little memory: one line naming the file/field, the
traceback too with ``-v`` or GRAPHSHARD_DEBUG=1; 2 for bad usage (a bad option value).
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Column, Table

from . import datasets
from ._util.progress import disable_progress
from .errors import GraphshardError, ValidationError
from .io.convert import COMPRESSED, READERS, WRITERS, format_names, format_of_path
from .partition import DEFAULT_METHOD, METHODS, PartitionReport, build_partitions, read_config
from .runtime.ray import quiet_ray
from .storage import fsys

__all__ = ["main"]

#: ``--format``/``--from`` choices and ``--to`` choices, from the io format registry.
_READ_FORMATS = format_names(READERS)
_WRITE_FORMATS = [*format_names(WRITERS), "graphshard"]
_ALIASES = "; ".join(f"{', '.join(sorted(f.aliases))} ({f.name} with that fmt)"
                     for f in READERS.values() if f.aliases)
_FORMAT_HELP = (f"Input format: {', '.join(READERS)}, or an alias: {_ALIASES}; default from "
                "the suffix")

console = Console()

#: Set by ``-v``: errors show their traceback too (as with GRAPHSHARD_DEBUG=1).
_verbose = False


def _input_format(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt
    found = format_of_path(path)
    if found is None:
        suffix = path.suffix.lower()
        if suffix in COMPRESSED:
            suffix = Path(path.stem).suffix.lower() or suffix
        raise ValidationError(f"{path}: cannot tell the format from the suffix {suffix!r}; "
                              f"pass --format (one of {', '.join(_READ_FORMATS)})",
                              path=str(path), field="format")
    return found


def _reader_options(fn: Any) -> Any:
    return click.option(
        "--option", "-O", "options", multiple=True, metavar="KEY=VALUE",
        help="Reader option, repeatable (e.g. -O ids=str, -O name=cora); an unknown key "
             "lists the reader's options.")(fn)


#: ``--delimiter`` words for characters a shell makes awkward.
_DELIMITERS = {"tab": "\t", "\\t": "\t", "space": " ", "comma": ",", "semicolon": ";"}


def _column(text: str | None) -> str | int | None:
    """``--src``/``--dst``: a column name, or a 0-based position."""
    return int(text) if text is not None and text.isdigit() else text


def _input_options(fn: Any) -> Any:
    """How to read INPUT: edge-list layout (header, columns, delimiter, relabel) and the
    edge policy every reader takes (reverse edges, self loops, duplicates)."""
    options = [
        click.option("--header/--no-header", default=None,
                     help="Edge lists: the first line is (not) a header (default: a first "
                          "line of numbers only is data)."),
        click.option("--src", metavar="COL",
                     help="Edge lists: source column, a name or a 0-based position (default: "
                          "'src', else the first column)."),
        click.option("--dst", metavar="COL",
                     help="Edge lists: destination column (default: 'dst', else the second)."),
        click.option("--delimiter", metavar="CHAR",
                     help="Edge lists: field separator; tab, space, comma or semicolon as a "
                          "word (default: from the suffix, else sniffed)."),
        click.option("--relabel", is_flag=True,
                     help="Edge lists: map the node IDs that appear to 0..n-1 (sparse IDs, "
                          "as SNAP's; originals kept as node feature node_id)."),
        click.option("--add-reverse", is_flag=True,
                     help="Add every edge reversed (lists holding each undirected edge once, "
                          "as MUSAE's)."),
        click.option("--self-loops", type=click.Choice(["keep", "drop"]),
                     help="Self loops: keep (default; a warning counts them) or drop."),
        click.option("--duplicates", type=click.Choice(["keep", "drop"]),
                     help="Edges equal to an earlier one (after --add-reverse): keep "
                          "(default; a warning counts them) or drop."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


_LAYOUT = ("header", "src", "dst", "delimiter", "relabel")
_POLICY = ("add_reverse", "self_loops", "duplicates")


def _read_options(fmt: str, given: dict[str, Any], options: tuple[str, ...]) -> dict[str, Any]:
    """Reader options from the :func:`_input_options` values (removed from ``given``) and
    ``-O KEY=VALUE`` items; the edge-list layout options only for an edge list."""
    values = {k: given.pop(k) for k in (*_LAYOUT, *_POLICY)}
    out = dict(_parse_option(o) for o in options)
    layout = {k: v for k, v in values.items()  # --no-header is header=False; --relabel a flag
              if k in _LAYOUT and v is not None and (k != "relabel" or v)}
    if layout and _reader_name(fmt) != "edgelist":
        flags = ", ".join("--" + k.replace("_", "-") for k in layout)
        raise click.UsageError(f"{flags}: for edge lists only; the input is read as {fmt}")
    for key in ("src", "dst"):
        if key in layout:
            layout[key] = _column(layout[key])
    if "delimiter" in layout:
        layout["delimiter"] = _DELIMITERS.get(layout["delimiter"].lower(), layout["delimiter"])
    policy = {k: v for k, v in values.items() if k in _POLICY and v not in (None, False)}
    return {**out, **layout, **policy}


def _reader_name(fmt: str) -> str:
    """The registry entry behind a ``--format`` name or alias (``csv`` -> ``edgelist``)."""
    return next((f.name for f in READERS.values() if fmt == f.name or fmt in f.aliases), fmt)


def _expect_folder(path: Path, command: str) -> None:
    """Refuse a graph file given where ``command`` reads a chunked folder, saying what to run."""
    if not path.is_file() and not (path.is_dir() and not (path / "metadata.json").exists()
                                   and format_of_path(path) not in (None, "chunked")):
        return
    fmt = format_of_path(path)
    what = f"a {fmt} graph" if fmt else "a file"
    raise ValidationError(
        f"{path}: graphshard {command} reads a chunked graph folder (metadata.json and "
        f"chunks, as graphshard chunk writes it), but this is {what}: run graphshard chunk "
        f"{path} --out chunked/ first, or graphshard partition {path} --parts N --out parts/ "
        "for a graph that fits in memory", path=str(path), field="chunked")


def _expect_config(path: Path) -> None:
    """Refuse a graph file or folder where a partition config JSON belongs, saying what to
    run or which JSON to name."""
    if path.is_dir():
        configs = sorted(p.name for p in path.glob("*.json") if p.name != "metadata.json")
        hint = f"; name one: {', '.join(str(path / c) for c in configs)}" if configs else ""
        raise ValidationError(f"{path}: a folder; inspect reads the partition config JSON "
                              f"that graphshard partition writes (OUT/NAME.json){hint}",
                              path=str(path), field="config")
    fmt = format_of_path(path)
    if path.is_file() and fmt not in (None, "euler"):  # euler: .json, as configs are
        raise ValidationError(f"{path}: a {fmt} graph; inspect reads the partition config "
                              "JSON that graphshard partition writes: run graphshard partition "
                              f"{path} --parts N --out parts/, then inspect parts/NAME.json",
                              path=str(path), field="config")
    try:  # a JSON document that is no config (a malformed config: read_config says where)
        doc = json.loads(path.read_bytes()) if path.is_file() else None
    except (OSError, ValueError, RecursionError):
        return
    if isinstance(doc, dict) and "node_map" not in doc:
        what = ("a chunked graph's metadata: graphshard pipeline " f"{path.parent} --parts N "
                "--out parts/ partitions it" if "edge_type" in doc and "node_type" in doc
                else "not a partition config (no node_map)")
        raise ValidationError(f"{path}: {what}; inspect reads the partition config JSON that "
                              "graphshard partition writes (OUT/NAME.json)", path=str(path),
                              field="config")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-q", "--quiet", is_flag=True,
              help="No progress bars, warnings only (Ray's own: errors only).")
@click.option("-v", "--verbose", is_flag=True, help="Log every phase (INFO) to stderr.")
@click.version_option(package_name="graphshard")
def cli(quiet: bool, verbose: bool) -> None:
    """Partition, convert and inspect graphs for distributed GNN training.

    \b
    Example:
      graphshard partition --generate rmat:nodes=10000,edges=80000 --parts 4 --out parts/
      graphshard inspect parts/rmat.json
    """
    global _verbose
    _verbose = verbose
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    disable_progress(quiet)
    quiet_ray(quiet)  # -q: Ray's driver logs errors only (no token-authentication warning)
    # for this invocation only (a CliRunner call does not go through main's reset)
    click.get_current_context().call_on_close(lambda: quiet_ray(False))


@cli.command()
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
@click.option("--balance-edges", is_flag=True, help="Also balance edges per part.")
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
        from .io.convert import read_graph

        assert input is not None  # one of INPUT and --generate, checked above
        fmt = _input_format(input, fmt)
        g = read_graph(fmt, [input], **_read_options(fmt, read, options))
        name = name or input.name.split(".")[0]
    result = build_partitions(g, name, parts, out, num_hops=halo, part_method=method,
                              balance_edges=balance_edges, num_trainers_per_machine=trainers,
                              objtype=objtype, imbalance=imbalance, seed=seed,
                              save_orig_ids=save_orig_ids, time_budget=time_budget)
    _render(result.report, result.config_path, as_json)


@cli.command()
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
        from .partition.report_plot import plot_report

        name = os.path.basename(fsys.shown(config))
        plot_report(report, plot, title=f"{cfg.graph_name} ({name})")
    _render(report, config, as_json)


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--from", "src_format", required=True, type=click.Choice(_READ_FORMATS),
              help="Input format: " + "; ".join(f"{f.name}: {f.description}"
                                                for f in READERS.values())
                   + f"; or an alias: {_ALIASES}.")
@click.option("--to", "dst_format", required=True, type=click.Choice(_WRITE_FORMATS),
              help="Output format: " + "; ".join(f"{f.name}: {f.description}"
                                                 for f in WRITERS.values())
                   + "; graphshard: one partition of ours.")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Output folder (new, empty, or an earlier output of the same format, "
                   "which is replaced).")
@click.option("--option", "-O", "options", multiple=True, metavar="KEY=VALUE",
              help="Reader/writer option, repeatable (e.g. -O num_chunks=4); prefix read. or "
                   "write. when both take it (-O write.fmt=parquet).")
@_input_options
def convert(inputs: tuple[str, ...], src_format: str, dst_format: str, out: Path,
            options: tuple[str, ...], **read: Any) -> None:
    """Convert between graph formats (``--to graphshard`` writes one partition).

    \b
    Example:
      graphshard convert --from euler graph.json -O meta=meta.json --to chunked --out g/
      graphshard convert --from hgb ACM.zip --to chunked --out acm/
      graphshard convert --from planetoid planetoid/ind.cora.graph --to chunked --out cora/
    """
    from .io.convert import convert as run_convert

    opts = dict(_parse_option(o) for o in options)
    opts.update({f"read.{k}": v for k, v in _read_options(src_format, read, ()).items()})
    if dst_format == "graphshard":
        from .io.convert import read_graph

        g = read_graph(src_format, list(inputs), **opts)
        result = build_partitions(g, Path(inputs[0]).name.split(".")[0], 1, out,
                                  part_method="hash")
        _render(result.report, result.config_path, False)
        return
    report = run_convert(src_format, list(inputs), dst_format, out, **opts)
    console.print(repr(report))


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--format", "fmt_in", type=click.Choice(_READ_FORMATS),
              help=f"{_FORMAT_HELP} of the first input.")
@click.option("--chunks", type=click.IntRange(min=1), default=4, show_default=True,
              help="Chunks per node/edge type (at most as many as the largest type has "
                   "rows: more would be empty files).")
@click.option("--chunk-format", type=click.Choice(["numpy", "csv", "parquet"]),
              default="numpy", show_default=True)
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Output folder (new, empty, or an earlier chunked output of graphshard, "
                   "which is replaced).")
@_input_options
@_reader_options
def chunk(inputs: tuple[str, ...], fmt_in: str | None, chunks: int, chunk_format: str,
          out: Path, options: tuple[str, ...], **read: Any) -> None:
    """Write any supported input in DGL's chunked graph format (the pipeline's input).

    \b
    Example:
      graphshard chunk edges.parquet --chunks 16 --out chunked/
      graphshard chunk wiki-Vote.txt --relabel --chunks 4 --out chunked/
    """
    from .io.convert import convert as run_convert

    fmt = _input_format(Path(inputs[0]), fmt_in)
    opts = {f"read.{key}": value for key, value in _read_options(fmt, read, options).items()}
    report = run_convert(fmt, list(inputs), "chunked", out,
                         **{**opts, "write.num_chunks": chunks, "write.fmt": chunk_format})
    console.print(repr(report))


def _engine_options(fn: Any) -> Any:
    fn = click.option("--engine", type=click.Choice(["ray", "local"]), default="ray",
                      show_default=True,
                      help="ray: tasks on a local Ray started for the run (or --address); "
                           "local: in this process.")(fn)
    return click.option("--address", metavar="ADDR",
                        help="Join this Ray cluster (e.g. ray://head:10001 or auto; default: "
                             "a local Ray listening on 127.0.0.1 only).")(fn)


def _bytes(text: str | None) -> int | None:
    """``--memory-budget``: bytes from ``1.5G``, ``800M``, ``4096``; > 0 and finite."""
    if text is None:
        return None
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    value = text.strip().lower().rstrip("ib")
    scale = units.get(value[-1:], 1)
    try:
        number = float(value[:-1] if scale > 1 else value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or int(number * scale) < 1:
        raise click.BadParameter(f"{text!r} is not a size like 1.5G or 800M (more than 0 "
                                 "bytes)", param_hint="--memory-budget")
    return int(number * scale)


def _assign_options(fn: Any) -> Any:
    """The options of step 1 (``assign`` and ``pipeline``), but ``--parts``/``--method``."""
    options = [
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--imbalance", type=float, default=0.03, show_default=True),
        click.option("--workers", "num_workers", type=click.IntRange(min=1),
                     help="lp: concurrent shard tasks (default: all cores, or all Ray CPUs)."),
        click.option("--max-task-entries", type=click.IntRange(min=1), metavar="N",
                     help="lp: edge entries per shard task, the per-task memory knob (16 "
                          "bytes an entry; default 4194304)."),
        click.option("--coarse-entries", type=click.IntRange(min=1), metavar="N",
                     help="lp: largest coarsest graph (entries) partitioned in memory on "
                          "one worker (default 4194304)."),
        click.option("--work-dir", type=str,
                     help="lp: parent folder of the temporary shard files, created when "
                          "missing, or an s3://, gs:// or hdfs:// URI (default: the "
                          "system's temp folder; pipeline with a URI --out: "
                          "OUT/.graphshard-work; with Ray on several machines, a URI or "
                          "a shared folder)."),
        click.option("--balance-edges/--no-balance-edges", default=None,
                     help="lp: balance the in-edges per part as well as the nodes (a second "
                          "constraint; the default): parts of a skewed graph then store "
                          "about the same number of edges.  --no-balance-edges: nodes only.")]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _dispatch_options(fn: Any) -> Any:
    """The options of step 2 (``dispatch`` and ``pipeline``), but ``--out``."""
    options = [
        click.option("--name", help="Graph name (default: the chunked metadata's graph_name)."),
        click.option("--halo", type=click.IntRange(min=1), default=1, show_default=True),
        click.option("--save-orig-ids", "--save-orig-nids", "--save-orig-eids",
                     "save_orig_ids", is_flag=True,
                     help="Write the original node and edge IDs per part (orig_nids/"
                          "orig_eids; the three names are one flag, as for partition)."),
        click.option("--memory-budget", metavar="SIZE",
                     help="Memory one task may use (e.g. 1.5G, more than 0); fails early if "
                          "a chunk or part cannot fit."),
        click.option("--trainers", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Trainers per machine: parts x trainers trainer parts are assigned "
                          "(dispatch: the assignment holds them), consecutive ones form a "
                          "part, node feature trainer_id, as `partition --trainers`.")]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _take_dispatch_options(options: dict[str, Any]) -> dict[str, Any]:
    """Remove the values of :func:`_dispatch_options` from ``options``; return them as
    :func:`~graphshard.pipeline.dispatch` arguments."""
    return {"graph_name": options.pop("name"), "num_hops": options.pop("halo"),
            "save_orig_ids": options.pop("save_orig_ids"),
            "memory_budget": _bytes(options.pop("memory_budget")),
            "num_trainers_per_machine": options.pop("trainers")}


_PARTS = click.option("--parts", "-k", type=click.IntRange(min=1), required=True)
_ASSIGN_METHOD = click.option(  # the names of pipeline.ASSIGN_METHODS (a test checks), not
    "--method", "-m", default="lp", show_default=True,  # imported: slow (TUNING.md)
    type=click.Choice(["lp", "random", "hash"]),
    help="lp: multilevel label propagation over the edge chunks; random: node counts only; "
         "hash: original node ID (node feature node_id, else the homogeneous ID) % parts.")


@cli.command()
@click.argument("chunked", type=click.Path(path_type=Path))
@_PARTS
@_ASSIGN_METHOD
@click.option("--import", "import_from", type=click.Path(path_type=Path),
              help="Take the assignment from a ParMETIS file or a folder of <ntype>.txt "
                   "instead of computing one.")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="Assignment folder (new, empty, or an earlier assignment, which is "
                   "replaced).")
@_assign_options
@_engine_options
def assign(chunked: Path, parts: int, method: str, import_from: Path | None, out: Path,
           engine: str, address: str | None, **options: Any) -> None:
    """Step 1 of the pipeline: a part for every node of a chunked graph.

    Writes DGL's partition-assignment layout: <ntype>.txt (line i = part of node i), a
    binary <ntype>.npy copy and assignment.json.

    \b
    Example:
      graphshard assign chunked/ --parts 4 --method lp --out assign/
      graphshard assign chunked/ -k 64 -m lp --max-task-entries 8000000 --out assign/
    """
    from .pipeline import assign as run_assign
    from .pipeline import import_assignment

    _expect_folder(chunked, "assign")
    if import_from is not None:
        result = import_assignment(import_from, chunked, out, num_parts=parts)
    else:
        result = run_assign(chunked, parts, out, method=method,
                            use_ray=engine == "ray" or bool(address), address=address,
                            **options)
    table = Table("part", "nodes", title=f"{result.out_dir}: {result.method}, "
                  f"{result.seconds:.2f}s", title_justify="left")
    for p, n in enumerate(result.part_sizes):
        table.add_row(str(p), f"{n:,}")
    console.print(table)


@cli.command()
@click.argument("chunked")
@click.argument("assignment")
@click.option("--out", "-o", required=True,
              help="Folder of the partitions. CHUNKED, ASSIGNMENT and --out may be s3://, "
                   "gs://, hdfs:// URIs: each task copies what it reads to node-local "
                   "scratch, and with a URI --out the work folder is OUT/.graphshard-work.")
@_dispatch_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@_engine_options
def dispatch(chunked: str, assignment: str, out: str, as_json: bool, engine: str,
             address: str | None, **options: Any) -> None:
    """Step 2 of the pipeline: write the partitions of a chunked graph, out of core.

    The output is the same as `graphshard partition` with that assignment. Run the same
    command again after a crash: finished pieces are verified and reused.

    \b
    Example:
      graphshard dispatch chunked/ assign/ --out parts/ --memory-budget 1.5G
    """
    from .pipeline import dispatch as run_dispatch

    if not fsys.is_remote(chunked):
        _expect_folder(fsys.local_path(chunked), "dispatch")
    result = run_dispatch(chunked, assignment, out, use_ray=engine == "ray" or bool(address),
                          address=address, **_take_dispatch_options(options))
    _render(result.report, result.config_path, as_json)


@cli.command()
@click.argument("chunked")
@_PARTS
@_ASSIGN_METHOD
@click.option("--out", "-o", required=True,
              help="Folder of the partitions. CHUNKED and --out may be s3://, gs://, hdfs:// "
                   "URIs: each task copies what it reads to node-local scratch, and with a "
                   "URI --out the work folder is OUT/.graphshard-work.")
@click.option("--assign-out", type=click.Path(path_type=Path),
              help="Folder of the assignment (default: OUT/assignment).")
@_assign_options
@_dispatch_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@_engine_options
def pipeline(chunked: str, parts: int, method: str, out: str, assign_out: Path | None,
             as_json: bool, engine: str, address: str | None, **options: Any) -> None:
    """Both steps in one command: assign, then dispatch, on one Ray.

    Takes the options of `graphshard assign` and `graphshard dispatch`; a local Ray is
    started once for both. Run the same command again after a crash: a finished
    assignment (same input, method, parts and options; files checked) and the finished
    dispatch pieces are reused. So is the assignment when only dispatch options change.

    \b
    Example:
      graphshard pipeline chunked/ --parts 16 --method lp --balance-edges --out parts/
    """
    from .pipeline import run_pipeline

    if not fsys.is_remote(chunked):
        _expect_folder(fsys.local_path(chunked), "pipeline")
    step2 = _take_dispatch_options(options)
    result = run_pipeline(chunked, parts, out, method=method, assign_dir=assign_out,
                          use_ray=engine == "ray" or bool(address), address=address,
                          assign_options=options, dispatch_options=step2)
    report = replace(result.partitions.report,
                     seconds={"assign": result.assignment.seconds,
                              **result.partitions.report.seconds})
    _render(report, result.partitions.config_path, as_json)


@cli.command()
@click.argument("config")
@click.option("--address", metavar="ADDR", envvar="RAY_ADDRESS", show_envvar=True,
              help="Ray cluster to run on (e.g. auto, HEAD_IP:6379 or ray://head:10001; "
                   "default: a local Ray started here, listening on 127.0.0.1 only).")
@click.option("--placement", default="spread", show_default=True, metavar="RULE",
              help="Where the servers run: spread (one per node while nodes last), pack "
                   "(all on this command's node), or P=NODE,... pins partition P to a node "
                   "(a node ID, or its first 8+ hex digits, or a node's IP; partitions not "
                   "named are spread). A server whose node is lost is restarted on "
                   "another node.")
@click.option("--detach", is_flag=True,
              help="Leave the servers running after this command exits (needs --address).")
@click.option("--stop", is_flag=True, help="Stop the running servers of CONFIG instead.")
@click.option("--for", "duration", type=float, metavar="SECONDS",
              help="Serve for this long, then stop (default: until Ctrl-C).")
@click.option("--max-restarts", type=click.IntRange(min=0), default=3, show_default=True,
              help="Times Ray restarts a dead server.")
def serve(config: str, address: str | None, placement: str, detach: bool, stop: bool,
          duration: float | None, max_restarts: int) -> None:
    """Start one graph server per partition on Ray and print where they run.

    CONFIG is the partition config JSON, a path or an s3://, gs://, hdfs:// URI (each
    server then copies its part to its node's scratch folder once and checks it).
    The table shows each partition's Ray node (ID and IP) and process. It also prints the
    line that connects a trainer from another process, e.g.
    dg = graphshard.distributed.DistGraph('/abs/parts/rmat.json', address='127.0.0.1:PORT').
    Without --address (or RAY_ADDRESS) the servers run on a Ray started here, listening
    on 127.0.0.1: connect from this machine while the command runs. With --address,
    connect from any machine of the cluster (the config at the same path there); every
    node that may run a server must see the partition folder at the same path.

    \b
    Example:
      graphshard serve parts/rmat.json --for 60
      graphshard serve parts/rmat.json --address auto --placement spread --detach
    """
    import time

    from . import dist
    from .distributed.placement import parse_placement
    from .storage import fsys

    if stop:
        dist.shutdown(config, address=address)
        console.print(f"stopped the servers of {config}")
        return
    if detach and not address:
        raise click.UsageError("--detach needs --address: a local Ray stops with this command")
    try:
        rule = parse_placement(placement)
    except GraphshardError as exc:
        raise click.BadParameter(str(exc), param_hint="--placement") from exc
    handle = dist.serve(config, address=address, placement=rule, detached=detach,
                        max_restarts=max_restarts)
    table = Table("part", "actor", "node", "ip", "pid",
                  title=f"serving {fsys.shown(handle.config)}",
                  title_justify="left")
    for pl, name in zip(handle.places, handle.names, strict=True):
        table.add_row(str(pl.part_id), name, pl.node_id[:12], pl.node_ip, str(pl.pid))
    console.print(table)
    where = ("from any machine of the cluster (the config at this path there)" if address
             else "from another process on this machine, while this command runs")
    # plain echo, not rich: the line must not wrap, it is meant to be copied
    click.echo(f"address: {handle.address}")
    click.echo(f"connect {where}:\n  import graphshard\n  {handle.connect_code()}")
    sys.stdout.flush()
    if detach:
        return
    try:
        if duration is None:
            click.echo("serving; Ctrl-C stops the servers", err=True)
            while True:
                time.sleep(3600)
        time.sleep(duration)
    except KeyboardInterrupt:
        pass
    finally:
        handle.shutdown()


@cli.command()
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--plot", type=click.Path(path_type=Path),
              help="Write the loss/accuracy curve here (PNG; default: train_curve.png in the "
                   "config's output_path, if it names one).")
@click.option("--checkpoint-dir", type=click.Path(path_type=Path),
              help="Checkpoint after every epoch; started again, the run resumes from it "
                   "(overrides the config's checkpoint_dir).")
@click.option("--restart", is_flag=True, help="Ignore an existing checkpoint and start over.")
@click.option("--trainers", type=click.IntRange(min=1),
              help="Trainer processes (sage, link, hetero: DDP on Ray; overrides "
                   "num_trainers).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-epoch metrics as JSON.")
@click.pass_context
def train(ctx: click.Context, config: Path, plot: Path | None, checkpoint_dir: Path | None,
          restart: bool, trainers: int | None, as_json: bool) -> None:
    """Train from a YAML config with PGL/Graph4Rec keys (task: walk, sage, link or hetero).

    Shows a progress bar (on a TTY) and one metrics line per epoch on stderr (neither with
    -q), prints the per-epoch table and (sage, link, hetero) the best validation epoch, the
    test metrics at that epoch (the score to report) and whether the config's patience
    stopped the run early (--json: under "best"), and writes the curve as a PNG.  Epochs
    are counted from 0 everywhere: the table, the stderr lines, --json ("epoch", and
    "best_epoch") and the Python API's best_epoch.  With a checkpoint folder, the same
    command started again after a stop resumes where it stopped.  A walk config's unset
    keys take DeepWalk's setting (80 walks of 40, window 10, 128 dimensions, word2vec's
    per-pair SGD on a local graph, Adagrad on a partitioned one; docs/graph4rec.md lists
    them), not the Graph4Rec example's values.
    Needs the train extra: pip install 'graphshard[train]' (and [plot] for the PNG).

    \b
    Example:
      graphshard train walk.yaml
      graphshard train sage.yaml --trainers 2 --checkpoint-dir ckpt/ --plot curve.png
      graphshard train link.yaml --json
      graphshard train hetero.yaml --trainers 2    # R-GCN/HGT, e.g. hgb: DBLP.zip
    """
    import importlib.util

    from .train import read_config as read_train_config
    from .train import train_from_config
    from .train.curves import plot_curves

    has_mpl = importlib.util.find_spec("matplotlib") is not None
    if plot is not None and not has_mpl:  # fail before training, not after
        from ._util.optional import import_optional

        import_optional("matplotlib", "graphshard train --plot")
    overrides: dict[str, Any] = {}
    if checkpoint_dir is not None:
        overrides["checkpoint_dir"] = str(checkpoint_dir.resolve())
    if restart:
        overrides["resume"] = False
    if trainers is not None:
        overrides["num_trainers"] = trainers
    quiet = ctx.parent is not None and ctx.parent.params.get("quiet", False)

    def report(epoch: int, metrics: dict[str, float]) -> None:
        if not quiet:
            click.echo(f"epoch {epoch}: " + ", ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in metrics.items()), err=True)

    result = train_from_config(config, overrides=overrides, on_epoch=report)
    if result is None:
        console.print("need_train is false: embeddings dumped, nothing trained")
        return
    if plot is None and has_mpl:  # the default curve only where matplotlib is installed
        out = read_train_config(config).get("output_path")
        if out is not None:
            base = config.resolve().parent
            plot = (Path(out) if Path(out).is_absolute() else base / out) / "train_curve.png"
    if plot is not None:
        plot_curves(result, plot, title=f"{config.name}: {type(result).__name__}")
    _render_training(result, plot, as_json)


def _render_training(result: Any, plot: Path | None, as_json: bool) -> None:
    """The per-epoch table (epochs from 0, the best validation epoch marked), the best
    epoch's validation and test metrics, and the curve's path; or all of it as JSON."""
    if hasattr(result, "columns"):  # {name: per-epoch list}, a Link/HeteroResult's metrics
        table_cols: dict[str, list[Any]] = result.columns()
    else:
        table_cols = {c: getattr(result, c) for c in (
            "losses", "val_acc", "test_acc", "num_pairs", "samples", "seconds",
            "eval_seconds") if getattr(result, c, None)}
    cols = list(table_cols)
    rows = list(zip(*table_cols.values(), strict=False))
    summary = result.summary() if hasattr(result, "summary") else None
    if as_json:
        doc: dict[str, Any] = {"result": type(result).__name__, "plot": plot and str(plot)}
        if summary is not None:
            doc["best"] = summary
        doc["epochs"] = [{"epoch": e, **{c: None if v != v else v  # NaN: not evaluated
                                         for c, v in zip(cols, r, strict=True)}}
                         for e, r in enumerate(rows)]
        click.echo(json.dumps(doc, indent=2))
        return
    best = -1 if summary is None else summary["best_epoch"]
    span = f"epochs 0-{len(rows) - 1}" if rows else "no epochs"
    title = (f"{type(result).__name__}: {span} (counted from 0)"
             + ("; * = best validation epoch" if summary is not None else ""))
    table = Table(Column("epoch", no_wrap=True, min_width=5), *cols)
    for e, r in enumerate(rows):
        table.add_row(f"{e} *" if e == best else str(e),
                      *(f"{v:.4f}" if isinstance(v, float) else str(v) for v in r))
    # piped or captured output is not cut to 80 columns: every metric column in full
    need = 8 + sum(max(len(c), 7) + 3 for c in cols)
    wide = console if console.is_terminal else Console(width=max(console.width, need))
    click.echo(title)  # a plain line: a table's title wraps to the table's width
    wide.print(table)
    if summary is not None:  # plain lines: never wrapped, easy to grep
        click.echo(_best_lines(summary))
    elif rows:
        click.echo(f"no validation split ({type(result).__name__}): the result is the last "
                   f"epoch's, epoch {len(rows) - 1}")
    if plot is not None:
        click.echo(f"curve: {plot}")


def _best_lines(summary: dict[str, Any]) -> str:
    """The best validation epoch and the metrics there, e.g.::

        best validation epoch: 2 of epochs 0-4, by val acc (stopped early: patience)
          val at epoch 2:  acc 0.8100
          test at epoch 2: acc 0.7900
    """
    def fmt(split: str) -> str:
        return ", ".join(f"{m} " + ("-" if v is None else f"{v:.4f}")
                         for m, v in summary[split].items())

    e, n = summary["best_epoch"], summary["epochs"]
    monitor = summary.get("monitor", next(iter(summary["val"]), "-"))
    stop = " (stopped early: patience)" if summary["stopped_early"] else ""
    return (f"best validation epoch: {e} of epochs 0-{n - 1}, by val {monitor}{stop}\n"
            f"  val at epoch {e}:  {fmt('val')}\n"
            f"  test at epoch {e}: {fmt('test')}")


@cli.command("export")
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
    from .partition.dgl_io import export_dgl

    path = export_dgl(config, out, graphbolt=graphbolt)
    console.print(f"DGL partition config: {path}")


@cli.command("import")
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
    from .partition.dgl_io import import_dgl

    cfg = import_dgl(config, out)
    console.print(f"{cfg.path}: {cfg.num_parts} parts of {cfg.graph_name!r}, node types "
                  f"{cfg.ntypes}, {len(cfg.etypes)} edge types")


def _parse_option(item: str) -> tuple[str, Any]:
    key, eq, value = item.partition("=")
    if not eq:
        raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--option")
    for cast in (int, float):
        try:
            return key, cast(value)
        except ValueError:
            pass
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    return key, value


def _render(report: PartitionReport, config_path: Path | str, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"config": str(config_path), **report.to_dict()}, indent=2))
        return
    summary = Table(title=f"{config_path}", show_header=False, box=None)
    summary.add_row("method", report.method)
    summary.add_row("nodes / edges", f"{report.num_nodes:,} / {report.num_edges:,}")
    summary.add_row("edge cut (directed edges)",
                    f"{report.edge_cut:,} ({report.cut_ratio:.2%} of edges)")
    if report.undirected_edge_cut is not None:
        summary.add_row("edge cut (undirected, as METIS counts)",
                        f"{report.undirected_edge_cut:,}")
    summary.add_row("communication volume", f"{report.comm_volume:,}")
    summary.add_row("balance nodes / edges", f"{report.node_balance:.3f} / "
                    f"{report.edge_balance:.3f}")
    summary.add_row("replication", f"{report.replication:.3f}")
    if report.seconds:
        summary.add_row("seconds", ", ".join(f"{k} {v:.2f}" for k, v in report.seconds.items()))
    console.print(summary)
    table = Table("part", "inner nodes", "inner edges", "halo nodes",
                  *(f"{t} nodes" for t in report.part_nodes_per_type
                    if len(report.part_nodes_per_type) > 1))
    for p in range(report.num_parts):
        per_type = ([f"{c[p]:,}" for c in report.part_nodes_per_type.values()]
                    if len(report.part_nodes_per_type) > 1 else [])
        table.add_row(str(p), f"{report.part_nodes[p]:,}", f"{report.part_edges[p]:,}",
                      f"{report.halo_nodes[p]:,}", *per_type)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``graphshard`` command; returns the exit status."""
    try:
        cli.main(args=argv, prog_name="graphshard", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (GraphshardError, OSError, MemoryError) as exc:
        # expected failures: bad input, a file system that refuses (disk full, read-only,
        # missing), too little memory; anything else is a bug and keeps its traceback
        if _verbose or os.environ.get("GRAPHSHARD_DEBUG"):
            traceback.print_exc()
        click.echo(f"graphshard: error: {_one_line(exc)}", err=True)
        return 1
    finally:
        _reset_verbose()
        quiet_ray(False)
    return 0


def _reset_verbose() -> None:
    global _verbose
    _verbose = False


def _one_line(exc: BaseException) -> str:
    """The message of an expected error on one line (an OSError names its file)."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, MemoryError):
        text = f"out of memory: {text}"
    elif isinstance(exc, OSError) and not isinstance(exc, GraphshardError) \
            and exc.strerror and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror}"  # not "[Errno 28] ...: 'path'"
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
