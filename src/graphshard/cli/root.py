"""The ``graphshard`` group (``-q``, ``-v``, ``--version``) and :func:`main`, which turns
expected errors into one line and an exit status.

Results go to stdout (a table, or JSON with ``--json``); logs and progress bars to stderr.
Exit status: 0 ok, 1 for a graphshard error, a file-system error (disk full, no
permission, a missing file) or too little memory: one line naming the file/field, the
traceback too with ``-v`` or GRAPHSHARD_DEBUG=1; 2 for bad usage (a bad option value).
"""

from __future__ import annotations

import logging
import os
import sys
import traceback

import click

from .._util.progress import disable_progress
from ..errors import GraphshardError
from ..runtime.ray import quiet_ray

__all__ = ["cli", "main"]

#: Set by ``-v``: errors show their traceback too (as with GRAPHSHARD_DEBUG=1).
_verbose = False


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
