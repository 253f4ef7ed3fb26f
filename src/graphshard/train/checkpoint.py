"""Training checkpoints without pickle: tensors in safetensors, everything else in JSON.

A checkpoint folder holds ``state-<epoch>.safetensors`` (every tensor of the model's and
the optimizer's ``state_dict``) and ``checkpoint.json`` (the epoch, the metric history, the
run's parameters, the non-tensor parts of the state dicts, and the SHA-256 of the tensor
file).  Both are written atomically, the tensors first and the JSON last, so the JSON names
only complete tensor files: a run killed at any moment leaves the previous checkpoint
readable.  Older tensor files are removed once the new JSON is in place.

Unstable API (issue 7).

Example:
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> save_checkpoint(d, {"w": np.ones(2, np.float32)}, {}, epoch=1, history={},
    ...                 params={"hidden": 8}).name
    'checkpoint.json'
    >>> ck = load_checkpoint(d)
    >>> ck.epoch, ck.model["w"].tolist(), ck.params
    (1, [1.0, 1.0], {'hidden': 8})
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError, ValidationError
from ..storage.files import file_sha256, write_json_atomic
from ..storage.tensorfile import load_tensors, save_tensors

__all__ = ["CHECKPOINT_FILE", "Checkpoint", "load_checkpoint", "resume_checkpoint",
           "save_checkpoint"]

#: Name of the JSON file that marks a complete checkpoint.
CHECKPOINT_FILE = "checkpoint.json"
_FORMAT = 1


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint read back by :func:`load_checkpoint`.

    Attributes:
        epoch: Epochs completed when it was written.
        model: The model's state dict, NumPy arrays (copies) by name.
        optimizer: The optimizer's state dict, tensors as NumPy arrays, nesting kept (integer
            keys stay integers).
        history: Metric lists per name (``losses``, ``val_acc``, ...), one entry per epoch.
        params: The run's parameters, compared on resume.
    """

    epoch: int
    model: dict[str, np.ndarray] = field(repr=False)
    optimizer: dict[str, Any] = field(repr=False)
    history: dict[str, list[float]] = field(repr=False)
    params: dict[str, Any]


def _encode(obj: Any, prefix: str, tensors: dict[str, np.ndarray]) -> Any:
    """JSON for ``obj`` with every array moved to ``tensors`` under a path-like key."""
    if hasattr(obj, "detach") and hasattr(obj, "numpy"):  # a torch tensor
        obj = obj.detach().cpu().numpy()
    if isinstance(obj, np.ndarray):
        tensors[prefix] = obj
        return {"__tensor__": prefix}
    if isinstance(obj, dict):
        return {"__dict__": [[k, _encode(v, f"{prefix}.{k}", tensors)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [_encode(v, f"{prefix}.{i}", tensors) for i, v in enumerate(obj)]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"checkpoint: cannot store {type(obj).__name__} at {prefix!r}")


def _decode(obj: Any, tensors: dict[str, np.ndarray], path: Path) -> Any:
    if isinstance(obj, dict) and "__tensor__" in obj:
        name = obj["__tensor__"]
        if name not in tensors:
            raise FormatError(f"{path}: tensor {name!r} is missing", path=str(path))
        return np.array(tensors[name])  # a writable copy, not the memory map
    if isinstance(obj, dict) and "__dict__" in obj:
        return {k: _decode(v, tensors, path) for k, v in obj["__dict__"]}
    if isinstance(obj, list):
        return [_decode(v, tensors, path) for v in obj]
    return obj


def save_checkpoint(out_dir: str | os.PathLike[str], model: dict[str, Any],
                    optimizer: dict[str, Any], *, epoch: int, history: dict[str, list[float]],
                    params: dict[str, Any]) -> Path:
    """Write a checkpoint atomically (tensor file first, JSON last); returns the JSON path.

    Args:
        out_dir: Checkpoint folder (created).
        model: ``model.state_dict()`` (torch tensors or NumPy arrays).
        optimizer: ``optimizer.state_dict()``.
        epoch: Epochs completed.
        history: Metric lists to restore with the state.
        params: JSON-able parameters of the run (checked by the caller on resume).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors: dict[str, np.ndarray] = {}
    doc = {"model": _encode(dict(model), "model", tensors),
           "optimizer": _encode(dict(optimizer), "optimizer", tensors)}
    name = f"state-{int(epoch)}.safetensors"
    digest = save_tensors(out / name, tensors)
    write_json_atomic(out / CHECKPOINT_FILE, {
        "format_version": _FORMAT, "epoch": int(epoch), "tensors": name, "sha256": digest,
        "params": params, "history": {k: [float(x) for x in v] for k, v in history.items()},
        "state": doc})
    for old in out.glob("state-*.safetensors"):
        if old.name != name:
            with contextlib.suppress(OSError):
                old.unlink()
    return out / CHECKPOINT_FILE


def load_checkpoint(out_dir: str | os.PathLike[str]) -> Checkpoint | None:
    """The checkpoint in ``out_dir``, or None when it has none.

    Raises:
        FormatError: the JSON or the tensor file is damaged, or the checksum differs.
    """
    path = Path(out_dir) / CHECKPOINT_FILE
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text())
        tensor_path = path.parent / meta["tensors"]
        epoch, state = int(meta["epoch"]), meta["state"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FormatError(f"{path}: damaged checkpoint ({exc})", path=str(path)) from exc
    if meta.get("format_version") != _FORMAT:
        raise FormatError(f"{path}: checkpoint format_version {meta.get('format_version')!r}"
                          f", expected {_FORMAT}", path=str(path), field="format_version")
    if not tensor_path.exists() or file_sha256(tensor_path) != meta.get("sha256"):
        raise FormatError(f"{tensor_path}: missing, or its SHA-256 differs from {path.name}",
                          path=str(tensor_path), field="sha256")
    tensors, _ = load_tensors(tensor_path)
    return Checkpoint(epoch, _decode(state["model"], tensors, path),
                      _decode(state["optimizer"], tensors, path),
                      {k: list(v) for k, v in meta.get("history", {}).items()},
                      dict(meta.get("params", {})))


def resume_checkpoint(out_dir: str | os.PathLike[str], params: dict[str, Any]
                      ) -> Checkpoint | None:
    """The checkpoint in ``out_dir`` (None if none), after checking that it was written with
    the same ``params``.

    Raises:
        ValidationError: a parameter differs (named, with both values).
        FormatError: the checkpoint is damaged.
    """
    ck = load_checkpoint(out_dir)
    for key, value in params.items():
        if ck is not None and key in ck.params and ck.params[key] != value:
            raise ValidationError(f"{out_dir}: the checkpoint was written with {key}="
                                  f"{ck.params[key]!r}, this run has {key}={value!r}; pass "
                                  "resume=False to start over", field=key, value=value)
    return ck
