"""``graphshard convert`` (between graph formats) and ``graphshard chunk`` (any input to
DGL's chunked format, the pipeline's input)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..partition import build_partitions
from ..storage import fsys
from ._common import (
    _ALIASES,
    _FORMAT_HELP,
    _READ_FORMATS,
    _WRITE_FORMATS,
    READERS,
    WRITERS,
    _input_format,
    _input_options,
    _parse_option,
    _read_options,
    _reader_options,
    _render,
    console,
)

__all__ = ["chunk", "convert"]


@click.command()
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
    from ..io.convert import convert as run_convert

    opts = dict(_parse_option(o) for o in options)
    opts.update({f"read.{k}": v for k, v in _read_options(src_format, read, ()).items()})
    if dst_format == "graphshard":
        from ..io.convert import read_graph

        g = read_graph(src_format, list(inputs), **opts)
        result = build_partitions(g, Path(inputs[0]).name.split(".")[0], 1, out,
                                  part_method="hash")
        _render(result.report, result.config_path, False)
        return
    report = run_convert(src_format, list(inputs), dst_format, out, **opts)
    console.print(repr(report))


@click.command()
@click.argument("inputs", nargs=-1)
@click.option("--format", "fmt_in", type=click.Choice(_READ_FORMATS),
              help=f"{_FORMAT_HELP} of the first input.")
@click.option("--generate", metavar="SPEC",
              help="Write a generated R-MAT graph instead of reading INPUTS, chunk by chunk "
                   "(never all edges in memory): rmat:scale=S[,edge_factor=16] (Graph500: "
                   "2^S nodes) or rmat:nodes=N,edges=M, with features=F,classes=C (a node "
                   "feature, label and train/val/test masks), seed=, a=, b=, c=.")
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
def chunk(inputs: tuple[str, ...], fmt_in: str | None, generate: str | None, chunks: int,
          chunk_format: str, out: Path, options: tuple[str, ...], **read: Any) -> None:
    """Write any supported input in DGL's chunked graph format (the pipeline's input).

    \b
    Example:
      graphshard chunk edges.parquet --chunks 16 --out chunked/
      graphshard chunk wiki-Vote.txt --relabel --chunks 4 --out chunked/
      graphshard chunk --generate rmat:scale=20,features=16,classes=8 --chunks 8 --out rmat/
    """
    from ..io.convert import convert as run_convert

    if bool(inputs) == bool(generate):
        raise click.UsageError("give either INPUTS or --generate (one of them)")
    if generate:
        if fmt_in or options or any(v not in (None, False, ()) for v in read.values()):
            raise click.UsageError("reader options are for reading INPUTS, not for --generate")
        from ..datasets.rmat_stream import write_spec_chunked

        nodes, edges = write_spec_chunked(generate, out, chunks, fmt=chunk_format)
        console.print(f"wrote {fsys.shown(str(out))}: R-MAT, {nodes:,} nodes, {edges:,} edges "
                      f"in {min(chunks, max(nodes, edges))} chunks per type ({chunk_format})")
        return

    fmt = _input_format(Path(inputs[0]), fmt_in)
    opts = {f"read.{key}": value for key, value in _read_options(fmt, read, options).items()}
    report = run_convert(fmt, list(inputs), "chunked", out,
                         **{**opts, "write.num_chunks": chunks, "write.fmt": chunk_format})
    console.print(repr(report))
