"""HGB (Heterogeneous Graph Benchmark, THUDM/HGB) node-classification files as a heterograph.

:func:`load_hgb` reads a dataset's ``.zip`` as distributed, or its unzipped folder: typed
nodes with their features, typed links, single- or multi-label classes and HGB's split.
Parsing is line by line for the structure (clear errors naming file and line) and
vectorised for the feature values (a fast path for one-digit bag-of-words values).
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import FormatError, ValidationError
from ..graph import Graph, heterograph
from ..storage.files import check_regular_file

__all__ = ["HGBDataset", "load_hgb"]


@dataclass(frozen=True)
class HGBDataset:
    """What :func:`load_hgb` returns.

    Attributes:
        graph: The heterograph: node types in HGB's type-ID order, one edge type per link
            type; ``feat`` (float32 ``(N_t, F_t)``) on the node types whose lines carry
            features; on :attr:`target`: ``label`` (int64 ``(N,)``, -1 = unlabelled; or int8
            ``(N, C)`` 0/1 when multi-label) and boolean ``train_mask``, ``val_mask``,
            ``test_mask``.
        target: The labelled node type.
        num_classes: Classes (from info.dat, else the largest label + 1).
        class_names: Class names from info.dat (empty if it has none).
        multilabel: Whether ``label`` is a 0/1 matrix (lines with comma-separated classes).
        name: The dataset's folder name (``"ACM"``).
    """

    graph: Graph = field(repr=False)
    target: str
    num_classes: int
    class_names: tuple[str, ...] = field(repr=False)
    multilabel: bool
    name: str


class _HGBFiles:
    """The files of one HGB dataset: a ``.zip`` (files in one folder inside) or a folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        if path.is_dir():
            self.prefix = ""
            self.name = path.name
            return
        try:
            check_regular_file(path)  # a FIFO would block, /dev/zero never ends
        except FileNotFoundError:
            raise FormatError(f"{path}: no such HGB file or folder", path=str(path)) from None
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise FormatError(f"{path}: not a readable zip file ({exc})", path=str(path)) from exc
        nodes = [n for n in self.zip.namelist() if n.rsplit("/", 1)[-1] == "node.dat"]
        if len(nodes) != 1:
            raise FormatError(f"{path}: expected one node.dat inside, found {len(nodes)}",
                              path=str(path), field="node.dat")
        self.prefix = nodes[0][:-len("node.dat")]
        self.name = self.prefix.strip("/").rsplit("/", 1)[-1] or path.stem

    def where(self, name: str) -> str:
        return f"{self.path}:{self.prefix}{name}" if self.zip else str(self.path / name)

    def exists(self, name: str) -> bool:
        if self.zip is not None:
            return self.prefix + name in self.zip.namelist()
        return os.path.lexists(self.path / name)  # a FIFO exists: text() refuses it

    def text(self, name: str) -> str:
        if not self.exists(name):
            raise FormatError(f"{self.where(name)}: missing", path=self.where(name), field=name)
        try:
            if self.zip is None:
                check_regular_file(self.path / name, field=name)
            raw = (self.zip.read(self.prefix + name) if self.zip is not None
                   else (self.path / name).read_bytes())
            return raw.decode("utf-8")
        except (OSError, UnicodeDecodeError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise FormatError(f"{self.where(name)}: cannot read ({exc})",
                              path=self.where(name)) from exc


def _fail(where: str, line: int | None, msg: str, **kw: Any) -> FormatError:
    at = f"{where}:{line}" if line is not None else where
    return FormatError(f"{at}: {msg}", path=where, line=line, **kw)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.rstrip("\r") for ln in lines]


def _int(token: str, where: str, line: int, what: str) -> int:
    try:
        value = int(token)
    except ValueError:
        value = None
    if value is None or abs(value) >= 1 << 62:
        raise _fail(where, line, f"{what} {token!r} is not an integer (below 2^62)",
                    field=what, value=token)
    return value


def _features(rows: list[str], lines: npt.NDArray[np.int64], where: str) -> np.ndarray:
    """float32 ``(len(rows), F)`` from comma-separated rows (``lines``: their 1-based lines)."""
    width = np.array([r.count(",") + 1 for r in rows], dtype=np.int64)
    bad = np.flatnonzero(width != width[0])
    if bad.size:
        raise _fail(where, int(lines[bad[0]]), f"{width[bad[0]]} feature values, but line "
                    f"{int(lines[0])} of the same node type has {width[0]}", field="features")
    joined = ",".join(rows).encode()
    buf = np.frombuffer(joined, dtype=np.uint8)
    dim = int(width[0])
    if len(buf) == 2 * dim * len(rows) - 1:  # fast path: one-digit values (bag-of-words)
        digits = buf[0::2]
        if np.all(buf[1::2] == ord(",")) and np.all((digits >= 48) & (digits <= 57)):
            return (digits - 48).astype(np.float32).reshape(len(rows), dim)
    try:
        return np.loadtxt(io.StringIO("\n".join(rows)), delimiter=",", dtype=np.float32,
                          ndmin=2, comments=None)
    except ValueError as exc:
        m = re.search(r"row (\d+)", str(exc))
        line = int(lines[int(m.group(1))]) if m else None  # loadtxt counts rows from 0
        raise _fail(where, line, f"bad feature value ({exc})", field="features") from None


def _read_nodes(files: _HGBFiles, type_names: dict[int, str], features: set[str] | None
                ) -> tuple[dict[str, int], npt.NDArray[np.int64], npt.NDArray[np.int64],
                           dict[str, np.ndarray]]:
    """Counts per type, and per HGB node ID its type ID and per-type ID; features by type."""
    where = files.where("node.dat")
    ids, types, feats, feat_lines = [], [], {}, {}  # type: ignore[var-annotated]
    for i, ln in enumerate(_lines(files.text("node.dat")), start=1):
        parts = ln.split("\t")
        if len(parts) not in (3, 4):
            raise _fail(where, i, f"expected 3 or 4 tab-separated fields (id, name, type"
                        f"[, features]), found {len(parts)}")
        nid = _int(parts[0], where, i, "node id")
        t = _int(parts[2], where, i, "node type")
        if t not in type_names:
            raise _fail(where, i, f"node type {t} is not in info.dat's "
                        f"{sorted(type_names)}", field="node type", value=t)
        ids.append(nid)
        types.append(t)
        if len(parts) == 4 and (features is None or type_names[t] in features):
            feats.setdefault(t, []).append(parts[3])
            feat_lines.setdefault(t, []).append(i)
    nid_arr, type_arr = np.array(ids, dtype=np.int64), np.array(types, dtype=np.int64)
    limit = 4 * len(nid_arr) + (1 << 20)  # IDs index arrays: no sparse huge IDs
    bad = np.flatnonzero((nid_arr < 0) | (nid_arr >= limit))
    if bad.size:
        raise _fail(where, int(bad[0]) + 1, f"node id {nid_arr[bad[0]]} is negative or above "
                    f"{limit} (4 x the node count + 2^20)", field="node id")
    top = int(nid_arr.max()) + 1 if nid_arr.size else 0
    seen = np.bincount(nid_arr, minlength=top)
    if seen.size and seen.max() > 1:
        dup = int(np.flatnonzero(seen > 1)[0])
        raise _fail(where, int(np.flatnonzero(nid_arr == dup)[1]) + 1,
                    f"node id {dup} appears more than once", field="node id", value=dup)
    kind = np.full(top, -1, dtype=np.int64)
    local = np.full(top, -1, dtype=np.int64)
    order = np.lexsort((nid_arr, type_arr))  # per type, by HGB node ID
    kind[nid_arr] = type_arr
    counts = np.bincount(type_arr, minlength=max(type_names) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)])
    local[nid_arr[order]] = np.arange(len(order)) - starts[type_arr[order]]
    out: dict[str, np.ndarray] = {}
    for t, rows in feats.items():
        if len(rows) != counts[t]:
            raise _fail(where, None, f"{len(rows)} of the {counts[t]} nodes of type "
                        f"{type_names[t]!r} have features; all or none must", field="features")
        lines = np.array(feat_lines[t], dtype=np.int64)
        by_id = np.argsort(nid_arr[lines - 1], kind="stable")
        out[type_names[t]] = _features([rows[k] for k in by_id], lines[by_id], where)
    return {type_names[t]: int(counts[t]) for t in sorted(type_names)}, kind, local, out


def _read_links(files: _HGBFiles, link_types: dict[int, tuple[int, str, int]],
                type_names: dict[int, str], kind: np.ndarray, local: np.ndarray
                ) -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
    where = files.where("link.dat")
    text = files.text("link.dat")
    try:
        arr = np.loadtxt(io.StringIO(text), delimiter="\t", dtype=np.float64, ndmin=2,
                         comments=None)
    except ValueError as exc:
        m = re.search(r"row (\d+)", str(exc))
        raise _fail(where, int(m.group(1)) + 1 if m else None,
                    f"expected 'src<TAB>dst<TAB>type<TAB>weight' numbers ({exc})") from None
    if arr.size and arr.shape[1] not in (3, 4):
        raise _fail(where, 1, f"expected 3 or 4 fields, found {arr.shape[1]}")
    cols = arr[:, :3] if arr.size else np.zeros((0, 3))
    bad = np.flatnonzero((cols != np.floor(cols)).any(1) | (cols < 0).any(1)
                         | (cols[:, :2] >= len(kind)).any(1))
    if bad.size:
        raise _fail(where, int(bad[0]) + 1, f"src, dst and type must be node ids and a link "
                    f"type, found {cols[bad[0]].tolist()}")
    src, dst, lt = (cols[:, k].astype(np.int64) for k in range(3))
    out = {}
    known = np.isin(lt, list(link_types))
    if not known.all():
        b = int(np.flatnonzero(~known)[0])
        raise _fail(where, b + 1, f"link type {lt[b]} is not in info.dat's "
                    f"{sorted(link_types)}", field="link type", value=int(lt[b]))
    for k, (st, rel, dt) in link_types.items():
        sel = np.flatnonzero(lt == k)
        wrong = np.flatnonzero((kind[src[sel]] != st) | (kind[dst[sel]] != dt))
        if wrong.size:
            i = int(sel[wrong[0]])
            raise _fail(where, i + 1, f"link type {k} joins {type_names[st]!r} to "
                        f"{type_names[dt]!r}, but nodes {src[i]} -> {dst[i]} have types "
                        f"{kind[src[i]]} -> {kind[dst[i]]}", field="link type", value=k)
        out[(type_names[st], rel, type_names[dt])] = (local[src[sel]], local[dst[sel]])
    return out


def _read_labels(files: _HGBFiles, name: str, kind: np.ndarray, local: np.ndarray,
                 type_names: dict[int, str]) -> tuple[str | None, np.ndarray, list[list[int]],
                                                      bool]:
    """(target type, per-type node IDs, classes per node, any line with several classes)."""
    where = files.where(name)
    ids, classes, target, several = [], [], None, False
    for i, ln in enumerate(_lines(files.text(name)), start=1):
        parts = ln.split("\t")
        if len(parts) != 4:
            raise _fail(where, i, f"expected 4 tab-separated fields (id, name, type, classes), "
                        f"found {len(parts)}")
        nid = _int(parts[0], where, i, "node id")
        t = _int(parts[2], where, i, "node type")
        if not 0 <= nid < len(kind) or kind[nid] != t:
            raise _fail(where, i, f"node {nid} is not a node of type {t} in node.dat",
                        field="node id", value=nid)
        if target is not None and type_names[t] != target:
            raise _fail(where, i, f"labels of node type {type_names[t]!r} after labels of "
                        f"{target!r}: one labelled type only", field="node type", value=t)
        target = type_names[t]
        cls = [_int(c, where, i, "class") for c in parts[3].split(",")]
        if min(cls) < 0 or max(cls) >= 1 << 16:
            raise _fail(where, i, f"classes must be in [0, 65536), found {parts[3]!r}",
                        field="class")
        several |= len(cls) > 1
        ids.append(int(local[nid]))
        classes.append(cls)
    return target, np.array(ids, dtype=np.int64), classes, several


def _read_info(files: _HGBFiles) -> tuple[dict[str, Any], dict[int, str],
                                          dict[int, tuple[int, str, int]]]:
    """info.dat: the document, type names by ID, link types ``(start, meaning, end)``."""
    where = files.where("info.dat")
    try:
        info = json.loads(files.text("info.dat"))
        type_names = {int(k): str(v) for k, v in info["node.dat"]["node type"].items()}
        link_types = {int(k): (int(v["start"]), str(v.get("meaning", "")), int(v["end"]))
                      for k, v in info["link.dat"]["link type"].items()}
        classes = info.get("label.dat", {}).get("node type", {})
        if not isinstance(classes, dict) or not all(isinstance(c, dict)
                                                    for c in classes.values()):
            raise TypeError("'label.dat' node type must map types to {class: name}")
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise _fail(where, None, f"expected HGB's JSON with 'node.dat' node types and "
                    f"'link.dat' link types ({exc!r})") from None
    if not type_names or any(not 0 <= t < 1 << 16 for t in type_names):
        raise _fail(where, None, f"node type IDs must be in [0, 65536), got "
                    f"{sorted(type_names)}", field="node type")
    for k, (st, _, dt) in link_types.items():
        if st not in type_names or dt not in type_names:
            raise _fail(where, None, f"link type {k} joins node types {st} -> {dt}, not all "
                        f"in {sorted(type_names)}", field="link type", value=k)
    return info, type_names, link_types


#: What separates the words of a link type's meaning: ``-`` (``paper-cite-paper``, ACM) or
#: an arrow ``->`` (``movie->director``, IMDB), taken whole.
_MEANING_SEPARATOR = re.compile(r"-+>?")


def _link_name(meaning: str, st: str, dt: str, key: int) -> str:
    """A relation name from info.dat's meaning: ``paper-cite-paper`` -> ``paper2cite2paper``,
    ``movie->director`` -> ``movie2director`` (no ``-``, which separates relations in a
    metapath, and no ``>`` left of an arrow)."""
    parts = [p for p in _MEANING_SEPARATOR.split(str(meaning).replace(" ", "_")) if p]
    return "2".join(parts) if parts else f"{st}2{dt}_{key}"


def _check_link_names(where: str, link_types: dict[int, tuple[int, str, int]],
                      rels: dict[int, tuple[str, str, str]]) -> None:
    """Two link types that became the same relation (same name and end types) are an error
    naming both, e.g. ``movie->director`` and ``movie-director``."""
    first: dict[tuple[str, str, str], int] = {}
    for k, rel in rels.items():
        if rel in first:
            j = first[rel]
            raise _fail(where, None, f"link types {j} ({link_types[j][1]!r}) and {k} "
                        f"({link_types[k][1]!r}) both become relation {rel}; relation names "
                        "come from the meaning with '-' and '->' replaced by '2', so give "
                        "them meanings that differ in their words", field="link type", value=k)
        first[rel] = k


def load_hgb(path: str | os.PathLike[str], *, features: bool | Sequence[str] = True,
             val_ratio: float = 0.2, seed: int = 0, test_file: str | None = "label.dat.test",
             multilabel: bool | None = None) -> HGBDataset:
    """Read an HGB node-classification dataset (THUDM/HGB: ACM, DBLP, IMDB, ...).

    Reads ``info.dat`` (type names, link types and their meanings, class names),
    ``node.dat`` (``id \\t name \\t type [\\t comma-separated features]``), ``link.dat``
    (``src \\t dst \\t link type \\t weight``), ``label.dat`` (training labels:
    ``id \\t name \\t type \\t classes``, classes comma-separated for multi-label data such
    as IMDB) and ``test_file``.  HGB's split: ``label.dat`` is train + validation, of which
    a seeded ``val_ratio`` share becomes the validation set (as HGB's scripts hold out 20%);
    ``test_file`` is the test set (see its note).  Local files only (nothing is downloaded).

    Per-type node IDs follow the HGB node IDs of each type in increasing order; relation
    names come from the link type's meaning with ``-`` and ``->`` replaced by ``2``
    (``paper-cite-paper`` -> ``paper2cite2paper``, ``author-paper`` -> ``author2paper``,
    IMDB's ``movie->director`` -> ``movie2director``); two link types that would become
    the same relation (same name and end types) are a FormatError naming both.

    Args:
        path: The dataset's ``.zip`` (as distributed; files in one folder inside) or an
            unzipped folder holding ``node.dat``.
        features: Read the features of every node type that has them (True), of none
            (False: faster), or of the named node types (a list, or a comma-separated
            string).
        val_ratio: Share of ``label.dat`` held out for validation.
        seed: Seed of the validation draw.
        test_file: The test labels; None for no test set.  The default,
            ``label.dat.test``, is half of HGB's test set.  ``label.dat.test_full`` is meant
            to be the whole opened test set, but in the copies of ACM.zip and DBLP.zip we
            checked its labels are unrelated to the true ones: they agree with
            ``label.dat.test`` on its nodes at chance rate (351 of 1059 ACM papers, 355 of
            1420 DBLP authors), a linear model of the features that scores 0.88 / 0.80 on
            ``label.dat.test`` scores 0.33 / 0.26 on them, and they put e.g. Michael
            Stonebraker in "AI".
        multilabel: Store labels as a 0/1 matrix (True) or class IDs (False); None infers it
            (any line with several classes).

    Returns:
        HGBDataset with the graph, the labelled node type and the classes.

    Raises:
        FormatError: a missing or malformed file, naming the file and line.
        ValidationError: a bad ``val_ratio``, or several classes on one line with
            ``multilabel=False``.

    Example:
        >>> import tempfile, pathlib, json
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "info.dat").write_text(json.dumps({
        ...     "node.dat": {"node type": {"0": "paper", "1": "author"}},
        ...     "link.dat": {"link type": {
        ...         "0": {"start": 1, "end": 0, "meaning": "author-paper"}}}}))
        >>> _ = (d / "node.dat").write_text("0\\tp0\\t0\\t1,0\\n1\\tp1\\t0\\t0,1\\n2\\ta\\t1\\n")
        >>> _ = (d / "link.dat").write_text("2\\t0\\t0\\t1.0\\n2\\t1\\t0\\t1.0\\n")
        >>> _ = (d / "label.dat").write_text("0\\t\\t0\\t1\\n")
        >>> _ = (d / "label.dat.test").write_text("1\\t\\t0\\t0\\n")
        >>> ds = load_hgb(d)
        >>> ds.target, ds.graph.canonical_etypes, ds.graph.nodes["paper"].data["label"].tolist()
        ('paper', [('author', 'author2paper', 'paper')], [1, 0])
        >>> ds.graph.nodes["paper"].data["test_mask"].tolist()
        [False, True]
    """
    if not 0 <= val_ratio < 1:
        raise ValidationError(f"val_ratio must be in [0, 1), got {val_ratio}",
                              field="val_ratio", value=val_ratio)
    files = _HGBFiles(Path(path))
    info, type_names, link_types = _read_info(files)
    rels = {k: (type_names[s], _link_name(m, type_names[s], type_names[d], k), type_names[d])
            for k, (s, m, d) in link_types.items()}
    _check_link_names(files.where("info.dat"), link_types, rels)
    if isinstance(features, str):  # "paper,author", as the CLI's -O features=... gives it
        features = [f for f in features.split(",") if f]
    want = None if features is True else set() if features is False else {str(f) for f in features}
    counts, kind, local, feats = _read_nodes(files, type_names, want)
    edges = _read_links(files, {k: (s, rels[k][1], d) for k, (s, _, d) in link_types.items()},
                        type_names, kind, local)
    g = heterograph(edges, counts)
    for nt, x in feats.items():
        g.nodes[nt].data["feat"] = x
    return _attach_labels(g, files, info, kind, local, type_names, val_ratio=val_ratio,
                          seed=seed, test_file=test_file, multilabel=multilabel)


def _check_classes(files: _HGBFiles, names: dict[str, str], train_cls: list[list[int]],
                   test_cls: list[list[int]], test_file: str | None, top: int) -> None:
    """Refuse a class ID that implies more classes (label columns) than info.dat names and
    the label files hold class labels: one line ``1,65535`` asked for 65536 columns."""
    held = sum(len(c) for c in train_cls + test_cls)
    limit = max(len(names), held)
    if top <= limit:
        return
    for name, cls in (("label.dat", train_cls), (test_file, test_cls)):
        line = next((i for i, c in enumerate(cls) if max(c) == top - 1), None)
        if line is not None and name is not None:
            raise _fail(files.where(name), line + 1, f"class {top - 1} implies {top:,} classes"
                        f", but info.dat names {len(names)} and the label files hold "
                        f"{held:,} class labels; at most max(named, held) = {limit:,}",
                        field="class", value=top - 1)


def _attach_labels(g: Graph, files: _HGBFiles, info: dict[str, Any], kind: np.ndarray,
                   local: np.ndarray, type_names: dict[int, str], *, val_ratio: float,
                   seed: int, test_file: str | None, multilabel: bool | None) -> HGBDataset:
    """Read label.dat and the test file into ``label`` and the three masks of the target."""
    target, train_ids, train_cls, several = _read_labels(files, "label.dat", kind, local,
                                                         type_names)
    test_ids = np.zeros(0, dtype=np.int64)
    test_cls: list[list[int]] = []
    if test_file is not None:
        t2, test_ids, test_cls, sev2 = _read_labels(files, test_file, kind, local, type_names)
        if target is not None and t2 is not None and t2 != target:
            raise _fail(files.where(test_file), 1, f"test labels are on {t2!r}, training "
                        f"labels on {target!r}", field="node type")
        target, several = target or t2, several or sev2
    if target is None:
        raise _fail(files.where("label.dat"), None, "no labels", field="label.dat")
    if multilabel is False and several:
        raise ValidationError(f"{files.where('label.dat')}: lines with several classes, but "
                              "multilabel=False", field="multilabel")
    multi = several if multilabel is None else bool(multilabel)
    names: dict[str, str] = {}
    for per_type in info.get("label.dat", {}).get("node type", {}).values():
        names = {str(k): str(v) for k, v in per_type.items()}
    top = max((max(c) for c in train_cls + test_cls), default=-1) + 1
    _check_classes(files, names, train_cls, test_cls, test_file, top)
    num_classes = max(len(names), top)
    n = g.num_nodes(target)
    ids = np.concatenate([train_ids, test_ids])
    seen = np.bincount(ids, minlength=n)
    if seen.max(initial=0) > 1:
        dup = int(np.flatnonzero(seen > 1)[0])
        raise _fail(files.where(test_file or "label.dat"), None, f"node {dup} of {target!r} "
                    "is labelled twice (in label.dat and the test file, or twice in one)",
                    field="node id", value=dup)
    cls = train_cls + test_cls
    label: np.ndarray
    if multi:
        label = np.zeros((n, num_classes), dtype=np.int8)
        rows = np.repeat(ids, [len(c) for c in cls])
        label[rows, np.concatenate([np.asarray(c, dtype=np.int64) for c in cls])
              if cls else np.zeros(0, np.int64)] = 1
    else:
        label = np.full(n, -1, dtype=np.int64)
        label[ids] = [c[0] for c in cls]
    order = np.sort(train_ids)
    perm = np.random.default_rng(seed).permutation(order)
    num_val = int(len(order) * val_ratio)
    masks = {k: np.zeros(n, dtype=bool) for k in ("train_mask", "val_mask", "test_mask")}
    masks["val_mask"][perm[:num_val]] = True
    masks["train_mask"][perm[num_val:]] = True
    masks["test_mask"][test_ids] = True
    data = g.nodes[target].data
    data["label"] = label
    for k, m in masks.items():
        data[k] = m
    class_names = tuple(names.get(str(c), str(c)) for c in range(num_classes))
    return HGBDataset(g, target, num_classes, class_names, multi, files.name)
