"""Write big output files around the page cache (``O_DIRECT``).

A buffered write copies every byte into page-cache pages that the kernel must first
allocate.  On a VM whose host takes back the guest's free memory, those fresh pages are
what writing costs most, and ``O_DIRECT`` avoids them at the disk's own speed
(benchmarks/TUNING.md).  Output that this process
never reads again (partition files) therefore goes straight to the disk, and it does not
push the input's cached pages out either.

:class:`DirectWriter` copies what it is given into two page-aligned buffers and writes
each full buffer from a background thread while the caller fills the other.  The last
block is written padded, and the file is then cut to its real length.  Where the file
system refuses ``O_DIRECT`` (tmpfs, or a platform without it) the same object writes
through the page cache instead.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.bin"
    >>> with DirectWriter(p) as f:
    ...     _ = f.write(b"abc" * 5000)
    >>> p.stat().st_size, p.read_bytes()[-3:]
    (15000, b'abc')
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

__all__ = ["DIRECT_MIN_BYTES", "DirectWriter"]

#: durable files at least this big are written with ``O_DIRECT`` (smaller ones cost
#: little through the page cache, and may be read back soon, like a config)
DIRECT_MIN_BYTES = 16 << 20
#: bytes of each of the two write buffers
BUFFER_BYTES = 4 << 20
#: alignment of ``O_DIRECT`` offsets and lengths (a multiple of every common logical
#: block size, 512 B and 4 KiB)
_ALIGN = 4096
_O_DIRECT = getattr(os, "O_DIRECT", 0)
#: buffers of finished writers, kept for the next ones (fresh pages are the cost saved)
_spare: list[mmap.mmap] = []
_spare_lock = threading.Lock()


def _take_buffer() -> mmap.mmap:
    with _spare_lock:
        if _spare:
            return _spare.pop()
    return mmap.mmap(-1, BUFFER_BYTES)


def _give_back(buf: mmap.mmap) -> None:
    with _spare_lock:
        if len(_spare) < 2:
            _spare.append(buf)
            return
    buf.close()


class DirectWriter:
    """A write-only binary file of a new path written with ``O_DIRECT`` where the file
    system allows it (see the module docstring), else through the page cache.

    Use it as a context manager: leaving the block normally writes the rest, cuts the
    file to the bytes written and fsyncs it; an exception leaves a partial file for the
    caller to remove (:func:`graphshard.storage.files.atomic_path` does).

    Attributes:
        direct: Whether the file is written with ``O_DIRECT``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.direct = bool(_O_DIRECT)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        self._fd = -1
        if self.direct:
            try:
                self._fd = os.open(self.path, flags | _O_DIRECT, 0o600)
            except OSError as e:
                if e.errno != errno.EINVAL:
                    raise
                self.direct = False
        if self._fd < 0:
            self._fd = os.open(self.path, flags, 0o600)
        self._buffers = [_take_buffer(), _take_buffer()]
        self._pending: list[Future[None] | None] = [None, None]
        self._current = 0
        self._filled = 0
        self._size = 0
        self._io = ThreadPoolExecutor(1, thread_name_prefix="graphshard-direct")

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Append ``data``; returns its length in bytes."""
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            buf = self._buffers[self._current]
            take = min(BUFFER_BYTES - self._filled, len(view) - done)
            buf[self._filled:self._filled + take] = view[done:done + take]
            self._filled += take
            done += take
            if self._filled == BUFFER_BYTES:
                self._submit(BUFFER_BYTES)
        self._size += done
        return done

    def _submit(self, length: int) -> None:
        """Write the current buffer's first ``length`` bytes (a multiple of the alignment)
        in the background; switch to the other buffer once its own write is done."""
        index = self._current
        self._pending[index] = self._io.submit(self._write_all, index, length)
        self._current = 1 - index
        self._filled = 0
        waiting = self._pending[self._current]
        if waiting is not None:
            waiting.result()
            self._pending[self._current] = None

    def _write_all(self, index: int, length: int) -> None:
        view = memoryview(self._buffers[index])[:length]
        written = 0
        try:
            while written < length:
                try:
                    written += os.write(self._fd, view[written:])
                except OSError as e:  # a file system that takes the flag, not the writes
                    if e.errno != errno.EINVAL or not self.direct or written:
                        raise
                    self._stop_direct()
        finally:
            view.release()

    def _stop_direct(self) -> None:
        import fcntl

        fcntl.fcntl(self._fd, fcntl.F_SETFL, fcntl.fcntl(self._fd, fcntl.F_GETFL) & ~_O_DIRECT)
        self.direct = False

    def _finish(self) -> None:
        tail = self._filled
        padded = -(-tail // _ALIGN) * _ALIGN
        if padded:
            self._buffers[self._current][tail:padded] = bytes(padded - tail)
            self._submit(padded)
        for future in self._pending:
            if future is not None:
                future.result()
        self._pending = [None, None]
        os.ftruncate(self._fd, self._size)
        os.fsync(self._fd)

    def close(self) -> None:
        """Release the file and the buffers (without finishing the file)."""
        self._io.shutdown(wait=True)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        for buf in self._buffers:
            _give_back(buf)
        self._buffers = []

    def __enter__(self) -> DirectWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is None:
                self._finish()
        finally:
            self.close()
