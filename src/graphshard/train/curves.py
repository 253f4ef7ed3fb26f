"""Training curves as a PNG (matplotlib): loss, and accuracy when the run measured it.

Unstable API (issue 7).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..storage.files import atomic_path

__all__ = ["plot_curves"]


def plot_curves(result: Any, path: str | os.PathLike[str], *, title: str = "") -> None:
    """Draw a training result's curves and write them to ``path`` (PNG, atomically).

    A :class:`~graphshard.train.sage.TrainResult` gives two panels: the mean training loss
    per epoch, and validation and test accuracy at the evaluated epochs; a result with a
    ``monitor`` (:class:`~graphshard.train.link.LinkResult`,
    :class:`~graphshard.train.hetero.HeteroResult`) the same with that metric.  A
    :class:`~graphshard.train.walk_embed.WalkEmbeddingResult` gives the loss of every step
    (with a running mean) and the mean loss per epoch.

    Args:
        result: A TrainResult, HeteroResult or WalkEmbeddingResult.
        path: Output PNG.
        title: Figure title.

    Raises:
        MissingDependencyError: matplotlib is not installed (``graphshard[plot]``).

    Example:
        >>> import tempfile, pathlib
        >>> from graphshard.train.sage import TrainResult
        >>> r = TrainResult([1.0, 0.5], [0.6, 0.7], [0.6, 0.72], [1.0, 1.0], [0.1, 0.1], None)
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "curve.png"
        >>> plot_curves(r, p)
        >>> p.read_bytes()[:4] == b"\\x89PNG"
        True
    """
    matplotlib = import_optional("matplotlib", "training curves")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    epochs = np.arange(len(result.losses))  # counted from 0, as the results and the CLI
    scored = _scores(result)
    if scored is not None:
        loss_name, metric, curves = scored
        left.plot(epochs, result.losses, marker=".", color="tab:blue")
        left.set_title(f"training loss ({loss_name})")
        for (name, values), color in zip(curves.items(), ("tab:orange", "tab:green"),
                                         strict=True):
            acc = np.asarray(values, dtype=float)
            seen = ~np.isnan(acc)
            if seen.any():
                right.plot(epochs[seen], acc[seen], marker=".", color=color,
                           label=f"{name} (last {acc[seen][-1]:.3f})")
        right.set_title(metric)
        right.legend(fontsize="small")
        right.set_xlabel("epoch")
    else:
        steps = np.asarray(result.step_losses, dtype=float)
        left.plot(np.arange(1, len(steps) + 1), steps, lw=0.5, color="tab:blue", alpha=0.4)
        k = max(1, len(steps) // 50)
        if len(steps) >= k:
            mean = np.convolve(steps, np.ones(k) / k, mode="valid")
            left.plot(np.arange(k, len(steps) + 1), mean, color="tab:blue",
                      label=f"mean of {k} steps")
            left.legend(fontsize="small")
        left.set_title("loss per step")
        left.set_xlabel("step")
        right.plot(epochs, result.losses, marker="o", color="tab:red")
        right.set_title("mean loss per epoch")
        right.set_xlabel("epoch")
    if scored is not None:
        left.set_xlabel("epoch")
    from matplotlib.ticker import MaxNLocator

    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)


def _scores(result: Any) -> tuple[str, str, dict[str, Any]] | None:
    """(loss name, metric name, {"val": values, "test": values}) of a scored result."""
    if hasattr(result, "val_acc"):
        return "cross-entropy", "accuracy", {"val": result.val_acc, "test": result.test_acc}
    if hasattr(result, "monitor"):
        m = result.monitor
        return (getattr(result, "loss_name", "BCE"), m,
                {"val": result.val[m], "test": result.test[m]})
    return None
