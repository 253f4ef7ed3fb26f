"""The out-of-core commands: ``graphshard assign`` (step 1), ``graphshard dispatch``
(step 2) and ``graphshard pipeline`` (both, on one Ray)."""

from __future__ import annotations

import logging
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..pipeline.assign import ASSIGN_METHODS
from ..storage import fsys
from ._common import _expect_folder, _render, console

__all__ = ["assign", "dispatch", "pipeline"]

log = logging.getLogger(__name__)


def _engine_options(fn: Any) -> Any:
    fn = click.option("--engine", type=click.Choice(["auto", "ray", "local"]), default="auto",
                      show_default=True,
                      help="ray: tasks on a local Ray started for the run (or --address); "
                           "local: in this process; auto: local up to "
                           f"{AUTO_LOCAL_EDGES:,} edges (Ray's start and stop cost more "
                           "than they save there), else ray (ray too with --address, "
                           "$RAY_ADDRESS or a remote input).")(fn)
    return click.option("--address", metavar="ADDR",
                        help="Join this Ray cluster (e.g. ray://head:10001 or auto; default: "
                             "a local Ray listening on 127.0.0.1 only).")(fn)


#: ``--engine auto`` runs in this process up to this many edges (Ray's start and shutdown
#: took ~25-90 s on 2 cores for output identical to the local engine's).
AUTO_LOCAL_EDGES = 10_000_000


def _use_ray(engine: str, address: str | None, chunked: str | os.PathLike[str]) -> bool:
    """``--engine ray`` or an ``--address`` to join; both with ``--engine local``: refused.
    ``auto``: Ray for a remote input, with ``$RAY_ADDRESS`` set (a cluster to join, as
    Ray's own tools read it), or above :data:`AUTO_LOCAL_EDGES` edges."""
    if engine == "local" and address:
        raise click.UsageError("--engine local runs in this process and --address joins a "
                               "Ray cluster: give one of them")
    if engine != "auto" or address:
        return engine == "ray" or bool(address)
    if fsys.is_remote(chunked) or os.environ.get("RAY_ADDRESS"):
        return True  # a remote input, or a cluster named to join: Ray
    from ..io.chunked import load_chunked_meta

    edges = sum(load_chunked_meta(chunked).num_edges.values())
    use_ray = edges > AUTO_LOCAL_EDGES
    log.info("--engine auto: %s (%d edges; local up to %d)", "ray" if use_ray else "local",
             edges, AUTO_LOCAL_EDGES)
    return use_ray


def _bytes(text: str | None) -> int | str | None:
    """``--memory-budget``: bytes from ``1.5G``, ``800M``, ``4096``; > 0 and finite; or
    ``"auto"`` (resolved by :func:`_budget` once the input is known)."""
    if text is None:
        return None
    if text.strip().lower() == "auto":
        return "auto"
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
                          "a chunk or part cannot fit. auto: what the largest chunk and "
                          "the average part need, plus a quarter, at least 1 GiB, refused "
                          "when a task per core would not fit in this machine's memory."),
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


def _budget(step2: dict[str, Any], chunked: str | os.PathLike[str], num_parts: int) -> None:
    """Resolve ``--memory-budget auto`` in ``step2`` for ``num_parts`` parts of ``chunked``."""
    if step2.get("memory_budget") != "auto":
        return
    from ..io.chunked import load_chunked_meta
    from ..pipeline.budget import auto_memory_budget

    step2["memory_budget"] = auto_memory_budget(load_chunked_meta(chunked), num_parts)
    log.info("--memory-budget auto: %.2f GiB a task", step2["memory_budget"] / 2**30)


_PARTS = click.option("--parts", "-k", type=click.IntRange(min=1), required=True)
_ASSIGN_METHOD = click.option(  # choices from the one method registry (the pipeline's too)
    "--method", "-m", default="lp", show_default=True,
    type=click.Choice(sorted(ASSIGN_METHODS)),
    help="Partition method: " + ", ".join(sorted(n for n, m in ASSIGN_METHODS.items()
                                                 if m.stream is not None))
         + " stream the chunks in bounded memory; the others (" + ", ".join(sorted(
             n for n, m in ASSIGN_METHODS.items() if m.stream is None))
         + ") read the adjacency into this process's memory first. `graphshard partition "
           "--help` describes each.")


@click.command()
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
    from ..pipeline import assign as run_assign
    from ..pipeline import import_assignment

    _expect_folder(chunked, "assign")
    if import_from is not None:
        result = import_assignment(import_from, chunked, out, num_parts=parts)
    else:
        result = run_assign(chunked, parts, out, method=method,
                            use_ray=_use_ray(engine, address, chunked), address=address,
                            **options)
    table = Table("part", "nodes", title=f"{result.out_dir}: {result.method}, "
                  f"{result.seconds:.2f}s", title_justify="left")
    for p, n in enumerate(result.part_sizes):
        table.add_row(str(p), f"{n:,}")
    console.print(table)


@click.command()
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
    from ..pipeline import dispatch as run_dispatch

    if not fsys.is_remote(chunked):
        _expect_folder(fsys.local_path(chunked), "dispatch")
    step2 = _take_dispatch_options(options)
    if step2["memory_budget"] == "auto":
        import json

        record = Path(assignment) / "assignment.json"
        try:
            parts = int(json.loads(record.read_text())["num_parts"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise click.UsageError(f"--memory-budget auto needs the part count from "
                                   f"{record}: {exc}") from exc
        _budget(step2, chunked, max(1, parts // step2["num_trainers_per_machine"]))
    result = run_dispatch(chunked, assignment, out, use_ray=_use_ray(engine, address, chunked),
                          address=address, **step2)
    _render(result.report, result.config_path, as_json)


@click.command()
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
    from ..pipeline import run_pipeline

    if not fsys.is_remote(chunked):
        _expect_folder(fsys.local_path(chunked), "pipeline")
    step2 = _take_dispatch_options(options)
    _budget(step2, chunked, parts)
    result = run_pipeline(chunked, parts, out, method=method, assign_dir=assign_out,
                          use_ray=_use_ray(engine, address, chunked), address=address,
                          assign_options=options, dispatch_options=step2)
    report = replace(result.partitions.report,
                     seconds={"assign": result.assignment.seconds,
                              **result.partitions.report.seconds})
    _render(report, result.partitions.config_path, as_json)
