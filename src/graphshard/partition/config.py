"""The partition config ``<graph_name>.json`` as one typed object.

:func:`read_config` parses and checks the JSON once and returns a frozen
:class:`PartitionConfig`; every loader, the graph servers, ``DistGraph`` and the CLI work on
that object.  :func:`write_config` is the one writer, used by
:func:`~graphshard.partition.partition_graph` and by the pipeline's ``dispatch`` alike: DGL's
keys first (``graph_name``, ``part_method``, ``num_parts``, ``halo_hops``, ``node_map``,
``edge_map``, ``ntypes``, ``etypes``, ``num_nodes``, ``num_edges``,
``num_trainers_per_machine``, ``part-<i>``), then ours under ``"graphshard"``
(``format_version``, ``files`` with the size and SHA-256 of every part file, ``report``,
``params``).  The JSON is written last, atomically: its presence means the folder is complete.

Example:
    >>> import tempfile, graphshard as gs
    >>> out = tempfile.mkdtemp()
    >>> gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2, out,
    ...                    part_method="hash")
    >>> cfg = read_config(f"{out}/ring.json")
    >>> cfg
    PartitionConfig(graph_name='ring', num_parts=2, ntypes=['_N'], part_method='hash')
    >>> cfg.parts[1]["part_graph"], cfg.book().num_partitions()
    ('part1/graph.safetensors', 2)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import (
    FormatError,
    GraphshardError,
    PartitionNotFoundError,
    ValidationError,
)
from ..partition_book import RangePartitionBook
from ..storage import fsys
from ..storage.files import atomic_write, file_sha256, path_inside, write_json_atomic
from ..typing import EdgeType
from .file_checks import bad_value, check_ranges, check_type_ids, is_int
from .report import PartitionReport

__all__ = ["FORMAT_VERSION", "ConfigLike", "FileRecord", "PartitionConfig", "as_config",
           "location", "make_config", "read_config", "write_config"]

#: Version of the partition format, in ``graphshard.format_version`` and the part files.
FORMAT_VERSION = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class FileRecord:
    """Size and SHA-256 of one part file, as ``graphshard.files`` lists it.

    Attributes:
        bytes: File size in bytes.
        sha256: Hex SHA-256 of the file (64 lower-case hex digits).
    """

    bytes: int
    sha256: str

    @classmethod
    def parse(cls, value: Any) -> FileRecord | None:
        """The record of a JSON value, or None when it is not ``{"bytes": n >= 0, "sha256":
        hex}`` (a loader then refuses the file it would describe).

        Example:
            >>> FileRecord.parse({"bytes": 3, "sha256": "0" * 64}).bytes
            3
            >>> FileRecord.parse({"bytes": "3", "sha256": "0" * 64}) is None
            True
        """
        if (isinstance(value, dict) and is_int(value.get("bytes")) and value["bytes"] >= 0
                and isinstance(value.get("sha256"), str) and _SHA256.fullmatch(value["sha256"])):
            return cls(value["bytes"], value["sha256"])
        return None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (``bytes`` first)."""
        return {"bytes": self.bytes, "sha256": self.sha256}


@dataclass(frozen=True)
class PartitionConfig:
    """A partition config, checked (see :func:`read_config`) or about to be written.

    Attributes:
        graph_name: Name given at partitioning (the JSON is ``<graph_name>.json``).
        num_parts: Number of partitions.
        node_map: ``{ntype: [[start, end] per part]}`` in shuffled homogeneous IDs.
        edge_map: ``{"src:rel:dst": [[start, end] per part]}``.
        parts: Per part, its files relative to the config's folder (``part_graph``,
            ``node_feats``, ``edge_feats``, optionally ``orig_ids``).
        part_method: The method that assigned the parts (None if the config has none).
        halo_hops: HALO hops (None if the config has none).
        num_nodes: DGL's ``num_nodes`` key (None if absent).
        num_edges: DGL's ``num_edges`` key (None if absent).
        num_trainers_per_machine: DGL's key (None if absent).
        format_version: ``graphshard.format_version`` (None if absent).
        files: ``graphshard.files``: the well-formed records by relative path (a file whose
            record is missing or malformed is refused when a part opens it).
        report: ``graphshard.report`` as stored (parsed by :meth:`read_report`).
        params: ``graphshard.params``: the arguments of the run that wrote the config.
        path: Where the config was read from or written to (None for one not on disk);
            for a config read from a URI, its node-local copy.
        uri: The ``s3://``, ``gs://`` or ``hdfs://`` URI the config was read from (None for
            a local one): part files are copied from its folder into ``path``'s folder when
            a part opens them (:mod:`graphshard.storage.fsys`).
    """

    graph_name: str
    num_parts: int
    node_map: dict[str, list[list[int]]]
    edge_map: dict[str, list[list[int]]]
    parts: tuple[dict[str, str], ...]
    part_method: str | None = None
    halo_hops: int | None = None
    num_nodes: int | None = None
    num_edges: int | None = None
    num_trainers_per_machine: int | None = None
    format_version: Any = None
    files: dict[str, FileRecord] = field(default_factory=dict)
    report: Any = None
    params: dict[str, Any] | None = None
    path: Path | None = None
    uri: str | None = None

    def __repr__(self) -> str:
        return (f"PartitionConfig(graph_name={self.graph_name!r}, num_parts={self.num_parts}, "
                f"ntypes={self.ntypes}, part_method={self.part_method!r})")

    # ----- types and sizes ----------------------------------------------------------------
    @property
    def ntypes(self) -> list[str]:
        """Node types in ID order."""
        return list(self.node_map)

    @property
    def etypes(self) -> list[str]:
        """Edge types in ID order, as the config names them (``"src:rel:dst"``)."""
        return list(self.edge_map)

    def canonical_etypes(self) -> list[EdgeType]:
        """Canonical edge types in ID order.

        Raises:
            FormatError: an edge type is not ``"src:rel:dst"`` over the config's node types
                (DGL's older configs name relations only: their book loads, their parts not).
        """
        ntypes = self.ntypes
        etypes = []
        for key in self.edge_map:
            parts = key.split(":")
            if len(parts) != 3 or parts[0] not in ntypes or parts[2] not in ntypes:
                raise bad_value(self._where, "etypes", f"must be 'src:rel:dst' over the node "
                                f"types {ntypes}", key)
            etypes.append((parts[0], parts[1], parts[2]))
        return etypes

    def type_sizes(self, kind: str) -> dict[str, int]:
        """Nodes (``kind="node"``) or edges (``"edge"``) of each type, all parts together.

        Example:
            >>> PartitionConfig("g", 2, {"_N": [[0, 3], [3, 5]]}, {}, ({}, {})).type_sizes(
            ...     "node")
            {'_N': 5}
        """
        mapping = self.node_map if kind == "node" else self.edge_map
        return {t: int(sum(e - s for s, e in ranges)) for t, ranges in mapping.items()}

    def book(self, part_id: int = -1) -> RangePartitionBook:
        """The partition book (``part_id``: the partition this process serves)."""
        return RangePartitionBook(part_id, self.node_map, self.edge_map)

    # ----- files ----------------------------------------------------------------------------
    @property
    def _where(self) -> Path:
        return self.path if self.path is not None else Path(f"{self.graph_name}.json")

    def part_file(self, part_id: int, key: str, *, verify: bool = True) -> Path:
        """The file ``key`` of ``part-<part_id>``: inside the config's folder and listed under
        ``graphshard.files`` with its size (checked) and SHA-256 (checked when ``verify``).

        Raises:
            ValidationError: ``part_id`` is not an integer.
            PartitionNotFoundError: no such partition, or its file is missing.
            FormatError: the path leads outside the folder, the file is not listed with its
                size and SHA-256, or its size or SHA-256 differs from the record.
        """
        path = self._where
        if not is_int(part_id) and not isinstance(part_id, np.integer):
            raise ValidationError(f"part_id must be an integer, got {part_id!r}",
                                  field="part_id", value=part_id)
        if not 0 <= part_id < self.num_parts:
            raise PartitionNotFoundError(f"{path}: no partition {part_id}; num_parts is "
                                         f"{self.num_parts}", path=str(path), field="part_id")
        field_name = f"part-{part_id}.{key}"
        rel = self.parts[part_id].get(key)
        if rel is None:
            raise FormatError(f"{path}: part-{part_id} has no {key!r}", path=str(path),
                              field=key)
        file = path_inside(path.parent, rel, field=field_name, path=path)
        record = self.files.get(rel)
        if record is None:
            raise FormatError(f"{path}: {field_name} is {rel!r}, which graphshard.files does "
                              "not list with its size ('bytes') and SHA-256 ('sha256'); a "
                              "config opens only the files it lists", path=str(path),
                              field=field_name)
        if self.uri is not None and not (file.is_file() and file.stat().st_size
                                         == record.bytes):
            # first use on this node: copy it, checked against the record on the way
            fsys.download_verified(fsys.open_location(self.uri).parent.child(rel), file,
                                   record.bytes, record.sha256)
        if not file.is_file():
            raise PartitionNotFoundError(f"{path}: part-{part_id} {key} file {file} is missing",
                                         path=str(file), field=key)
        size = file.stat().st_size
        if size != record.bytes:
            raise FormatError(f"{file}: {size} bytes, but the config records "
                              f"{record.bytes}", path=str(file), field="bytes")
        if verify and file_sha256(file) != record.sha256:
            raise FormatError(f"{file}: SHA-256 differs from the one in {path.name}",
                              path=str(file), field="sha256")
        return file

    # ----- report ---------------------------------------------------------------------------
    def read_report(self) -> PartitionReport:
        """``graphshard.report`` as a :class:`PartitionReport`.

        Raises:
            ValidationError: the config has no report (made by another tool).
            FormatError: a field of the report is missing or of the wrong type, naming it.
        """
        path = self._where
        if self.report is None:
            raise ValidationError(f"{path}: no graphshard report in this config (made by "
                                  "another tool?)", path=str(path), field="graphshard")
        try:
            return PartitionReport.from_dict(self.report)
        except ValidationError as exc:
            raise FormatError(f"{path}: graphshard.report: {exc}", path=str(path),
                              field=f"graphshard.report.{exc.field}") from exc

    # ----- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON object, in the fixed key order of the written file."""
        cfg: dict[str, Any] = {
            "graph_name": self.graph_name,
            "part_method": self.part_method,
            "num_parts": self.num_parts,
            "halo_hops": self.halo_hops,
            "node_map": self.node_map,
            "edge_map": self.edge_map,
            "ntypes": {t: i for i, t in enumerate(self.node_map)},
            "etypes": {e: i for i, e in enumerate(self.edge_map)},
            "num_nodes": self.num_nodes,
            "num_edges": self.num_edges,
            "num_trainers_per_machine": self.num_trainers_per_machine,
        }
        cfg.update({f"part-{p}": dict(entry) for p, entry in enumerate(self.parts)})
        ours: dict[str, Any] = {"format_version": self.format_version,
                                "files": {k: r.to_dict() for k, r in self.files.items()}}
        if self.report is not None:
            ours["report"] = self.report
        if self.params is not None:
            ours["params"] = self.params
        cfg["graphshard"] = ours
        return cfg


#: What the loaders accept: a config's path, or a config :func:`read_config` returned.
ConfigLike = str | os.PathLike[str] | PartitionConfig


def make_config(graph_name: str, ntypes: list[str], etypes: list[str],
                node_ranges: np.ndarray, edge_ranges: np.ndarray, *, num_hops: int,
                parts: list[dict[str, str]], files: Mapping[str, Any], part_method: str,
                report: PartitionReport | None, params: dict[str, Any], trainers: int = 1
                ) -> PartitionConfig:
    """The config of a written partition.

    Args:
        graph_name: Name of the graph.
        ntypes: Node types in ID order.
        etypes: Edge types ``"src:rel:dst"`` in ID order.
        node_ranges: ``(ntypes, num_parts, 2)`` ``[start, end)`` of each type in each part.
        edge_ranges: ``(etypes, num_parts, 2)``, the same for edges.
        num_hops: HALO hops.
        parts: Per part, its files relative to the output folder.
        files: Size and SHA-256 of every file (:class:`FileRecord` or its JSON object).
        part_method: The method that assigned the parts.
        report: The run's report (None: the config has none).
        params: The run's arguments.
        trainers: Trainers per machine (DGL's ``num_trainers_per_machine``).

    Example:
        >>> import numpy as np
        >>> cfg = make_config("g", ["_N"], ["_N:_E:_N"], np.array([[[0, 2], [2, 4]]]),
        ...                   np.array([[[0, 3], [3, 4]]]), num_hops=1, parts=[{}, {}],
        ...                   files={}, part_method="hash", report=None, params={})
        >>> cfg.num_parts, cfg.num_nodes, cfg.to_dict()["etypes"]
        (2, 4, {'_N:_E:_N': 0})
    """
    return PartitionConfig(
        graph_name=graph_name, num_parts=int(node_ranges.shape[1]),
        node_map={t: node_ranges[i].tolist() for i, t in enumerate(ntypes)},
        edge_map={e: edge_ranges[i].tolist() for i, e in enumerate(etypes)},
        parts=tuple(dict(p) for p in parts), part_method=part_method, halo_hops=num_hops,
        num_nodes=int(node_ranges[:, :, 1].max(initial=0)),
        num_edges=int(edge_ranges[:, :, 1].max(initial=0)),
        num_trainers_per_machine=trainers, format_version=FORMAT_VERSION,
        files={k: v if isinstance(v, FileRecord) else FileRecord(int(v["bytes"]), v["sha256"])
               for k, v in files.items()},
        report=None if report is None else report.to_dict(), params=params)


def write_config(out_dir: str | os.PathLike[str], config: PartitionConfig) -> PartitionConfig:
    """Write ``out_dir/<graph_name>.json`` atomically (last, after the part files) and
    return the config with its ``path`` set.

    Example:
        >>> import tempfile, numpy as np
        >>> cfg = make_config("g", ["_N"], [], np.array([[[0, 1]]]), np.zeros((0, 1, 2), int),
        ...                   num_hops=1, parts=[{}], files={}, part_method="hash",
        ...                   report=None, params={})
        >>> write_config(tempfile.mkdtemp(), cfg).path.name
        'g.json'
    """
    path = Path(out_dir) / f"{config.graph_name}.json"
    write_json_atomic(path, config.to_dict())
    return replace(config, path=path)


def as_config(config: ConfigLike) -> PartitionConfig:
    """``config`` itself if already read, else :func:`read_config` of the path (so that a
    caller holding a config passes it on instead of having it parsed again).

    Raises:
        ValidationError: ``config`` is neither a path nor a :class:`PartitionConfig`.
    """
    if isinstance(config, (str, os.PathLike)):
        return read_config(config)
    # by attribute, not isinstance: pytest's importlib mode may load this module twice
    if not all(hasattr(config, a) for a in ("part_file", "node_map", "parts")):
        raise ValidationError(f"config must be the path of a partition config or a "
                              f"PartitionConfig, got {type(config).__name__}", field="config",
                              value=config)
    return config


def read_config(config: str | os.PathLike[str]) -> PartitionConfig:
    """Parse and check a partition config, once.

    Every key a loader uses is checked for its JSON type and consistency: ``num_parts``
    a positive integer; ``node_map``/``edge_map`` one ``[start, end]`` pair of integers
    per part for each type, contiguous part by part; ``ntypes``/``etypes`` the same types
    numbered ``0, 1, ...`` in the same order; one ``part-<i>`` object per part whose file
    paths are strings, each file named once; ``graphshard`` (ours) an object with a
    ``files`` object.  The files themselves are checked when a part opens them
    (:meth:`PartitionConfig.part_file`).

    Raises:
        PartitionNotFoundError: the file does not exist.
        FormatError: naming the config and the field, for malformed JSON, a missing key,
            a value of the wrong type, or maps that disagree with ``num_parts``.

    Example: the module's (``cfg = read_config(f"{out}/ring.json")``).

    A ``s3://``, ``gs://`` or ``hdfs://`` URI is read into a node-local copy (the config's
    ``path``; its ``uri`` keeps the URI), and each part file is copied next to it when a
    part first opens it; ``file://`` is a local path.
    """
    if fsys.is_remote(config):
        return _read_remote_config(str(config))
    path = fsys.local_path(config)
    cfg = _load_json(path)
    for key in ("graph_name", "num_parts", "node_map", "edge_map", "ntypes", "etypes"):
        if key not in cfg:
            raise FormatError(f"{path}: missing key {key!r}", path=str(path), field=key)
    if not isinstance(cfg["graph_name"], str) or not cfg["graph_name"]:
        raise bad_value(path, "graph_name", "must be a non-empty string", cfg["graph_name"])
    num_parts = cfg["num_parts"]
    if not is_int(num_parts) or num_parts < 1:
        raise FormatError(f"{path}: num_parts must be a positive integer, got {num_parts!r}",
                          path=str(path), field="num_parts")
    for key, types in (("node_map", "ntypes"), ("edge_map", "etypes")):
        check_ranges(path, cfg[key], key, num_parts)
        check_type_ids(path, cfg[types], types, list(cfg[key]), key)
    parts = _part_entries(path, cfg, num_parts)
    ours = cfg.get("graphshard", {})
    if not isinstance(ours, dict) or not isinstance(ours.get("files", {}), dict):
        raise bad_value(path, "graphshard", "must be an object with a 'files' object",
                        ours if not isinstance(ours, dict) else ours.get("files"))
    try:
        RangePartitionBook(-1, cfg["node_map"], cfg["edge_map"])  # ranges contiguous
    except GraphshardError as exc:
        raise FormatError(f"{path}: {exc}", path=str(path), field=exc.field) from exc
    records = {rel: FileRecord.parse(value) for rel, value in ours.get("files", {}).items()}
    return PartitionConfig(
        graph_name=cfg["graph_name"], num_parts=num_parts, node_map=cfg["node_map"],
        edge_map=cfg["edge_map"], parts=parts, part_method=cfg.get("part_method"),
        halo_hops=cfg.get("halo_hops"), num_nodes=cfg.get("num_nodes"),
        num_edges=cfg.get("num_edges"),
        num_trainers_per_machine=cfg.get("num_trainers_per_machine"),
        format_version=ours.get("format_version"),
        files={rel: r for rel, r in records.items() if r is not None},
        report=ours.get("report"), params=ours.get("params"), path=path)


def location(config: PartitionConfig) -> str:
    """Where another process or node opens ``config``: its URI, else its absolute path.

    Raises:
        ValidationError: a config not read from (or written to) a file.
    """
    if config.uri is not None:
        return config.uri
    if config.path is None:
        raise ValidationError("a config not read from a file has no location (read it with "
                              "read_config)", field="config")
    return str(config.path.resolve())


def _read_remote_config(uri: str) -> PartitionConfig:
    """:func:`read_config` of a URI: the JSON is copied into a cache folder named after the
    URI and the JSON's SHA-256 (a rewritten partition gets a new folder)."""
    loc = fsys.open_location(uri)
    try:
        data = loc.read_bytes()
    except PartitionNotFoundError as exc:
        raise PartitionNotFoundError(f"{loc}: partition config not found", path=str(loc)
                                     ) from exc
    folder = fsys.cache_folder(f"{fsys.shown(uri)}\n{hashlib.sha256(data).hexdigest()}")
    local = folder / loc.name
    if not local.is_file():
        with atomic_write(local) as handle:
            handle.write(data)
    try:
        return replace(read_config(local), uri=uri)
    except GraphshardError as exc:  # name the URI, not the node-local copy
        raise type(exc)(str(exc).replace(str(local), str(loc)), path=str(loc),
                        line=exc.line, field=exc.field, value=exc.value) from exc


def _load_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise PartitionNotFoundError(f"{path}: partition config not found", path=str(path))
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(f"{path}: not valid JSON ({exc})", path=str(path)) from exc
    if not isinstance(cfg, dict):
        raise FormatError(f"{path}: expected a JSON object", path=str(path))
    return cfg


def _part_entries(path: Path, cfg: dict[str, Any], num_parts: int
                  ) -> tuple[dict[str, str], ...]:
    """``part-<i>`` for each part: an object of relative path strings, each file named
    once in the whole config."""
    used: dict[str, str] = {}
    entries = []
    for p in range(num_parts):
        entry = cfg.get(f"part-{p}")
        if entry is None:
            raise FormatError(f"{path}: missing key 'part-{p}'", path=str(path),
                              field=f"part-{p}")
        if not isinstance(entry, dict):
            raise bad_value(path, f"part-{p}", "must be an object of file paths", entry)
        for key, rel in entry.items():
            field_name = f"part-{p}.{key}"
            if not isinstance(rel, str) or not rel:
                raise bad_value(path, field_name, "must be a relative path string", rel)
            if rel in used:
                raise bad_value(path, field_name, f"names the same file as {used[rel]}", rel)
            used[rel] = field_name
        entries.append(entry)
    return tuple(entries)
