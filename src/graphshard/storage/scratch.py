"""Scratch files reused in place: a finished file is handed to a later write instead of
being deleted.

A new file costs the kernel fresh page-cache pages.  On a VM whose host takes back the
guest's free memory (free page reporting), fresh pages are expensive: writing over files
whose pages are still cached is many times faster than writing new ones (benchmarks/TUNING.md).
Pipelines write many gigabytes of short-lived files (the ``lp`` method's pieces and
shards, then dispatch's routed pieces), so a freed file goes to a
:class:`ScratchPool` folder, and a later write takes one over when it can
(:func:`save_npy` for scratch arrays, :func:`graphshard.storage.files.atomic_write` with
``reuse`` for files that must appear atomically).  Output files, which are not read
again, skip the page cache instead (:mod:`graphshard.storage.direct`).

A claim is a rename, atomic on POSIX: tasks in several processes can share one pool.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> pool = ScratchPool(d / "free")
    >>> save_npy(d / "a.npy", np.arange(1 << 18), pool.folder)
    >>> pool.release([d / "a.npy"])
    >>> len(os.listdir(pool.folder))
    1
    >>> save_npy(d / "b.npy", np.arange(1 << 17), pool.folder)  # over a.npy's file
    >>> int(np.load(d / "b.npy")[-1]), os.listdir(pool.folder)
    (131071, [])
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .._util.process import process_running

__all__ = ["REUSE_MIN_BYTES", "ScratchPool", "claim_scratch", "make_work_dir",
           "remove_dead_scratch", "save_npy", "scratch_folder"]

#: files smaller than this are neither kept in a pool nor written over one: their pages
#: cost little, and they would cut a big freed file down to their size
REUSE_MIN_BYTES = 1 << 20


def make_work_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` (and its parents), the folder of a step's scratch files.

    Raises:
        ValidationError: ``path`` cannot be a folder (the error names ``work_dir``).

    Example:
        >>> import tempfile
        >>> make_work_dir(Path(tempfile.mkdtemp()) / "a" / "b").is_dir()
        True
    """
    from ..errors import ValidationError

    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValidationError(f"work_dir {str(path)!r} cannot be used as a folder: "
                              f"{e.strerror or e}", field="work_dir", value=str(path)) from e
    return path


def _pool_files(folder: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """``(size, name)`` of the files of a pool folder (:meth:`ScratchPool.release` puts
    the size in the name), smallest first."""
    names = os.listdir(folder)
    return sorted((int(name.split("-", 1)[0]), name) for name in names
                  if name.split("-", 1)[0].isdigit())


class ScratchPool:
    """A folder of freed scratch files for later writes to take over.

    Args:
        folder: The pool's folder (created).  Files released into it must be on its file
            system; the caller removes the folder with the rest of its scratch.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def release(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Move finished files into the pool (named by their size, so that a claim picks
        one big enough without reading the files' metadata); smaller ones than
        :data:`REUSE_MIN_BYTES` are deleted."""
        for path in paths:
            size = os.path.getsize(path)
            if size >= REUSE_MIN_BYTES:
                try:
                    os.replace(path, self.folder / f"{size:016d}-{uuid.uuid4().hex}")
                    continue
                except OSError as e:  # on another file system: no use to the pool
                    if e.errno != errno.EXDEV:
                        raise
            os.remove(path)

    def keep_largest(self, count: int) -> None:
        """Delete all but the ``count`` largest files of the pool: what a step that writes
        ``count`` big files can take over (the rest would only hold disk space)."""
        for _, name in _pool_files(self.folder)[::-1][max(0, count):]:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.folder / name)

    def release_tree(self, folder: str | os.PathLike[str]) -> None:
        """:meth:`release` every file under ``folder`` (the pool's own files stay)."""
        for root, _, names in os.walk(folder):
            if Path(root) != self.folder:
                self.release(os.path.join(root, name) for name in names)


def scratch_folder(parent: str | os.PathLike[str] | None = None, kind: str = "scratch"
                   ) -> Path:
    """A new scratch folder under ``parent`` (default: the system's temporary folder),
    ``graphshard-<kind>-<host>-<pid>-<random>``: named after this host and process.
    Folders of the same ``kind`` that processes of this host left there and that no
    longer run are removed first: a killed run (``kill -9``) cannot remove its own.

    Example:
        >>> import tempfile
        >>> folder = scratch_folder(tempfile.mkdtemp())
        >>> folder.name.startswith("graphshard-scratch-"), folder.is_dir()
        (True, True)
    """
    base = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    remove_dead_scratch(base, kind)
    prefix = f"graphshard-{kind}-{socket.gethostname()}-"
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


def remove_dead_scratch(parent: str | os.PathLike[str] | None = None, kind: str = "scratch"
                        ) -> int:
    """Remove the :func:`scratch_folder` folders of ``kind`` under ``parent`` (default: the
    system's temporary folder) whose process, on this host, no longer runs; return the
    bytes they held.  A run killed with ``kill -9`` leaves its folder behind; its rerun
    calls this before it checks the free space, so that space counts as free.

    Example:
        >>> import tempfile
        >>> base = tempfile.mkdtemp()
        >>> mine = scratch_folder(base)
        >>> remove_dead_scratch(base), mine.is_dir()  # this process runs: its folder stays
        (0, True)
    """
    base = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    prefix = f"graphshard-{kind}-{socket.gethostname()}-"
    freed = 0
    for old in base.glob(prefix + "*"):
        pid = old.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not process_running(int(pid)):
            for root, _, names in os.walk(old):
                for name in names:
                    with contextlib.suppress(OSError):
                        freed += os.lstat(os.path.join(root, name)).st_size
            shutil.rmtree(old, ignore_errors=True)
    return freed


def claim_scratch(pool: str | os.PathLike[str], need: int,
                  target: str | os.PathLike[str]) -> bool:
    """Rename a file of ``pool`` onto ``target`` (replacing it): the smallest that holds
    ``need`` bytes, else the largest.  False when the pool is empty or gone, or on
    another file system.  Several processes may claim at once: the loser of a rename
    tries the next file."""
    try:
        sized = _pool_files(pool)
    except OSError:
        return False
    big = [name for size, name in sized if size >= need]
    small = [name for size, name in reversed(sized) if size < need]
    for name in big + small:
        try:
            os.rename(os.path.join(pool, name), target)
            return True
        except FileNotFoundError:  # claimed by another process meanwhile
            continue
        except OSError:  # another file system: no file of this pool will do
            return False
    return False


def save_npy(path: str | os.PathLike[str], array: np.ndarray,
             pool: str | os.PathLike[str] | None = None) -> None:
    """``np.save(path, array)`` (no pickle), written over the file already at ``path``, or
    over a file claimed from ``pool``, in place: the file keeps its cached pages and is
    cut to the new length.  Not atomic: for scratch files that no reader opens before
    the writing task has returned."""
    path = Path(path)
    array = np.asarray(array)
    if pool is not None and array.nbytes >= REUSE_MIN_BYTES and not path.exists():
        claim_scratch(pool, array.nbytes + 128, path)  # 128: the .npy header
    handle: BinaryIO
    try:
        handle = open(path, "r+b")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        handle = open(path, "wb")  # noqa: SIM115
    with handle:
        np.lib.format.write_array(handle, array, allow_pickle=False)
        handle.truncate()
