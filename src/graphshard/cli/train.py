"""``graphshard train``: a trainer of :mod:`graphshard.train` from a YAML config, with its
per-epoch table, best epoch and curve."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Column, Table

from ._common import console

__all__ = ["train"]


@click.command()
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
    them), not the Graph4Rec example's values.  Several trainers (--trainers N) train from a
    partitioned graph, named by graph: in the config; a config whose graph is a dataset file
    (hgb:, shchur:) or generate: is refused before it is read, with the commands to run.
    Needs the train extra: pip install 'graphshard[train]' (and [plot] for the PNG).

    \b
    Example:
      graphshard train walk.yaml
      graphshard train link.yaml --json
      graphshard train hetero.yaml                  # R-GCN/HGT, hgb: DBLP.zip
      graphshard partition DBLP.zip --parts 2 --out parts/
      graphshard train hetero2.yaml --trainers 2    # the same with graph: parts/DBLP.json
      graphshard train sage.yaml --trainers 2 --checkpoint-dir ckpt/ --plot curve.png
    """
    import importlib.util

    from ..train import read_config as read_train_config
    from ..train import train_from_config
    from ..train.curves import plot_curves

    has_mpl = importlib.util.find_spec("matplotlib") is not None
    if plot is not None and not has_mpl:  # fail before training, not after
        from .._util.optional import import_optional

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
    if getattr(result, "note", "") and not as_json:  # routine training: how it ended
        click.echo(result.note)


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
