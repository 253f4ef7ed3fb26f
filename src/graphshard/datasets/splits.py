"""Node splits made from labels: Shchur et al.'s per-class split of the gnn-benchmark graphs.

The gnn-benchmark ``.npz`` files (Amazon Computers/Photo, Coauthor CS/Physics) carry no
split; Shchur et al. (2018, "Pitfalls of Graph Neural Network Evaluation") draw 20 labelled
nodes per class for training and 30 per class for validation, and test on the rest.
:func:`shchur_split` draws that split, seeded, in a few vectorised NumPy passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError, check_choice

__all__ = ["NodeSplit", "shchur_split"]

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class NodeSplit:
    """Training, validation and test nodes as boolean masks (disjoint).

    Attributes:
        train_mask: bool ``(N,)``, a new array.
        val_mask: bool ``(N,)``.
        test_mask: bool ``(N,)``.
        skipped_classes: Classes left out of every mask (``small_classes="skip"``), in
            increasing order.
    """

    train_mask: BoolArray = field(repr=False)
    val_mask: BoolArray = field(repr=False)
    test_mask: BoolArray = field(repr=False)
    skipped_classes: tuple[int, ...] = ()

    def as_ndata(self) -> dict[str, BoolArray]:
        """The masks under the node-data names the trainers read by default
        (``train_mask``, ``val_mask``, ``test_mask``): ``g.ndata.update(split.as_ndata())``."""
        return {"train_mask": self.train_mask, "val_mask": self.val_mask,
                "test_mask": self.test_mask}

    def __repr__(self) -> str:
        skipped = f", skipped_classes={list(self.skipped_classes)}" if self.skipped_classes \
            else ""
        return (f"NodeSplit(train={int(self.train_mask.sum())}, val={int(self.val_mask.sum())}"
                f", test={int(self.test_mask.sum())}{skipped})")


def shchur_split(labels: npt.ArrayLike, *, train_per_class: int = 20,
                 val_per_class: int = 30, seed: int = 0,
                 small_classes: Literal["error", "skip"] = "error") -> NodeSplit:
    """Shchur et al.'s split: per class, ``train_per_class`` random nodes for training,
    the next ``val_per_class`` for validation, the rest of the class for testing.

    Within each class the nodes are ordered by one seeded random permutation of all nodes,
    so the split depends only on ``labels`` and ``seed`` (NumPy's ``default_rng(seed)``).
    Nodes with a negative label (unlabelled) are in no mask.  A class with fewer than
    ``train_per_class + val_per_class`` nodes has no test nodes to spare: by default it is
    an error naming it (``small_classes="error"``); ``"skip"`` leaves its nodes out of
    every mask (the class is not part of the task) and lists it in ``skipped_classes``.

    Args:
        labels: Class ID per node, integers ``(N,)``; negative = unlabelled.
        train_per_class: Training nodes per class (>= 1).
        val_per_class: Validation nodes per class (>= 0).
        seed: Seed of the draw.
        small_classes: ``"error"`` or ``"skip"``, for a class too small (see above).

    Returns:
        A :class:`NodeSplit` of new boolean arrays.

    Raises:
        ValidationError: labels not a 1-D integer array, a count out of range, an unknown
            ``small_classes``, or (``"error"``) a class with too few nodes, naming it.

    Example:
        >>> labels = np.repeat([0, 1, 2], [60, 55, 70])
        >>> split = shchur_split(labels, seed=1)
        >>> split
        NodeSplit(train=60, val=90, test=35)
        >>> [np.bincount(labels[m]).tolist() for m in (split.train_mask, split.test_mask)]
        [[20, 20, 20], [10, 5, 20]]
        >>> shchur_split(np.repeat([0, 1], [60, 12]))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        graphshard.errors.ValidationError: shchur_split: class 1 has 12 nodes, fewer than ...
        >>> shchur_split(np.repeat([0, 1], [60, 12]), small_classes="skip")
        NodeSplit(train=20, val=30, test=10, skipped_classes=[1])
    """
    check_choice(small_classes, ("error", "skip"), "small_classes", where="shchur_split")
    for name, value, low in (("train_per_class", train_per_class, 1),
                             ("val_per_class", val_per_class, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValidationError(f"shchur_split: {name} must be an integer >= {low}, got "
                                  f"{value!r}", field=name, value=value)
    y = np.asarray(labels)
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise ValidationError(f"shchur_split: labels must be a 1-D integer array (class IDs), "
                              f"got dtype {y.dtype} shape {y.shape}", field="labels")
    y = y.astype(np.int64, copy=False)
    n, need = len(y), int(train_per_class) + int(val_per_class)
    key = np.random.default_rng(seed).permutation(n)
    order = np.lexsort((key, y))  # by class, then by the random key
    classes, starts, counts = np.unique(y[order], return_index=True, return_counts=True)
    small = (classes >= 0) & (counts < need)
    if small.any() and small_classes == "error":
        first = int(np.flatnonzero(small)[0])
        more = int(small.sum()) - 1
        raise ValidationError(
            f"shchur_split: class {classes[first]} has {counts[first]} nodes, fewer than "
            f"train_per_class + val_per_class = {need}"
            + (f" (and {more} more classes)" if more else "")
            + "; pass small_classes='skip' to leave such classes out of every mask, or "
            "lower the counts", field="labels", value=int(classes[first]))
    rank = np.arange(n) - np.repeat(starts, counts)  # position within the class
    usable = np.repeat((classes >= 0) & ~small, counts)
    def mask(lo: int, hi: int) -> BoolArray:
        out = np.zeros(n, dtype=bool)
        out[order] = usable & (rank >= lo) & (rank < hi)
        return out

    return NodeSplit(mask(0, train_per_class), mask(train_per_class, need), mask(need, n),
                     skipped_classes=tuple(int(c) for c in classes[small]))
