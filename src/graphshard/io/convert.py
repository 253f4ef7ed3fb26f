"""Format registry and ``convert``: any reader to any writer, one signature each.

``READERS[name]`` and ``WRITERS[name]`` are :class:`Format` entries holding a one-line
description, the options they accept (name -> help), the file suffixes that name the
format, aliases (another name plus the options it implies: ``csv`` is ``edgelist`` with
``fmt="csv"``) and an adapter with a fixed signature: ``read(inputs, options) -> Graph``
and ``write(graph, out, options) -> None``.  The CLI's ``--from``, ``--to`` and ``--format``
choices, their help and the format a path's suffix implies (:func:`format_of_path`) all come
from them.  Every reader also takes the options of :data:`EDGE_OPTIONS` (``add_reverse``,
``self_loops``, ``duplicates``), applied to what it read by
:func:`~graphshard.io.apply_edge_policy`.
"""

from __future__ import annotations

import importlib
import logging
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..graph import Graph

__all__ = ["COMPRESSED", "EDGE_OPTIONS", "READERS", "WRITERS", "ConvertReport", "Format", "convert",
           "format_names", "format_of_path", "read_graph", "write_graph"]

log = logging.getLogger(__name__)


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """``graphshard.io.<module>.<name>``, imported on first call: the CLI reads the registry
    for its choices on every command, and the readers pull in pyarrow and scipy."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(f"graphshard.io.{module}"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


read_chunked, write_chunked = _lazy("chunked", "read_chunked"), _lazy("chunked", "write_chunked")
read_euler, write_euler = _lazy("euler", "read_euler"), _lazy("euler", "write_euler")
read_euler_dat = _lazy("euler_dat", "read_euler_dat")
write_euler_dat = _lazy("euler_dat", "write_euler_dat")
read_edgelist = _lazy("edgelist", "read_edgelist")
read_metis = _lazy("metis", "read_metis")
read_pgl = _lazy("pgl", "read_pgl")
read_graphbolt = _lazy("graphbolt", "read_graphbolt")
write_graphbolt = _lazy("graphbolt", "write_graphbolt")
check_graphbolt_out = _lazy("graphbolt", "check_graphbolt_out")
check_chunked_out = _lazy("_chunked_write", "check_chunked_out")
check_euler_out = _lazy("_euler_write", "check_euler_out")


@dataclass(frozen=True)
class Format:
    """One registry entry.

    Attributes:
        name: The registry key (``--from``/``--to``/``--format`` value).
        description: One line for ``--help`` and the docs.
        func: The adapter: ``read(inputs, options)`` or ``write(graph, out, options)``.
        options: Option name -> help.
        check_out: A writer's check that refuses an output it must not write (run before
            reading).
        suffixes: Lower-case file suffixes that mean this format (``.csv``); a reader of
            folders has none.
        aliases: Other names of this format -> the options each implies (the caller's own
            options win).
        reads_folder: A folder given as input is in this format.
        sniff: Whether a path (file or folder) holds this format, by a look inside (a
            Shchur ``.npz``/``.zip``, an HGB folder): checked before suffixes.
    """

    name: str
    description: str
    func: Callable[..., Any]
    options: dict[str, str] = field(default_factory=dict)
    check_out: Callable[[Path], Any] | None = None
    suffixes: tuple[str, ...] = ()
    aliases: dict[str, dict[str, Any]] = field(default_factory=dict)
    reads_folder: bool = False
    sniff: Callable[[Path], bool] | None = None


@dataclass(frozen=True)
class ConvertReport:
    """What :func:`convert` did: formats, output, sizes and seconds per phase."""

    src_format: str
    dst_format: str
    out: str
    num_nodes: dict[str, int]
    num_edges: dict[str, int]
    read_seconds: float
    write_seconds: float

    def __repr__(self) -> str:
        return (f"ConvertReport({self.src_format} -> {self.dst_format} at {self.out!r}, "
                f"nodes={sum(self.num_nodes.values())}, edges={sum(self.num_edges.values())})")


def _one(inputs: Sequence[str | Path], what: str) -> Path:
    if len(inputs) != 1:
        raise ValidationError(f"{what} reads one input, got {len(inputs)}: {list(inputs)}",
                              field="inputs")
    return Path(inputs[0])


def _dataset(loader: str, what: str) -> Callable[[Sequence[str | Path], dict[str, Any]], Any]:
    """A reader adapter for a loader of :mod:`graphshard.datasets` (imported when called):
    its graph (a dataset object's ``graph``)."""

    def read(inputs: Sequence[str | Path], options: dict[str, Any]) -> Graph:
        loaded = getattr(importlib.import_module("graphshard.datasets"), loader)(
            _one(inputs, what), **options)
        return loaded if isinstance(loaded, Graph) else loaded.graph

    return read


def _zip_names(path: Path) -> list[str]:
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return []


def _is_shchur(path: Path) -> bool:
    """A gnn-benchmark ``.npz`` (``adj_indptr`` inside), or a ``.zip`` holding one."""
    suffix = path.suffix.lower()
    if not path.is_file() or suffix not in (".npz", ".zip"):
        return False
    names = _zip_names(path)
    if suffix == ".zip":
        return sum(n.endswith(".npz") for n in names) == 1 and "node.dat" not in \
            {n.rsplit("/", 1)[-1] for n in names}
    return "adj_indptr.npy" in names


def _is_hgb(path: Path) -> bool:
    """An HGB folder (``node.dat`` + ``link.dat``) or a ``.zip`` holding one."""
    if path.is_dir():
        return (path / "node.dat").is_file() and (path / "link.dat").is_file()
    if path.is_file() and path.suffix.lower() == ".zip":
        return "node.dat" in {n.rsplit("/", 1)[-1] for n in _zip_names(path)}
    return False


def _is_planetoid(path: Path) -> bool:
    """A folder of ``ind.<name>.*`` files, or one of them."""
    if path.is_dir():
        return any(path.glob("ind.*.graph"))
    return path.name.startswith("ind.") and path.name.count(".") >= 2 and \
        any(path.parent.glob("ind.*.graph"))


def _is_ogb(path: Path) -> bool:
    """An OGB dataset folder (``raw/edge.csv.gz``) or its ``raw`` folder."""
    return path.is_dir() and ((path / "raw" / "edge.csv.gz").is_file() or
                              (path.name == "raw" and (path / "edge.csv.gz").is_file()))


def _is_euler_dat(path: Path) -> bool:
    """A ``.dat`` file, or a folder of ``name_<idx>.dat`` files, whose first bytes start an
    Euler binary block (JSON-lines ``.dat`` files are text: never)."""
    if path.is_file() and path.suffix.lower() != ".dat":
        return False
    if not path.exists() or (path.is_dir() and not any(path.glob("*.dat"))):
        return False  # decided without importing the reader (it pulls in pyarrow)
    return bool(importlib.import_module("graphshard.io.euler_dat").is_euler_dat(path))


def _is_graphbolt(path: Path) -> bool:
    """A folder holding ``metadata.yaml`` (a chunked graph's is ``metadata.json``), or
    that file."""
    meta = path / "metadata.yaml" if path.is_dir() else path
    return meta.name == "metadata.yaml" and meta.is_file()


READERS: dict[str, Format] = {f.name: f for f in [
    Format("chunked", "DGL chunked graph folder (metadata.json + csv/numpy/parquet chunks)",
           lambda inputs, o: read_chunked(_one(inputs, "chunked"), **o), reads_folder=True),
    Format("euler", "Alibaba Euler JSON: 1.x block lines (file, files or partition folder) or "
           "2.x graph.json", lambda inputs, o: read_euler(
               [Path(p) for p in inputs] if len(inputs) > 1 else Path(inputs[0]), **o),
           {"meta": "meta file (default: meta.json / meta next to the data)"},
           suffixes=(".json",)),
    Format("pgl", "PGL/Graph4Rec tab-separated edge files per edge type "
           "('u2buy2i:a.txt,u2click2i:b.txt')",
           lambda inputs, o: read_pgl(",".join(map(str, inputs)), **o),
           {"node_files": "node type files, 'u:nodes.txt,i:nodes.txt'",
            "symmetry": "also add every edge reversed (bool)"}),
    Format("edgelist", "edge list table: CSV/TSV/TXT/SNAP .edgelist (header or not), "
           "Parquet, NPY, NPZ",
           lambda inputs, o: read_edgelist(_one(inputs, "edgelist"), **o),
           {"src": "source column (name or position; default 'src')",
            "dst": "destination column (default 'dst')",
            "etype": "edge type column ('a:rel:b' values give typed nodes)",
            "weight": "weight column", "features": "other edge feature columns (list)",
            "fmt": "csv, parquet, npy or npz (default: from the suffix)",
            "delimiter": "CSV delimiter (default: from the suffix, or sniffed)",
            "header": "text files have a header row (bool; default: a first line of "
                      "numbers only is data)",
            "comment": "skip leading lines starting with this (default '#')",
            "relabel": "map integer IDs to dense IDs too (bool)",
            "ids": "auto (integers unless a whole column is text), int or str",
            "num_nodes": "node count for unrelabelled integer IDs",
            "sparse_ids": "warn (default) or refuse an unrelabelled ID space most of which "
                          "appears in no edge (partition refuses unless --no-relabel)"},
           suffixes=(".csv", ".tsv", ".txt", ".edgelist", ".edges", ".el", ".parquet",
                     ".npy", ".npz"),
           aliases={"csv": {"fmt": "csv"}, "tsv": {"fmt": "csv", "delimiter": "\t"},
                    "parquet": {"fmt": "parquet"}, "npy": {"fmt": "npy"},
                    "npz": {"fmt": "npz"}}),
    Format("metis", "METIS/Walshaw .graph adjacency file (plain, .gz, .bz2)",
           lambda inputs, o: read_metis(_one(inputs, "metis"), **o),
           suffixes=(".graph", ".gz", ".bz2")),
    Format("shchur", "gnn-benchmark (Shchur et al.) .npz, or a .zip holding one: adjacency, "
           "sparse features, labels", _dataset("load_shchur_npz", "shchur"),
           {"sparse_features": "keep the features sparse (bool, default true; the chunked "
                               "format needs false)",
            "split_seed": "add Shchur et al.'s split as train/val/test masks (20 training "
                          "and 30 validation nodes per class, the rest test), drawn with "
                          "this seed (default: no masks)",
            "undirected": "every edge in both directions, once, no self-loops (bool, "
                          "default false: edges as stored)",
            "largest_component": "keep only the largest connected component, renumbered "
                                 "(bool, default false: every node)"},
           sniff=_is_shchur),
    Format("hgb", "HGB node-classification folder or .zip (info.dat, node.dat, link.dat, "
           "label.dat*): typed nodes, features, labels, split", _dataset("load_hgb", "hgb"),
           {"features": "read node features: true (default), false, or the node types "
                        "('paper,author')",
            "val_ratio": "share of label.dat held out for validation (default 0.2)",
            "seed": "seed of that draw", "test_file": "test labels (default label.dat.test)"},
           sniff=_is_hgb),
    Format("planetoid", "Planetoid raw ind.<name>.* files (folder, or one of the files): "
           "features, labels, split", _dataset("load_planetoid", "planetoid"),
           {"name": "dataset in a folder holding several (cora, citeseer, pubmed)",
            "features": "read x/tx/allx (bool, default true)",
            "sparse_features": "keep the features sparse (bool, default true; the chunked "
                               "format needs false)"}, sniff=_is_planetoid),
    Format("ogb", "OGB node-property dataset folder as its zip unpacks (raw/edge.csv.gz, "
           "node-feat, node-label, split/<scheme>/)", _dataset("load_ogb", "ogb"),
           {"split": "split scheme under split/ (default: the only one)"}, sniff=_is_ogb),
    Format("euler-dat", "Alibaba Euler 1.0 binary .dat (json2dat layout): file, files or "
           "partition folder, found by its first bytes",
           lambda inputs, o: read_euler_dat(
               [Path(p) for p in inputs] if len(inputs) > 1 else Path(inputs[0]), **o),
           {"meta": "meta file (default: meta.json / meta next to the data)"},
           sniff=_is_euler_dat),
    Format("graphbolt", "DGL GraphBolt OnDiskDataset folder (metadata.yaml + numpy/csv/torch "
           "files): graph, features, one task's sets as train/val/test masks",
           lambda inputs, o: read_graphbolt(_one(inputs, "graphbolt"), **o),
           {"task": "task to read as masks: name, index or 'none' (default: the first)"},
           sniff=_is_graphbolt),
]}

#: Options every reader takes, applied after reading by :func:`apply_edge_policy`.
EDGE_OPTIONS = {
    "add_reverse": "also add every edge reversed (bool; for lists holding each undirected "
                   "edge once)",
    "self_loops": "keep (default; counted in a warning) or drop",
    "duplicates": "keep (default; counted in a warning) or drop: edges equal to an earlier "
                  "one, after add_reverse",
}

WRITERS: dict[str, Format] = {f.name: f for f in [
    Format("chunked", "DGL chunked graph folder, metadata.json written last",
           lambda g, out, o: write_chunked(g, out, o.pop("num_chunks", 1), **o),
           {"num_chunks": "chunks per type (default 1)",
            "fmt": "numpy (default), csv or parquet",
            "graph_name": "graph_name in the metadata", "delimiter": "CSV delimiter"},
           check_chunked_out),
    Format("euler", "Euler JSON + meta.json: 1.x block lines name_<idx>.json, or 2.x one "
           "name.json document (-O version=2)",
           lambda g, out, o: write_euler(g, out, o.pop("num_partitions", 1), **o),
           {"num_partitions": "Euler 1 files, node_id % num_partitions (default 1)",
            "name": "file name prefix (default 'graph')",
            "version": "1 (block lines, default) or 2 (one graph.json document)"},
           check_euler_out),
    Format("euler-dat", "Euler 1.0 binary name_<idx>.dat files (json2dat layout) + meta.json",
           lambda g, out, o: write_euler_dat(g, out, o.pop("num_partitions", 1), **o),
           {"num_partitions": "files, node_id % num_partitions (default 1)",
            "name": "file name prefix (default 'graph')"},
           check_euler_out),
    Format("graphbolt", "DGL GraphBolt OnDiskDataset folder: .npy files, metadata.yaml last; "
           "masks become a task's train/validation/test sets",
           lambda g, out, o: write_graphbolt(g, out, **o),
           {"dataset_name": "dataset_name in the metadata (default 'graph')",
            "task_name": "the task's name (default 'node_classification')"},
           check_graphbolt_out),
]}


#: Compression suffixes looked through when a suffix names the format (``e.csv.gz``).
COMPRESSED = (".gz", ".bz2")


def format_names(registry: dict[str, Format]) -> list[str]:
    """Every name ``registry`` answers to: its formats, then their aliases (sorted each).

    Example:
        >>> format_names(READERS)
        ['chunked', 'edgelist', 'euler', 'euler-dat', 'graphbolt', 'hgb', 'metis', 'ogb', 'pgl', \
'planetoid', 'shchur', 'csv', 'npy', 'npz', 'parquet', 'tsv']
    """
    return sorted(registry) + sorted(a for f in registry.values() for a in f.aliases)


def format_of_path(path: str | Path) -> str | None:
    """The reader a path's suffix (or being a folder) names, or None when it names none.

    First a look inside for the formats that have one (a Shchur ``.npz`` or ``.zip``, an
    HGB folder or ``.zip``, Planetoid ``ind.*`` files, an OGB folder); then the suffix.  A
    compression suffix is looked through (``e.csv.gz`` is an edge list); alone it names the
    reader that lists it (``4elt.gz``: METIS).

    Example:
        >>> format_of_path("edges.tsv"), format_of_path("g.graph.bz2"), format_of_path("x.dat")
        ('edgelist', 'metis', None)
        >>> format_of_path("CA-CondMat_tab-sep.edgelist")
        'edgelist'
    """
    path = Path(path)
    sniffed = next((f.name for f in READERS.values() if f.sniff is not None and f.sniff(path)),
                   None)
    if sniffed is not None:
        return sniffed
    if path.is_dir():
        return next((f.name for f in READERS.values() if f.reads_folder), None)
    suffix = path.suffix.lower()
    if suffix in COMPRESSED:
        suffix = Path(path.stem).suffix.lower() or suffix
    return next((f.name for f in READERS.values() if suffix in f.suffixes), None)


def _entry(registry: dict[str, Format], name: str, field: str) -> tuple[Format, dict[str, Any]]:
    """The entry ``name`` (a format or an alias) and the options an alias implies
    (``field``: the parameter that named it)."""
    if name in registry:
        return registry[name], {}
    for entry in registry.values():
        if name in entry.aliases:
            return entry, dict(entry.aliases[name])
    what = "output" if registry is WRITERS else "input"
    raise ValidationError(f"unknown {what} format {name!r}; choose one of "
                          f"{format_names(registry)}", field=field, value=name)


def _split(options: dict[str, Any], reader: Format, writer: Format) -> tuple[dict, dict]:
    """Options for the reader and the writer; ``read.X`` / ``write.X`` name one side only.

    A bare name that both sides take (``fmt``) is ambiguous and refused.
    """
    read: dict[str, Any] = {}
    write: dict[str, Any] = {}
    for key, value in options.items():
        side, name = key.split(".", 1) if key.startswith(("read.", "write.")) else ("", key)
        in_reader, in_writer = name in reader.options, name in writer.options
        if not side:
            if in_reader and in_writer:
                raise ValidationError(
                    f"option {name!r} is taken by both reader {reader.name!r} and writer "
                    f"{writer.name!r}: write read.{name}=... or write.{name}=...",
                    field="options", value=name)
            side = "read" if in_reader else "write" if in_writer else ""
        if side == "read" and in_reader:
            read[name] = value
        elif side == "write" and in_writer:
            write[name] = value
        else:
            takes = [f"reader {reader.name!r} takes {sorted(reader.options)} and "
                     f"{sorted(EDGE_OPTIONS)}"] if reader.name != "-" else []
            if writer.name != "-":
                takes.append(f"writer {writer.name!r} takes {sorted(writer.options)}")
            raise ValidationError(f"unknown option {key!r}: {'; '.join(takes)}",
                                  field="options", value=key)
    return read, write


def read_graph(fmt: str, inputs: Sequence[str | Path], **options: Any) -> Graph:
    """Read ``inputs`` with the registered reader ``fmt``, then apply the edge policy
    (``add_reverse``, ``self_loops``, ``duplicates``: see :data:`EDGE_OPTIONS`).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.graph"
        >>> _ = p.write_text("3 2\\n2\\n1 3\\n2\\n")
        >>> read_graph("metis", [p]).num_edges()
        4
    """
    reader, implied = _entry(READERS, fmt, "fmt")
    options, edge_options = _edge_options(options)
    ropts, _ = _split(options, reader, Format("-", "", print))
    return _read(reader, list(inputs), {**implied, **ropts}, edge_options)


def _edge_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split off :data:`EDGE_OPTIONS` (bare or ``read.``-prefixed) from ``options``."""
    rest, edge = {}, {}
    for key, value in options.items():
        name = key[len("read."):] if key.startswith("read.") else key
        if name in EDGE_OPTIONS:
            edge[name] = value
        else:
            rest[key] = value
    if edge:
        from ._policy import check_edge_policy

        check_edge_policy(edge.get("self_loops", "keep"), edge.get("duplicates", "keep"))
    return rest, edge


def _read(reader: Format, paths: list[Any], options: dict[str, Any],
          edge_options: dict[str, Any]) -> Graph:
    """Run the reader, then the edge policy (always: its warnings count self loops and
    duplicates)."""
    g = reader.func(paths, options)
    from ._policy import apply_edge_policy

    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1} files)"
    return apply_edge_policy(g, where=where, **edge_options)[0]


def write_graph(g: Graph, fmt: str, out: str | Path, **options: Any) -> None:
    """Write ``g`` with the registered writer ``fmt``."""
    writer, implied = _entry(WRITERS, fmt, "fmt")
    _split(options, Format("-", "", print), writer)
    writer.func(g, Path(out), {**implied, **options})


def convert(src_format: str, inputs: str | Path | Sequence[str | Path], dst_format: str,
            out: str | Path, **options: Any) -> ConvertReport:
    """Read ``inputs`` as ``src_format`` and write them to ``out`` as ``dst_format``.

    ``out`` is checked first (new, empty, or an earlier output of the same writer: a folder
    holding anything else is refused before the input is read).  The whole input is read
    and validated before anything is written; writers go through atomic writes, remove an
    earlier output's metadata file before writing and put theirs last, so a failure never
    leaves an output that looks complete.  ``options`` are split between reader and writer by the
    names in ``READERS[src_format].options`` and ``WRITERS[dst_format].options``.  An alias
    (``csv``, ``tsv``, ``parquet``, ``npy``, ``npz``) reads as its format with the options it
    implies; the report names the format.

    Raises:
        ValidationError: an unknown format or option (listing the valid ones).
        FormatError: bad input, naming the file, line and field.
        ConfigError: ``out`` is a file, or a folder holding something else.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "e.csv").write_text("src,dst\\n0,1\\n1,2\\n")
        >>> convert("edgelist", d / "e.csv", "chunked", d / "out",
        ...         num_chunks=2)  # doctest: +ELLIPSIS
        ConvertReport(edgelist -> chunked at '...out', nodes=3, edges=2)
    """
    reader, read_implied = _entry(READERS, src_format, "src_format")
    writer, write_implied = _entry(WRITERS, dst_format, "dst_format")
    options, edge_options = _edge_options(options)
    ropts, wopts = _split(options, reader, writer)
    ropts, wopts = {**read_implied, **ropts}, {**write_implied, **wopts}
    paths = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    if writer.check_out is not None:
        writer.check_out(Path(out))
    t0 = time.perf_counter()
    g = _read(reader, paths, ropts, edge_options)
    t1 = time.perf_counter()
    writer.func(g, Path(out), wopts)
    t2 = time.perf_counter()
    log.info("convert %s -> %s: %d nodes, %d edges, read %.2fs, write %.2fs", reader.name,
             writer.name, g.num_nodes(), g.num_edges(), t1 - t0, t2 - t1)
    return ConvertReport(reader.name, writer.name, str(out),
                         {t: g.num_nodes(t) for t in g.ntypes},
                         {":".join(et): g.num_edges(et) for et in g.canonical_etypes},
                         t1 - t0, t2 - t1)
