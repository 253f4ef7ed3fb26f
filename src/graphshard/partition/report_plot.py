"""Draw a :class:`~graphshard.partition.report.PartitionReport` as a PNG (matplotlib)."""

from __future__ import annotations

import os

import numpy as np

from .._util.optional import import_optional
from ..storage.files import atomic_path
from .report import PartitionReport

__all__ = ["plot_report"]


def plot_report(report: PartitionReport, path: str | os.PathLike[str], *, title: str = ""
                ) -> None:
    """Bars per part: inner nodes (stacked by type), inner edges and halo nodes.

    Example:
        >>> import tempfile, pathlib
        >>> r = PartitionReport("metis", 2, 10, 20, 3, 4, [5, 5], [9, 11], {"_N": [5, 5]},
        ...                     [2, 2])
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.png"
        >>> plot_report(r, p)
        >>> p.read_bytes()[:4] == b"\\x89PNG"
        True
    """
    matplotlib = import_optional("matplotlib", "graphshard inspect --plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = np.arange(report.num_parts)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    bottom = np.zeros(report.num_parts)
    for ntype, counts in report.part_nodes_per_type.items():
        axes[0].bar(parts, counts, bottom=bottom, label=ntype)
        bottom += np.asarray(counts)
    axes[0].axhline(report.num_nodes / report.num_parts, color="k", ls="--", lw=1)
    axes[0].set_title(f"inner nodes (balance {report.node_balance:.3f})")
    if len(report.part_nodes_per_type) > 1:
        axes[0].legend(fontsize="small")
    axes[1].bar(parts, report.part_edges, color="tab:orange")
    axes[1].axhline(report.num_edges / report.num_parts, color="k", ls="--", lw=1)
    axes[1].set_title(f"inner edges (balance {report.edge_balance:.3f})")
    axes[2].bar(parts, report.halo_nodes, color="tab:red")
    axes[2].set_title(f"halo nodes (replication {report.replication:.2f})")
    for ax in axes:
        ax.set_xlabel("part")
        ax.set_xticks(parts)
    fig.suptitle(f"{title}  method={report.method}  edge cut={report.edge_cut:,} "
                 f"({report.cut_ratio:.2%})")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
