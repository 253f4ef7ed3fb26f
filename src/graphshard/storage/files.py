"""Atomic file writes and checksums: the one place graphshard writes files (scratch files
reused in place: :mod:`graphshard.storage.scratch`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import shutil
import stat
import tempfile
import threading
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from .scratch import REUSE_MIN_BYTES, claim_scratch

__all__ = ["INCOMPLETE_MARKER", "atomic_path", "atomic_write", "check_out_dir",
           "check_path_name", "check_regular_file", "claim_out_dir", "file_sha256",
           "json_object_with", "load_npy", "mark_complete", "path_inside", "regular_file_stat",
           "remove_stale_temps", "warn_if_short_of_space", "write_json_atomic"]

_log = logging.getLogger(__name__)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", *,
                 reuse: str | os.PathLike[str] | None = None, size: int = 0,
                 durable: bool = True) -> Iterator[IO[Any]]:
    """Open a temp file next to ``path``; on success fsync it and rename it onto ``path``.

    On an exception the temp file is removed and ``path`` is left as it was.  With
    ``reuse`` (a :class:`~graphshard.storage.scratch.ScratchPool` folder) and ``size`` (the
    bytes about to be written), the temp file is a freed scratch file of the pool,
    written over in place; ``durable=False`` skips the fsync (see :func:`atomic_path`).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> with atomic_write(d / "x.txt", "w") as f:
        ...     _ = f.write("hello")
        >>> (d / "x.txt").read_text()
        'hello'
    """
    with atomic_path(path, durable=durable, reuse=reuse, size=size) as tmp, \
            open(tmp, mode.replace("w", "r+")) as handle:  # the temp file exists
        yield handle
        handle.truncate()  # a reused file may have been longer


#: Longest name a path component may have on common file systems (bytes, UTF-8).
MAX_NAME_BYTES = 255


def check_path_name(name: Any, *, field: str, path: str | os.PathLike[str] | None = None) -> str:
    """Return ``name`` if it is safe as one path component, else raise ValidationError.

    The one check for every name that becomes a file or folder name (graph names, node
    and edge type names, feature names, ``--name``), whether it comes from an argument or
    from a file: a non-empty string of at most 255 UTF-8 bytes, not ``.`` or ``..``, not
    starting with ``.`` (our temp and scratch files do), and without ``/``, ``\\``, NUL or
    other control characters.  So no name can lead a write outside its folder.

    Args:
        name: The name to check.
        field: What the name is, for the message (``graph_name``, ``ntypes[2]``, ...).
        path: The file the name was read from, if any.

    Raises:
        ValidationError: naming the field (and file) and the offending value.

    Example:
        >>> check_path_name("shop", field="graph_name")
        'shop'
        >>> check_path_name("../../x", field="graph_name", path="meta.json")
        Traceback (most recent call last):
        ...
        graphshard.errors.ValidationError: meta.json: graph_name must be a plain file name \
(no '/', '\\', control characters, leading '.'), got '../../x'
    """
    from ..errors import ValidationError

    bad = (not isinstance(name, str) or not name or name.startswith(".")
           or any(ch in "/\\" or ord(ch) < 32 or ord(ch) == 127 for ch in name)
           or len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES)
    if bad:
        where = f"{path}: " if path is not None else ""
        raise ValidationError(f"{where}{field} must be a plain file name (no '/', '\\', "
                              f"control characters, leading '.'), got {name!r}",
                              path=None if path is None else str(path), field=field,
                              value=name)
    return name


def path_inside(folder: str | os.PathLike[str], relative: Any, *, field: str,
                path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve ``relative`` against ``folder`` and return it if it stays inside ``folder``.

    For paths read from files we write (a partition config's ``part-i`` entries): an
    absolute path, a ``..`` that climbs out, or a symbolic link that leads out is refused
    with a FormatError naming the file and field.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> path_inside(d, "part0/graph.safetensors", field="part-0").name
        'graph.safetensors'
        >>> path_inside(d, "../etc/passwd", field="part-0", path="g.json")
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: g.json: part-0 is '../etc/passwd', which leads outside \
the folder of the file
    """
    from ..errors import FormatError

    where = f"{path}: " if path is not None else ""
    if not isinstance(relative, str) or not relative or "\x00" in relative:
        raise FormatError(f"{where}{field} must be a relative path string, got {relative!r}",
                          path=None if path is None else str(path), field=field,
                          value=relative)
    base = Path(folder).resolve()
    target = (base / relative).resolve()
    if Path(relative).is_absolute() or not target.is_relative_to(base):
        raise FormatError(f"{where}{field} is {relative!r}, which leads outside the folder "
                          "of the file", path=None if path is None else str(path),
                          field=field, value=relative)
    return target


#: Present in an output folder while a writer is filling it: the folder is ours (a rerun
#: may write into it) and does not hold a complete output.
INCOMPLETE_MARKER = ".graphshard-incomplete"

#: Suffixes of files, not folders: a new output folder named like this is refused.
_FILE_SUFFIXES = (".json", ".csv", ".tsv", ".txt", ".parquet", ".npy", ".npz", ".graph",
                  ".safetensors")


def json_object_with(path: str | os.PathLike[str], *keys: str) -> bool:
    """Whether ``path`` is a JSON object holding every one of ``keys`` (False for a missing,
    unreadable or malformed file): how a writer recognises a previous output of its own.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.json"
        >>> _ = p.write_text('{"graphshard": {}, "edge_type": []}')
        >>> json_object_with(p, "graphshard", "edge_type"), json_object_with(p, "node_map")
        (True, False)
    """
    try:
        with open(path, encoding="utf-8") as handle:
            obj = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and all(k in obj for k in keys)


def check_out_dir(out_dir: str | os.PathLike[str], ours: Callable[[Path], bool],
                  what: str) -> Path:
    """The rule of every writer's output folder: new, empty, being written by us (it holds
    :data:`INCOMPLETE_MARKER` or a ``.graphshard-work`` folder) or holding a previous
    output of ours (``ours(folder)`` is true); never anything else, so no writer replaces
    files it did not write.

    Args:
        out_dir: The output folder.
        ours: Whether a folder holds a previous output of this writer.
        what: That output, for the message (``"graphshard partition config"``).

    Raises:
        ConfigError: ``out_dir`` is a file, or a folder holding other things.
        ValidationError: ``out_dir`` does not exist and is named like a file (``x.json``).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "keep.txt").write_text("mine")
        >>> check_out_dir(d, lambda f: False, "chunked graph")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        graphshard.errors.ConfigError: ... is not empty and holds no chunked graph; refusing \
to write into it (choose a new or empty directory)
    """
    from ..errors import ConfigError, ValidationError

    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{out_dir} exists and is not a directory", path=str(out_dir))
    if not out_dir.exists() and out_dir.suffix.lower() in _FILE_SUFFIXES:
        raise ValidationError(f"{out_dir}: the output is a folder, but this name looks like "
                              f"a file ({out_dir.suffix}); name a folder", path=str(out_dir),
                              field="out_dir", value=str(out_dir))
    if out_dir.is_dir() and any(out_dir.iterdir()) \
            and not (out_dir / INCOMPLETE_MARKER).exists() \
            and not (out_dir / ".graphshard-work").is_dir() and not ours(out_dir):
        raise ConfigError(f"{out_dir} is not empty and holds no {what}; refusing to write "
                          "into it (choose a new or empty directory)", path=str(out_dir))
    return out_dir


def claim_out_dir(out_dir: str | os.PathLike[str], ours: Callable[[Path], bool],
                  what: str) -> Path:
    """:func:`check_out_dir`, then create the folder and put :data:`INCOMPLETE_MARKER` in
    it: until :func:`mark_complete`, the folder is ours and known to be unfinished.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()) / "out"
        >>> [p.name for p in claim_out_dir(d, lambda f: False, "output").iterdir()]
        ['.graphshard-incomplete']
        >>> mark_complete(d); list(d.iterdir())
        []
    """
    out_dir = check_out_dir(out_dir, ours, what)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / INCOMPLETE_MARKER).touch()
    return out_dir


def mark_complete(out_dir: str | os.PathLike[str]) -> None:
    """Remove :data:`INCOMPLETE_MARKER` (once the output's last file is in place)."""
    (Path(out_dir) / INCOMPLETE_MARKER).unlink(missing_ok=True)


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON (key order kept) atomically."""
    with atomic_write(path, "w") as handle:
        json.dump(obj, handle, indent=2)
        handle.write("\n")


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


_umask_lock = threading.Lock()


def file_mode() -> int:
    """The mode of a new file as ``open()`` would create it: ``0o666`` less the umask.

    Read from ``/proc/self/status`` where it says (Linux), else by setting and restoring
    the umask under a lock (``os.umask`` has no read-only form).

    Example:
        >>> file_mode() & 0o600
        384
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, durable: bool = True,
                reuse: str | os.PathLike[str] | None = None, size: int = 0,
                private: bool = False) -> Iterator[Path]:
    """Yield a temp path next to ``path`` for a library to write; then fsync and rename it.

    The file gets the mode a plain ``open()`` would give it (``0o666`` less the umask),
    not the ``0o600`` of the temp file, so outputs are as readable as the user's other
    files; ``private=True`` keeps ``0o600`` (for secrets).

    ``durable=False`` skips the fsync: for scratch files that a crash makes worthless
    anyway (a reader still never sees a partial file; fsync's cost: benchmarks/TUNING.md).  With
    ``reuse`` (a :class:`~graphshard.storage.scratch.ScratchPool` folder on the same file
    system) and ``size`` of at least :data:`~graphshard.storage.scratch.REUSE_MIN_BYTES`, the
    temp file is a freed scratch file of the pool when it has one, for a writer that
    writes over it in place and cuts it to length (:func:`atomic_write` does); else a
    new empty file.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> with atomic_path(d / "y.bin") as tmp:
        ...     _ = tmp.write_bytes(b"1")
        >>> (d / "y.bin").read_bytes()
        b'1'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    reused = reuse is not None and size >= REUSE_MIN_BYTES and claim_scratch(reuse, size, tmp)
    if reused or not private:  # reused or not, the same mode
        os.chmod(tmp, 0o600 if private else file_mode())
    try:
        yield Path(tmp)
        if durable:
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            # a failed write (disk full) names no file: name the one being written
            raise type(exc)(exc.errno, exc.strerror, str(path)) from exc
        raise


#: A temp file of :func:`atomic_path`: ``.<name>.<8 characters of mkstemp>.tmp``.
_ATOMIC_TEMP = re.compile(r"\..+\.[A-Za-z0-9_]{8}\.tmp")


def remove_stale_temps(folder: str | os.PathLike[str], *, skip: tuple[str, ...] = ()
                       ) -> int:
    """Delete the temp files :func:`atomic_path` left under ``folder`` when a writer was
    killed (SIGKILL skips its cleanup); return how many.

    For a writer that owns ``folder`` (checked by :func:`check_out_dir`) and calls it
    before writing, so a rerun after a crash leaves nothing of the crash behind.  Only
    names of :func:`atomic_path`'s pattern go; sub-folders named in ``skip`` are left alone.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> (d / "part0").mkdir()
        >>> _ = (d / "part0" / ".x.bin.Ab_3xY9z.tmp").write_bytes(b"half")  # a killed writer's
        >>> _ = (d / "part0" / "keep.tmp").write_bytes(b"")
        >>> remove_stale_temps(d), sorted(p.name for p in (d / "part0").iterdir())
        (1, ['keep.tmp'])
    """
    removed = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files:
            if _ATOMIC_TEMP.fullmatch(name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(root, name))
                    removed += 1
    if removed:
        _log.info("%s: removed %d temp file(s) of an interrupted run", folder, removed)
    return removed


def warn_if_short_of_space(folder: str | os.PathLike[str], need: int, what: str,
                           hint: str = "") -> bool:
    """Log a warning when the file system of ``folder`` (or of its nearest existing parent)
    has less than ``need`` bytes free; return whether it did.

    A warning, not an error: ``need`` is an estimate, and a run that fails for space
    leaves nothing that looks complete, so the user decides.

    Example:
        >>> import tempfile
        >>> warn_if_short_of_space(tempfile.gettempdir(), 1, "a byte")
        False
    """
    path = Path(folder).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    free = shutil.disk_usage(path).free
    if free >= need:
        return False
    _log.warning("%s needs about %.1f GB in %s, which has %.1f GB free: the run may fail "
                 "for lack of space%s", what, need / 1e9, folder, free / 1e9,
                 f" ({hint})" if hint else "")
    return True


#: ``np.load`` parses a ``.npy`` header with ``ast.literal_eval``, and CPython 3.11 builds
#: ASTs with state shared by all threads: parses in two threads at once can fail with
#: "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
#: Loads are serialised; task threads mostly memory-map, which only parses the header
_LOAD_LOCK = threading.Lock()


_NOT_REGULAR = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"))


def regular_file_stat(path: str | os.PathLike[str]) -> tuple[os.stat_result | None, str]:
    """``(os.stat(path), "")`` when ``path`` is a regular file (symbolic links followed),
    else ``(None, why)``: ``"does not exist"``, ``"is a FIFO, not a regular file"``,
    ``"cannot be opened (...)"``.  The one check made before opening a file a user or a
    file names: reading a FIFO blocks for ever, a device (``/dev/zero``) never ends.

    Example:
        >>> regular_file_stat("/dev/null")[1]
        'is a character device, not a regular file'
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, "does not exist"
    except (OSError, ValueError) as exc:  # ENAMETOOLONG, EACCES, ELOOP; a NUL byte
        return None, f"cannot be opened ({getattr(exc, 'strerror', None) or exc})"
    if stat.S_ISREG(st.st_mode):
        return st, ""
    kind = next((name for test, name in _NOT_REGULAR if test(st.st_mode)), "special")
    return None, f"is {kind}, not a regular file"


def check_regular_file(path: str | os.PathLike[str], *, field: str | None = None
                       ) -> os.stat_result:
    """``os.stat(path)`` if ``path`` is a regular file; else, as ``open`` would for a missing
    file, FileNotFoundError, and for anything else (a FIFO, a device, a folder) a
    :class:`~graphshard.errors.FormatError` naming the path and what it is.

    Example:
        >>> check_regular_file("/dev/zero")
        Traceback (most recent call last):
        ...
        graphshard.errors.FormatError: /dev/zero: is a character device, not a regular file
    """
    from ..errors import FormatError

    st, problem = regular_file_stat(path)
    if st is not None:
        return st
    if problem == "does not exist":
        raise FileNotFoundError(2, "No such file or directory", str(path))
    raise FormatError(f"{str(path)[:300]}: {problem}", path=str(path), field=field)


def _check_npy_header(path: str | os.PathLike[str], size: int) -> None:
    """Refuse a ``.npy`` whose header declares more data than the file holds, before
    ``np.load`` allocates (or maps) it; other files (an ``.npz``) pass through."""
    import numpy as np

    with open(path, "rb") as handle:
        if handle.read(6) != b"\x93NUMPY":
            return
        handle.seek(0)
        version = np.lib.format.read_magic(handle)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, _, dtype = read(handle)
        need = math.prod(shape) * dtype.itemsize
        held = size - handle.tell()
    if need > held:
        raise ValueError(f"the header declares shape {shape} of {dtype}, {need:,} bytes, but "
                         f"the file holds {held:,} after the header")


def load_npy(path: str | os.PathLike[str], *,
             mmap_mode: Literal["r", "r+", "w+", "c"] | None = None) -> Any:
    """``np.load`` without pickle; a damaged file is a :class:`FormatError` naming it.
    Safe to call from several threads at once (see :data:`_LOAD_LOCK`).

    numpy reports a corrupt header as ValueError, SyntaxError, OverflowError or
    tokenize.TokenError depending on the damage; all become FormatError here, as does a
    special file (a FIFO would block) and a header that declares more data than the file
    holds (checked before anything is allocated).

    Example:
        >>> import tempfile, pathlib, numpy as np
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.npy"
        >>> np.save(p, np.arange(3))
        >>> load_npy(p).tolist()
        [0, 1, 2]
    """
    import numpy as np

    from ..errors import FormatError

    try:
        st = check_regular_file(path)
        with _LOAD_LOCK:
            _check_npy_header(path, st.st_size)
            return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except (ValueError, OSError, EOFError, SyntaxError, tokenize.TokenError, OverflowError,
            MemoryError, TypeError) as exc:
        raise FormatError(f"{path}: not a readable .npy/.npz file ({exc})",
                          path=str(path)) from exc


def gather_npy(path: str | os.PathLike[str], index: Any, *, block: int = 1 << 20) -> Any:
    """``np.load(path)[index]`` for a 1-D ``.npy``, read in blocks of ``block`` entries with
    plain reads (only the blocks that hold an index): nothing of the file is mapped, so a
    gather spread over a large file adds no file pages to this process's resident set (a
    part build gathering its nodes' original IDs from the whole new->orig map did).

    Raises:
        FormatError: the file is not a readable 1-D ``.npy`` (named), or an index is
            outside it.

    Example:
        >>> import tempfile, pathlib, numpy as np
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.npy"
        >>> np.save(p, np.arange(100) * 10)
        >>> gather_npy(p, np.array([99, 3, 3, 50]), block=8).tolist()
        [990, 30, 30, 500]
    """
    import numpy as np

    from ..errors import FormatError

    index = np.asarray(index, dtype=np.int64)
    arr = load_npy(path, mmap_mode="r")  # checks the header and the file's size
    if arr.ndim != 1:
        raise FormatError(f"{path}: gather_npy reads 1-D arrays, found shape {arr.shape}",
                          path=str(path))
    n, dtype, start = len(arr), arr.dtype, int(arr.offset)
    del arr
    out = np.empty(len(index), dtype=dtype)
    if len(index) == 0:
        return out
    order = None if bool((index[1:] >= index[:-1]).all()) else np.argsort(index, kind="stable")
    wanted = index if order is None else index[order]
    if int(wanted[0]) < 0 or int(wanted[-1]) >= n:
        raise FormatError(f"{path}: index {int(wanted[0] if wanted[0] < 0 else wanted[-1])} "
                          f"outside its {n} entries", path=str(path))
    got = out if order is None else np.empty_like(out)
    blocks = wanted // block
    firsts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]])
    ends = np.r_[firsts[1:], len(wanted)]
    with open(path, "rb") as handle:
        for lo, hi in zip(firsts.tolist(), ends.tolist(), strict=True):
            first, last = int(wanted[lo]), int(wanted[hi - 1])
            handle.seek(start + first * dtype.itemsize)
            data = np.fromfile(handle, dtype=dtype, count=last - first + 1)
            got[lo:hi] = data[wanted[lo:hi] - first]
    if order is not None:
        out[order] = got
    return out
