"""The ``graphshard`` command: parse, call one library function, render the result.

One module per command group (STYLE §12): :mod:`~graphshard.cli.partition` (partition,
inspect), :mod:`~graphshard.cli.convert` (convert, chunk), :mod:`~graphshard.cli.pipeline`
(assign, dispatch, pipeline), :mod:`~graphshard.cli.serve`, :mod:`~graphshard.cli.train`,
:mod:`~graphshard.cli.interop` (export, import), :mod:`~graphshard.cli.warmup`; the group
and :func:`main` in :mod:`~graphshard.cli.root`.  Results go to stdout (a table, or JSON
with ``--json``); logs and progress bars to stderr.  Exit status: 0 ok, 1 for a graphshard
error, a file-system error or too little memory (one line naming the file/field; the
traceback too with ``-v`` or GRAPHSHARD_DEBUG=1), 2 for bad usage.

Example:
    >>> from click.testing import CliRunner
    >>> result = CliRunner().invoke(cli, ["--help"])
    >>> result.exit_code, "pipeline" in result.output
    (0, True)
"""

from __future__ import annotations

from .convert import chunk, convert
from .interop import export, import_
from .partition import inspect, partition
from .pipeline import assign, dispatch, pipeline
from .root import cli, main
from .serve import serve
from .train import train
from .warmup import warmup

__all__ = ["cli", "main"]

for _command in (partition, inspect, convert, chunk, assign, dispatch, pipeline, serve, train,
                 export, import_, warmup):
    cli.add_command(_command)
