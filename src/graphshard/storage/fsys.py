"""One file-system layer for folders given as URIs: ``s3://``, ``gs://``, ``hdfs://``,
``file://`` (through :mod:`pyarrow.fs`, already a dependency).

graphshard reads and writes its files with plain local paths (memory maps, atomic
renames, direct I/O).  A URI folder is reached by copying: a writer builds its output in a
node-local staging folder and :func:`publish_folder` uploads it, every file first and the
``*.json`` config last, so that a folder never looks complete before it is (readers treat
a folder without its config as absent); a reader copies the files it needs into a
per-process cache folder with :func:`download_verified`, which checks every byte against
the size and SHA-256 of the config, once, and then memory-maps the local copy.

The out-of-core pipeline uses the same layer without staging a whole folder: a remote
chunked input is read chunk by chunk (:func:`download_sized`, size-checked: the chunked
format has no checksums) by the task that needs the chunk, and a remote output's work
pieces go through :class:`graphshard.storage.workstore.WorkStore` (each uploaded by its
task with a done-marker holding its size and SHA-256, copied by its readers into their
:func:`cache_folder`, checked with :func:`download_verified`).

``file://`` URIs and plain paths are local: :func:`local_path` turns them into a
:class:`~pathlib.Path` and nothing is copied.

Endpoints and credentials are pyarrow's: ``AWS_ENDPOINT_URL`` (or
``AWS_ENDPOINT_URL_S3``), ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and
``AWS_DEFAULT_REGION`` in the environment of every process that opens the URI, or the same
in the URI itself (``s3://bucket/parts/g.json?endpoint_override=http://host:9000&scheme=http``),
which Ray workers started elsewhere receive along with the path.

Example:
    >>> is_remote("s3://bucket/parts"), is_remote("file:///tmp/parts"), is_remote("parts")
    (True, False, False)
    >>> str(local_path("file:///tmp/parts")), str(local_path("parts"))
    ('/tmp/parts', 'parts')
    >>> shown("s3://key:secret@bucket/parts/g.json?endpoint_override=http://h:1")
    's3://bucket/parts/g.json'
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import posixpath
import shutil
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import FormatError, GraphshardError, PartitionNotFoundError, ValidationError
from .files import INCOMPLETE_MARKER, atomic_path

__all__ = ["REMOTE_SCHEMES", "Location", "Traffic", "cache_folder", "download_folder",
           "download_sized", "download_verified", "is_remote",
           "local_path", "open_location", "publish_folder", "shown", "traffic"]

#: URI schemes reached through pyarrow's file systems (``file://`` is local).
REMOTE_SCHEMES = frozenset({"s3", "gs", "gcs", "hdfs", "viewfs"})

_BLOCK = 8 << 20  # bytes per read/write call of a copy


@dataclass(frozen=True)
class Traffic:
    """Bytes this process moved through :class:`Location` objects since it started: on
    the remote file systems (``s3://`` ...), what a cluster without a shared file system
    sends over the network for graphshard's files.  Plain paths and ``file://`` URIs are
    used in place, not copied, and not counted (unless opened as a :class:`Location`).

    Attributes:
        read: Bytes read from remote files (downloads, small reads).
        written: Bytes written to remote files (uploads, small writes).
    """

    read: int
    written: int


_traffic_lock = threading.Lock()
_traffic = [0, 0]  # bytes read, bytes written


def _count(read: int = 0, written: int = 0) -> None:
    with _traffic_lock:
        _traffic[0] += read
        _traffic[1] += written


def traffic() -> Traffic:
    """The bytes this process has read and written through remote URIs so far (a
    counter: subtract two readings for a span).

    Example:
        >>> import tempfile
        >>> before = traffic()
        >>> open_location(f"file://{tempfile.mkdtemp()}").child("a").write_bytes(b"abc")
        >>> traffic().written - before.written  # a file:// Location counts too
        3
    """
    with _traffic_lock:
        return Traffic(*_traffic)


def _scheme(path: Any) -> str | None:
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(text, str) or "://" not in text:
        return None
    return text.split("://", 1)[0].lower()


def is_remote(path: Any) -> bool:
    """``path`` is a URI of a remote file system (``s3://``, ``gs://``, ``hdfs://``...)."""
    return _scheme(path) in REMOTE_SCHEMES


def local_path(path: str | os.PathLike[str]) -> Path:
    """A plain path or ``file://`` URI as a local :class:`Path`.

    Raises:
        ValidationError: ``path`` is a URI of another scheme (remote ones go through
            :func:`open_location`).
    """
    scheme = _scheme(path)
    if scheme is None:
        return Path(path)
    if scheme == "file":
        return Path(unquote(urlsplit(os.fspath(path)).path))
    raise ValidationError(f"{shown(path)}: a {scheme}:// URI cannot be used here; "
                          f"supported: plain paths, file://, "
                          f"{', '.join(s + '://' for s in sorted(REMOTE_SCHEMES))}",
                          field="path", value=shown(path))


def shown(uri: str | os.PathLike[str]) -> str:
    """``uri`` without credentials and query (what messages print)."""
    text = os.fspath(uri)
    if "://" not in text:
        return text
    parts = urlsplit(text)
    host = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}{parts.path}"


@dataclass(frozen=True)
class Location:
    """A file or folder on a pyarrow file system.

    Attributes:
        fs: The :class:`pyarrow.fs.FileSystem`.
        path: The path inside ``fs`` (``bucket/key`` for object stores).
        uri: The URI as given (query and credentials kept: what other processes open).
    """

    fs: Any
    path: str
    uri: str

    def __str__(self) -> str:
        return shown(self.uri)

    def child(self, relative: str) -> Location:
        """The location ``relative`` (a ``/``-separated path inside this folder)."""
        parts = urlsplit(self.uri)
        uri = parts._replace(path=posixpath.join(parts.path, relative)).geturl()
        return Location(self.fs, posixpath.join(self.path, relative), uri)

    @property
    def name(self) -> str:
        """The last component of the path."""
        return posixpath.basename(self.path.rstrip("/"))

    @property
    def parent(self) -> Location:
        """The folder holding this location."""
        parts = urlsplit(self.uri)
        uri = parts._replace(path=posixpath.dirname(parts.path.rstrip("/"))).geturl()
        return Location(self.fs, posixpath.dirname(self.path.rstrip("/")), uri)

    def size(self) -> int | None:
        """Size in bytes of the file, or None when there is no file here."""
        import pyarrow.fs as pafs

        info = self._call("read", self.fs.get_file_info, self.path)
        return int(info.size) if info.type == pafs.FileType.File else None

    def files(self) -> list[str]:
        """Paths (relative, ``/``-separated) of every file under this folder ([] when
        there is none)."""
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(self.path, recursive=True, allow_not_found=True)
        infos = self._call("list", self.fs.get_file_info, selector)
        base = self.path.rstrip("/") + "/"
        return sorted(i.path[len(base):] for i in infos
                      if i.type == pafs.FileType.File and i.path.startswith(base))

    def open_sized(self, missing: str = "not found") -> Any:
        """The file opened for reading (a pyarrow random-access file: ``size()``,
        ``read(n)``): one request to an object store where a size check and then a read
        would take two.

        Raises:
            PartitionNotFoundError: no file here (the message: this location and
                ``missing``).
        """
        try:
            return self.fs.open_input_file(self.path)
        except FileNotFoundError as exc:
            raise PartitionNotFoundError(f"{self}: {missing}", path=str(self)) from exc
        except OSError as exc:  # pyarrow's errors: denied, unreachable, a folder
            raise GraphshardError(f"{self}: cannot read: {exc}", path=str(self)) from exc

    def read_bytes(self) -> bytes:
        """The whole file.

        Raises:
            PartitionNotFoundError: no file here.
        """
        with self.open_sized() as stream:
            data = bytes(self._call("read", stream.read))
        _count(read=len(data))
        return data

    def write_bytes(self, data: bytes) -> None:
        """Write a small file so that readers see the old file or the whole new one: one
        PUT on object stores, a temporary file renamed into place elsewhere."""
        self._make_parent()
        atomic_put = self.fs.type_name in ("s3", "gcs")
        target = self.path if atomic_put else f"{self.path}.tmp-{uuid.uuid4().hex}"
        with self._call("write", self.fs.open_output_stream, target) as out:
            out.write(data)
        _count(written=len(data))
        if not atomic_put:
            self._call("write", self.fs.move, target, self.path)

    def upload(self, source: Path) -> None:
        """Copy the local file ``source`` here (its size is checked afterwards)."""
        self._make_parent()
        with open(source, "rb") as handle, \
                self._call("write", self.fs.open_output_stream, self.path) as out:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                out.write(block)
                _count(written=len(block))
            sent = out.tell()
        # an object store's PUT succeeds only with the whole object: what was sent is there
        have = sent if self.fs.type_name in ("s3", "gcs") else self.size()
        want = source.stat().st_size
        if have != want:
            raise GraphshardError(f"{self}: {have} bytes after upload, {want} expected",
                                  path=str(self))

    def delete(self) -> None:
        """Delete the file here (none: nothing happens)."""
        if self.size() is not None:
            self._call("delete", self.fs.delete_file, self.path)

    def _make_parent(self) -> None:
        if self.fs.type_name not in ("s3", "gcs"):  # object stores have no folders
            self._call("write", self.fs.create_dir, posixpath.dirname(self.path))

    def _call(self, what: str, func: Any, *args: Any) -> Any:
        try:
            return func(*args)
        except OSError as exc:  # pyarrow's errors: no such bucket, denied, unreachable
            raise GraphshardError(f"{self}: cannot {what}: {exc}", path=str(self)) from exc


def open_location(uri: str | os.PathLike[str]) -> Location:
    """The :class:`Location` of a URI (``s3://``, ``gs://``, ``hdfs://``, ``file://``).

    Raises:
        ValidationError: not a URI pyarrow can open (the message says why).

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> loc = open_location(f"file://{d}").child("a/b.txt")
        >>> loc.write_bytes(b"hi")
        >>> loc.read_bytes(), open_location(f"file://{d}").files()
        (b'hi', ['a/b.txt'])
    """
    text = os.fspath(uri)
    try:
        fs, path = _filesystem_and_path(text)
    except (OSError, ValueError, TypeError) as exc:
        raise ValidationError(f"{shown(text)}: cannot open this URI: {exc}", field="path",
                              value=shown(text)) from exc
    return Location(fs, path, text)


#: Object-store file systems opened so far, by URI without its path, credentials in the
#: environment and process: opening one costs a client's set-up (and requests) that the
#: many small files of a pipeline run would otherwise pay each.
_FILESYSTEMS: dict[tuple[str, tuple[tuple[str, str], ...], int], Any] = {}
_FILESYSTEMS_LOCK = threading.Lock()
_CACHED_SCHEMES = ("s3", "gs", "gcs")


def _filesystem_and_path(text: str) -> tuple[Any, str]:
    """pyarrow's ``FileSystem.from_uri(text)``, with the file system of an object-store URI
    opened once per bucket, query, credentials and process, and the path then read from
    the URI as pyarrow reads it (``bucket/key``, percent-decoded, no trailing slash).

    Example:
        >>> q = "?endpoint_override=http://127.0.0.1:9&scheme=http&region=us-east-1"
        >>> fs, path = _filesystem_and_path("s3://b/a%20b/c/" + q)
        >>> fs2, path2 = _filesystem_and_path("s3://b/d" + q)
        >>> path, path2, fs2 is fs
        ('b/a b/c', 'b/d', True)
    """
    import pyarrow.fs as pafs

    parts = urlsplit(text)
    if parts.scheme not in _CACHED_SCHEMES or parts.fragment or not text.isascii():
        fs, path = pafs.FileSystem.from_uri(text)
        return fs, path
    env = tuple(sorted((k, v) for k, v in os.environ.items()
                       if k.startswith(("AWS_", "GOOGLE_", "GCS_", "STORAGE_EMULATOR"))))
    key = (f"{parts.scheme}://{parts.netloc}?{parts.query}", env, os.getpid())
    with _FILESYSTEMS_LOCK:
        fs = _FILESYSTEMS.get(key)
    if fs is None:  # the first time: pyarrow's own answer (and its errors)
        fs, path = pafs.FileSystem.from_uri(text)
        with _FILESYSTEMS_LOCK:
            if len(_FILESYSTEMS) >= 64:
                _FILESYSTEMS.clear()
            _FILESYSTEMS[key] = fs
        return fs, path
    bucket = parts.netloc.rpartition("@")[2]
    return fs, f"{bucket}/{unquote(parts.path).strip('/')}".rstrip("/")


def download_verified(source: Location, target: Path, size: int, sha256: str) -> None:
    """Copy ``source`` to the local ``target`` through a temporary file, checking its size
    and SHA-256 before it is renamed into place (a target never holds a bad copy).

    Raises:
        PartitionNotFoundError: ``source`` is missing.
        FormatError: its size or SHA-256 differs from the record.
    """
    with source.open_sized("part file is missing") as stream:
        have = stream.size()
        if have != size:
            raise FormatError(f"{source}: {have} bytes, but the config records {size}",
                              path=str(source), field="bytes")
        _copy_checked(source, stream, target, sha256)


def _copy_checked(source: Location, stream: Any, target: Path, sha256: str) -> None:
    """The rest of :func:`download_verified`: the copy through a temporary file and its
    SHA-256."""
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target, durable=False) as tmp, open(tmp, "r+b") as out:
        while block := source._call("read", stream.read, _BLOCK):
            digest.update(block)
            out.write(block)
            _count(read=len(block))
        out.truncate()
        if digest.hexdigest() != sha256:
            raise FormatError(f"{source}: SHA-256 differs from the one in the config",
                              path=str(source), field="sha256")


def download_sized(source: Location, target: Path) -> None:
    """Copy ``source`` to the local ``target`` through a temporary file, checking that the
    copy has the size the file system reported before it is renamed into place: the check
    for files whose format records no checksum (the chunked input's chunk files).

    Raises:
        PartitionNotFoundError: ``source`` is missing.
        FormatError: the copy's size differs (the file changed or the transfer broke).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    got = 0
    with source.open_sized("file is missing") as stream, \
            atomic_path(target, durable=False) as tmp, open(tmp, "r+b") as out:
        size = stream.size()
        while block := source._call("read", stream.read, _BLOCK):
            out.write(block)
            got += len(block)
            _count(read=len(block))
        out.truncate()
        if got != size:
            raise FormatError(f"{source}: {got} bytes read, {size} listed",
                              path=str(source), field="bytes")


_cache_lock = threading.Lock()
_cache_root: list[Path] = []


def cache_folder(key: str) -> Path:
    """This process's node-local copy folder for ``key`` (created): under
    ``$GRAPHSHARD_SCRATCH`` or the system's temporary folder, removed when the process
    exits, and by the next process of this host when a killed one could not."""
    from .scratch import scratch_folder

    with _cache_lock:
        if not _cache_root:
            _cache_root.append(scratch_folder(os.environ.get("GRAPHSHARD_SCRATCH"), "uri"))
            atexit.register(shutil.rmtree, _cache_root[0], True)
        folder = _cache_root[0] / hashlib.sha256(key.encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def download_folder(source: Location, target: Path) -> Path:
    """Copy every file under the remote folder ``source`` into the local folder ``target``
    (each through a temporary file renamed into place); returns ``target``.

    Raises:
        PartitionNotFoundError: ``source`` holds no file.
        FormatError: a listed name would lead outside ``target``.
    """
    from .files import path_inside

    names = source.files()
    if not names:
        raise PartitionNotFoundError(f"{source}: no files there", path=str(source))
    for rel in names:
        file = path_inside(target, rel, field="key", path=str(source))
        file.parent.mkdir(parents=True, exist_ok=True)
        loc = source.child(rel)
        with atomic_path(file, durable=False) as tmp, open(tmp, "r+b") as out, \
                loc._call("read", loc.fs.open_input_stream, loc.path) as stream:
            while block := stream.read(_BLOCK):
                out.write(block)
                _count(read=len(block))
            out.truncate()
    return target


def publish_folder(staging: Path, dest: Location, last: Iterable[str]) -> None:
    """Upload the local folder ``staging`` to ``dest``: the old ``*.json`` configs there
    are deleted first and :data:`INCOMPLETE_MARKER` written, then every file but ``last``,
    then ``last`` (the configs), then the marker is removed.  A reader that finds the
    config finds every file it lists."""
    last = list(last)
    marker = dest.child(INCOMPLETE_MARKER)
    marker.write_bytes(b"")
    for rel in remote_configs(dest):
        dest.child(rel).delete()
    for file in sorted(staging.rglob("*")):
        rel = file.relative_to(staging).as_posix()
        if file.is_file() and rel not in last and rel != INCOMPLETE_MARKER:
            dest.child(rel).upload(file)
    for rel in last:
        dest.child(rel).write_bytes((staging / rel).read_bytes())
    marker.delete()


def remote_configs(dest: Location) -> list[str]:
    """The graphshard partition configs (``*.json`` with ``graphshard.node_map``) at the
    top of a remote folder."""
    found = []
    for rel in dest.files():
        if "/" in rel or not rel.endswith(".json"):
            continue
        try:
            doc = json.loads(dest.child(rel).read_bytes())
        except (ValueError, GraphshardError):
            continue
        if isinstance(doc, dict) and "node_map" in doc and isinstance(doc.get("graphshard"),
                                                                      dict):
            found.append(rel)
    return found


def check_remote_out_dir(dest: Location) -> None:
    """The rule of every writer for a remote folder: it is empty, or a previous graphshard
    output (a config or the marker of an unfinished one).

    Raises:
        ValidationError: it holds other files.
    """
    files = dest.files()
    if files and INCOMPLETE_MARKER not in files and not remote_configs(dest):
        raise ValidationError(f"{dest}: output folder holds {len(files)} files but no "
                              f"graphshard partition config (e.g. {files[0]!r}); give an empty "
                              "or new folder", field="out_path", value=str(dest))
