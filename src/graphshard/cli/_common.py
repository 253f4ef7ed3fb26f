"""What several commands share: reading INPUT (format, reader options, edge-list layout
and policy), refusing the wrong kind of path with what to run instead, ``-O KEY=VALUE``,
sizes, and the partition report's rendering.  Parsing and rendering only (STYLE §12)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ..errors import ValidationError
from ..io.convert import COMPRESSED, READERS, WRITERS, format_names, format_of_path
from ..partition import PartitionReport
from ..storage import fsys

#: ``--format``/``--from`` choices and ``--to`` choices, from the io format registry.
_READ_FORMATS = format_names(READERS)
_WRITE_FORMATS = [*format_names(WRITERS), "graphshard"]
_ALIASES = "; ".join(f"{', '.join(sorted(f.aliases))} ({f.name} with that fmt)"
                     for f in READERS.values() if f.aliases)
_FORMAT_HELP = (f"Input format: {', '.join(READERS)}, or an alias: {_ALIASES}; default from "
                "the suffix")

console = Console()


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
        click.option("--relabel/--no-relabel", default=None,
                     help="Edge lists: map the node IDs that appear to 0..n-1 (sparse IDs, "
                          "as SNAP's; originals kept as node feature node_id), or keep them "
                          "as they are (default; partition refuses IDs most of which appear "
                          "in no edge unless told --no-relabel)."),
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
        if not layout["delimiter"]:
            raise click.BadParameter("empty; give a character, or tab, space, comma or "
                                     "semicolon", param_hint="--delimiter")
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
    """The partition report as tables, or JSON; the config's URI without credentials."""
    config_path = fsys.shown(config_path)  # s3://KEY:SECRET@bucket/... -> s3://bucket/...
    if as_json:
        click.echo(json.dumps({"config": config_path, **report.to_dict()}, indent=2))
        return
    summary = Table(title=config_path, show_header=False, box=None)
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
    _flag_edge_imbalance(report)


#: Edge balance above which ``partition`` / ``inspect`` say that trainers get unequal work.
EDGE_IMBALANCE_FLAG = 1.2


def _flag_edge_imbalance(report: PartitionReport) -> None:
    """One line on stderr when the parts' in-edges (a trainer's work) are far apart."""
    if report.edge_balance <= EDGE_IMBALANCE_FLAG or report.num_parts < 2:
        return
    edges = report.part_edges
    heavy, light = max(range(len(edges)), key=edges.__getitem__), \
        min(range(len(edges)), key=edges.__getitem__)
    click.echo(f"graphshard: warning: edge balance {report.edge_balance:.2f}: part {heavy} "
               f"holds {edges[heavy]:,} edges, part {light} {edges[light]:,}, so their "
               "trainers get unequal work; partition with --balance-edges (the CLI's "
               "default) to balance them", err=True)
