"""Balance constraints as METIS-style vertex weights, and trainers per machine."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .._util.arrays import as_array
from ..errors import ValidationError
from ..typing import IdArray

__all__ = ["balance_weights", "machines_of_trainers"]


def balance_weights(num_nodes: int, in_degrees: IdArray, *, balance_ntypes: Any = None,
                    balance_edges: bool = False) -> npt.NDArray[np.int64] | None:
    """Vertex weights ``(num_nodes, ncon)`` for multi-constraint balance, or None.

    * ``balance_ntypes``: one label per node (homogeneous order), e.g. node types or a train
      mask; each distinct label becomes one constraint (a 0/1 column), so every part gets
      about the same number of nodes of each label.
    * ``balance_edges``: one more column with each node's in-degree, so every part owns about
      the same number of edges (an edge belongs to the part of its destination).

    Example:
        >>> balance_weights(3, np.array([2, 0, 1]), balance_ntypes=[1, 0, 1],
        ...                 balance_edges=True).tolist()
        [[0, 1, 2], [1, 0, 0], [0, 1, 1]]
    """
    columns: list[np.ndarray] = []
    if balance_ntypes is not None:
        labels = as_array(balance_ntypes)
        if labels.ndim != 1 or len(labels) != num_nodes:
            raise ValidationError(f"balance_ntypes must have one entry per node ({num_nodes}), "
                                  f"got shape {labels.shape}", field="balance_ntypes")
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.reshape(-1)
        onehot = np.zeros((num_nodes, int(codes.max()) + 1 if num_nodes else 1), dtype=np.int64)
        onehot[np.arange(num_nodes), codes] = 1
        columns.extend(onehot.T)
    if balance_edges:
        if not columns:
            columns.append(np.ones(num_nodes, dtype=np.int64))
        columns.append(np.asarray(in_degrees, dtype=np.int64))
    if not columns:
        return None
    return np.ascontiguousarray(np.stack(columns, axis=1))


def machines_of_trainers(trainer_parts: IdArray, num_trainers_per_machine: int) -> IdArray:
    """Machine of each node when ``trainer_parts`` were cut for ``parts * trainers``.

    Trainer parts ``m*T .. m*T+T-1`` form machine ``m``, so the parts of one machine's
    trainers stay together.

    Example:
        >>> machines_of_trainers(np.array([0, 1, 2, 3, 5]), 2).tolist()
        [0, 0, 1, 1, 2]
    """
    return trainer_parts // num_trainers_per_machine
