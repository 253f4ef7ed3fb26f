"""DGL's partition-assignment layout: one ``<ntype>.txt`` per node type, line i = part of node i.

:func:`write_assignment` also writes a binary copy ``<ntype>.npy`` next to each text file
and an ``assignment.json`` (written last) with the part count and per-type node counts;
:func:`read_assignment` prefers the binary copy and falls back to the text files (as
written by DGL's ``random_partition.py`` or ParMETIS post-processing).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import FormatError, PartitionNotFoundError
from ..storage.files import atomic_path, check_path_name, load_npy, write_json_atomic
from ..typing import IdArray

__all__ = ["assignment_from_folder", "read_assignment", "write_assignment"]


def write_assignment(out_dir: str | os.PathLike[str], parts: Mapping[str, IdArray],
                     num_parts: int, *, method: str = "assignment") -> None:
    """Write per-type part arrays as ``<ntype>.txt`` + ``<ntype>.npy`` + ``assignment.json``.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> write_assignment(d, {"user": np.array([0, 1, 1])}, 2)
        >>> read_assignment(d, ["user"])["user"].tolist()
        [0, 1, 1]
    """
    out = Path(out_dir)
    for ntype in parts:
        check_path_name(ntype, field="node type name")
    out.mkdir(parents=True, exist_ok=True)
    for ntype, arr in parts.items():
        arr = np.asarray(arr, dtype=np.int64)
        with atomic_path(out / f"{ntype}.txt") as tmp:
            pacsv.write_csv(pa.table({"part": arr}), tmp,
                            write_options=pacsv.WriteOptions(include_header=False))
        with atomic_path(out / f"{ntype}.npy") as tmp, open(tmp, "wb") as handle:
            np.save(handle, arr, allow_pickle=False)
    write_json_atomic(out / "assignment.json", {
        "method": method,
        "num_parts": int(num_parts),
        "num_nodes": {t: len(a) for t, a in parts.items()}})


def read_assignment(path: str | os.PathLike[str], ntypes: Sequence[str]) -> dict[str, IdArray]:
    """Read the part of every node, per type, from an assignment folder.

    Raises:
        ValidationError: a type name that is not a plain file name.
        PartitionNotFoundError: a type has neither ``<ntype>.npy`` nor ``<ntype>.txt``.
        FormatError: a file holds something other than one integer per line.
    """
    folder = Path(path)
    out: dict[str, IdArray] = {}
    for ntype in ntypes:
        check_path_name(ntype, field="node type name")
        npy, txt = folder / f"{ntype}.npy", folder / f"{ntype}.txt"
        if npy.exists():
            arr = load_npy(npy)
            if arr.ndim != 1 or arr.dtype.kind not in "iu":
                raise FormatError(f"{npy}: expected a 1-D integer array, got {arr.dtype} "
                                  f"{arr.shape}", path=str(npy))
            out[ntype] = arr.astype(np.int64, copy=False)
        elif txt.exists():
            out[ntype] = _read_text(txt)
        else:
            raise PartitionNotFoundError(f"{folder}: no assignment file for node type "
                                         f"{ntype!r} (expected {ntype}.txt)", path=str(txt))
    return out


def assignment_num_parts(path: str | os.PathLike[str]) -> int | None:
    """Number of parts an assignment folder declares: ``num_parts`` of our
    ``assignment.json`` or of DGL's ``partition_meta.json`` (``random_partition.py``);
    ``None`` when it has neither.

    Raises:
        FormatError: the file is not JSON, or its ``num_parts`` is not a positive integer.
    """
    for name in ("assignment.json", "partition_meta.json"):
        file = Path(path) / name
        if not file.exists():
            continue
        try:
            value = json.loads(file.read_text(encoding="utf-8")).get("num_parts")
        except (json.JSONDecodeError, AttributeError, UnicodeDecodeError) as exc:
            raise FormatError(f"{file}: not a JSON object ({exc})", path=str(file)) from exc
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise FormatError(f"{file}: num_parts must be a positive integer, got {value!r}",
                              path=str(file), field="num_parts")
        return value
    return None


def _read_text(path: Path) -> IdArray:
    if path.stat().st_size == 0:
        return np.zeros(0, dtype=np.int64)
    try:
        table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(column_names=["part"]),
                               convert_options=pacsv.ConvertOptions(
                                   column_types={"part": pa.int64()}))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise FormatError(f"{path}: expected one integer part ID per line ({exc})",
                          path=str(path)) from exc
    col = table.column("part")
    if col.null_count:
        raise FormatError(f"{path}: empty or missing part ID on some line", path=str(path))
    return col.to_numpy().astype(np.int64, copy=False)


def assignment_from_folder(path: str | os.PathLike[str], ntypes: Sequence[str]) -> IdArray:
    """Concatenate the per-type assignment of a folder in ``ntypes`` order."""
    parts = read_assignment(path, ntypes)
    meta = Path(path) / "assignment.json"
    if meta.exists():
        info = json.loads(meta.read_text(encoding="utf-8"))
        for t in ntypes:
            expect = info.get("num_nodes", {}).get(t)
            if expect is not None and expect != len(parts[t]):
                raise FormatError(f"{meta}: num_nodes[{t!r}] = {expect} but the file has "
                                  f"{len(parts[t])} entries", path=str(meta), field=t)
    return np.concatenate([parts[t] for t in ntypes]) if ntypes else np.zeros(0, np.int64)
