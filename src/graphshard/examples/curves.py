"""Training curves as a PNG (matplotlib): loss, and accuracy when the run measured it.

Unstable API (issue 7).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._util.files import atomic_path
from .._util.optional import import_optional

__all__ = ["plot_curves"]


def plot_curves(result: Any, path: str | os.PathLike[str], *, title: str = "") -> None:
    """Draw a training result's curves and write them to ``path`` (PNG, atomically).

    A :class:`~graphshard.examples.sage.TrainResult` gives two panels: the mean training loss
    per epoch, and validation and test accuracy at the evaluated epochs (a
    :class:`~graphshard.examples.hetero.HeteroResult`: Micro- and Macro-F1).  A
    :class:`~graphshard.examples.walk_embed.WalkEmbeddingResult` gives the loss of every step
    (with a running mean) and the mean loss per epoch.

    Args:
        result: A TrainResult, HeteroResult or WalkEmbeddingResult.
        path: Output PNG.
        title: Figure title.

    Raises:
        MissingDependencyError: matplotlib is not installed (``graphshard[plot]``).

    Example:
        >>> import tempfile, pathlib
        >>> from graphshard.examples.sage import TrainResult
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
    epochs = np.arange(1, len(result.losses) + 1)
    scored = hasattr(result, "val_acc") or hasattr(result, "val_macro_f1")
    if scored:
        left.plot(epochs, result.losses, marker=".", color="tab:blue")
        left.set_title("training loss")
        curves = ((("val_acc", "val", "tab:orange"), ("test_acc", "test", "tab:green"))
                  if hasattr(result, "val_acc") else
                  (("val_macro_f1", "val Macro-F1", "tab:orange"),
                   ("test_macro_f1_history", "test Macro-F1", "tab:green"),
                   ("val_micro_f1", "val Micro-F1", "tab:red"),
                   ("test_micro_f1_history", "test Micro-F1", "tab:purple")))
        for name, label, color in curves:
            acc = np.asarray(getattr(result, name), dtype=float)
            seen = ~np.isnan(acc)
            if seen.any():
                right.plot(epochs[seen], acc[seen], marker=".", color=color,
                           label=f"{label} (last {acc[seen][-1]:.3f})")
        right.set_title("accuracy" if hasattr(result, "val_acc") else "F1")
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
    if scored:
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
