"""``graphshard warmup``: compile the kernels once, ahead of the runs that use them."""

from __future__ import annotations

import click

from ..warmup import STEPS, warm_kernels

__all__ = ["warmup"]


@click.command("warmup")
@click.option("--step", "steps", multiple=True, type=click.Choice(list(STEPS)),
              help="Only this step (repeatable); default: all.")
def warmup(steps: tuple[str, ...]) -> None:
    """Compile graphshard's numba kernels into numba's on-disk cache.

    The first run of each kernel compiles it (seconds to minutes on a busy machine); the
    cache makes every later process start at once.  Run this once after installing, e.g.
    in a Docker build, or share one $NUMBA_CACHE_DIR between machines.

    \b
    Example:
      graphshard warmup
      graphshard warmup --step sampling --step partition
    """
    report = warm_kernels(list(steps) or None)
    for name, seconds in report.steps:
        click.echo(f"{name:<10} {seconds:7.1f} s")
    for name, why in report.skipped.items():
        click.echo(f"{name:<10} skipped ({why})")
    click.echo(f"{'total':<10} {report.seconds:7.1f} s")
