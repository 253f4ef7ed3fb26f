"""What GraphBolt's reader and writer share: the names of the task sets and their masks, the
dtypes DGL can load, the YAML of ``metadata.yaml`` (a small writer of our own, PyYAML's safe
loader for reading) and :class:`MetaFile`, the reader's checked access to its fields and files.

Writing needs no YAML library: :func:`dump_yaml` writes the subset the metadata uses (block
mappings and sequences of mappings, integers, booleans and strings), every string in double
quotes with YAML escapes, so a type named ``yes``, ``null`` or ``1e3`` stays a string.
Reading takes any YAML a person or DGL (``yaml.dump``) writes, so it uses PyYAML's
``SafeLoader``, which builds plain data only (no Python objects), and refuses a file larger
than :data:`MAX_METADATA_BYTES` before parsing it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import FormatError
from ..storage.files import check_regular_file, load_npy, path_inside
from ._common import fail, regular_file

__all__ = ["HEADER", "LABEL", "MAX_METADATA_BYTES", "SETS", "TORCH_DTYPES", "MetaFile",
           "check_ids", "dump_yaml", "load_yaml", "show"]

#: Task set of GraphBolt -> the node mask it is in a graphshard graph (as our datasets name
#: them), in the order DGL lists the sets.
SETS = {"train_set": "train_mask", "validation_set": "val_mask", "test_set": "test_mask"}
#: The node feature whose rows a task set's ``labels`` are.
LABEL = "label"
#: Dtypes ``torch.from_numpy`` takes (DGL turns every array into a tensor): no uint16/32/64.
TORCH_DTYPES = frozenset(np.dtype(t) for t in ("bool", "uint8", "int8", "int16", "int32",
                                                "int64", "float16", "float32", "float64"))

#: First line of every ``metadata.yaml`` we write: how a rerun knows the folder is ours.
HEADER = "# GraphBolt OnDiskDataset written by graphshard"
#: Largest ``metadata.yaml`` read: a description of files, never data.
MAX_METADATA_BYTES = 16 * 2**20

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar: printable characters as they are, quotes,
    backslashes, line breaks and anything YAML may not hold raw as escapes."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= o <= 0x7E or (0xA0 <= o <= 0xD7FF and o not in (0x2028, 0x2029)) \
                or (0xE000 <= o <= 0xFFFD and o != 0xFEFF) or 0x10000 <= o <= 0x10FFFF:
            out.append(ch)
        elif o <= 0xFF:
            out.append(f"\\x{o:02x}")
        else:
            out.append(f"\\u{o:04x}")
    out.append('"')
    return "".join(out)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _quote(value)
    raise TypeError(f"dump_yaml writes str, int and bool values, got {type(value).__name__}")


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if not isinstance(key, str) or not _KEY.fullmatch(key):
                raise TypeError(f"dump_yaml writes identifier keys, got {key!r}")
            if isinstance(item, (dict, list)) and not item:
                lines.append(f"{pad}{key}: {'{}' if isinstance(item, dict) else '[]'}")
            elif isinstance(item, (dict, list)):
                lines += [f"{pad}{key}:", *_lines(item, indent + 2)]
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
        return lines
    lines = []
    for item in value:
        if isinstance(item, dict) and item:
            inner = _lines(item, indent + 2)
            lines += [f"{pad}- {inner[0][indent + 2:]}", *inner[1:]]
        elif isinstance(item, (dict, list)):
            raise TypeError("dump_yaml writes sequences of scalars or non-empty mappings")
        else:
            lines.append(f"{pad}- {_scalar(item)}")
    return lines


def dump_yaml(obj: dict[str, Any], *, header: str = HEADER) -> str:
    """``obj`` (nested dicts, lists of dicts or scalars, str/int/bool) as block YAML text.

    Example:
        >>> print(dump_yaml({"graph": {"nodes": [{"type": "yes", "num": 3}]}, "x": []}),
        ...       end="")
        # GraphBolt OnDiskDataset written by graphshard
        graph:
          nodes:
            - type: "yes"
              num: 3
        x: []
    """
    return "\n".join([header, *_lines(obj, 0)]) + "\n"


def load_yaml(path: Path) -> Any:
    """Parse the YAML file ``path`` with PyYAML's ``SafeLoader`` (plain data only).

    Raises:
        FormatError: not a regular file, larger than :data:`MAX_METADATA_BYTES`, not
            UTF-8, or not YAML (naming the line).
        MissingDependencyError: PyYAML is not installed.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "metadata.yaml"
        >>> _ = p.write_text(dump_yaml({"dataset_name": "g"}))
        >>> load_yaml(p)
        {'dataset_name': 'g'}
    """
    yaml = import_optional("yaml", "reading GraphBolt metadata.yaml", extra="graphbolt")
    st = check_regular_file(path, field="metadata.yaml")
    if st.st_size > MAX_METADATA_BYTES:
        raise fail(path, f"{st.st_size:,} bytes, more than the {MAX_METADATA_BYTES:,} a "
                   "metadata file may have")
    try:
        text = path.read_bytes().decode("utf-8")
        return yaml.load(text, Loader=yaml.SafeLoader)
    except UnicodeDecodeError as exc:
        raise fail(path, f"not UTF-8 text ({exc})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise fail(path, f"not valid YAML: {problem}", line=line) from exc
    except RecursionError as exc:  # deeply nested flow collections
        raise fail(path, "not valid YAML: nested too deeply") from exc


class MetaFile:
    """Checked access to the fields of one ``metadata.yaml``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.parent

    def fail(self, field: str, message: str, value: Any = None) -> FormatError:
        return fail(self.path, message, field=field, value=value)

    def mapping(self, obj: Any, field: str) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise self.fail(field, f"expected a mapping, got {show(obj)}")
        return obj

    def entries(self, obj: Any, field: str) -> list[dict[str, Any]]:
        """A list of mappings (None: empty)."""
        if obj is None:
            return []
        if not isinstance(obj, list):
            raise self.fail(field, f"expected a list, got {show(obj)}")
        return [self.mapping(item, f"{field}[{i}]") for i, item in enumerate(obj)]

    def string(self, entry: dict[str, Any], key: str, field: str) -> str:
        value = entry.get(key)
        if not isinstance(value, str) or not value:
            what = "missing" if key not in entry else f"{show(value)}, not a non-empty string"
            raise self.fail(f"{field}.{key}", what, value)
        return value

    def opt_string(self, entry: dict[str, Any], key: str, field: str) -> str | None:
        return None if entry.get(key) is None else self.string(entry, key, field)

    def choice(self, entry: dict[str, Any], key: str, field: str, choices: tuple[str, ...]
               ) -> str:
        value = self.string(entry, key, field)
        if value not in choices:
            raise self.fail(f"{field}.{key}", f"{value!r} is not one of {list(choices)}", value)
        return value

    def file(self, entry: dict[str, Any], field: str) -> Path:
        """The ``path`` of ``entry``: inside the folder, a regular file."""
        rel = self.string(entry, "path", field)
        target = path_inside(self.folder, rel, field=f"{field}.path", path=self.path)
        regular_file(target, field=f"{field}.path", owner=self.path)
        if "in_memory" in entry and not isinstance(entry["in_memory"], bool):
            raise self.fail(f"{field}.in_memory", f"{show(entry['in_memory'])}, not true or "
                            "false")
        return target

    def array(self, entry: dict[str, Any], field: str, *, mmap: bool = False) -> np.ndarray:
        """The array ``entry`` names (``format`` numpy or torch)."""
        fmt = self.choice(entry, "format", field, ("numpy", "torch"))
        target = self.file(entry, field)
        if fmt == "torch":
            return self._torch(target, f"{field}.path")
        try:
            arr = load_npy(target, mmap_mode="r" if mmap else None)
        except FormatError as exc:
            raise self.fail(f"{field}.path", str(exc)) from exc
        if not isinstance(arr, np.ndarray):  # an .npz archive
            raise self.fail(f"{field}.path", f"{target.name} is not a .npy array")
        return arr

    def _torch(self, target: Path, field: str) -> np.ndarray:
        torch = import_optional("torch", "reading GraphBolt 'torch' format files")
        try:
            obj = torch.load(target, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many types for a file it refuses
            raise self.fail(field, f"{target.name} does not load with torch.load("
                            "weights_only=True); graphshard does not unpickle other objects "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from exc
        if not isinstance(obj, torch.Tensor) or obj.layout != torch.strided:
            raise self.fail(field, f"{target.name} holds {type(obj).__name__}, not one dense "
                            "tensor")
        try:
            return np.asarray(obj.detach().contiguous().numpy())
        except (TypeError, RuntimeError) as exc:  # bfloat16, ...
            raise self.fail(field, f"{target.name}: a tensor of {obj.dtype} has no NumPy "
                            "dtype") from exc


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_ids(meta: MetaFile, ids: np.ndarray, num: int, field: str, what: str) -> np.ndarray:
    """``ids`` as int64 if each is in ``0..num-1`` (else the first bad one, by index)."""
    if ids.dtype.kind not in "iu":
        raise meta.fail(field, f"{what} are {ids.dtype}, not integers")
    bad = np.flatnonzero((ids < 0) | (ids >= num))
    if bad.size:
        i = int(bad[0])
        raise meta.fail(field, f"{what}[{i}] is {ids[i]}, outside 0..{num - 1} ({num} nodes)",
                        int(ids[i]))
    return ids.astype(np.int64)
