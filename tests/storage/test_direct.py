"""Output files written around the page cache (graphshard.storage.direct)."""

import errno
import os

import numpy as np
import pytest

from graphshard.storage import direct as _direct
from graphshard.storage import tensorfile as _tensorfile
from graphshard.storage.files import file_sha256
from graphshard.storage.tensorfile import load_tensors, save_tensors


@pytest.fixture
def small_buffers(monkeypatch):
    """Buffers of two blocks, so that short writes cross many buffer boundaries."""
    monkeypatch.setattr(_direct, "BUFFER_BYTES", 8192)
    monkeypatch.setattr(_direct, "_spare", [])


@pytest.mark.parametrize("sizes", [[], [1], [4095], [4096], [4097], [8191, 1, 8192, 3],
                                   [5000] * 7, [30001]])
def test_the_file_holds_exactly_the_bytes_written(tmp_path, small_buffers, sizes):
    rng = np.random.default_rng(len(sizes))
    pieces = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes]
    path = tmp_path / "out.bin"
    with _direct.DirectWriter(path) as handle:
        for piece in pieces:
            assert handle.write(piece) == len(piece)
    assert path.read_bytes() == b"".join(pieces)


def test_a_file_system_without_o_direct_gets_buffered_writes(tmp_path, small_buffers,
                                                            monkeypatch):
    real_open = os.open

    def refuse_direct(path, flags, mode=0o777):
        if flags & getattr(os, "O_DIRECT", 0):
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, mode)

    monkeypatch.setattr(_direct.os, "open", refuse_direct)
    with _direct.DirectWriter(tmp_path / "out.bin") as handle:
        handle.write(b"x" * 10000)
        assert not handle.direct
    assert (tmp_path / "out.bin").read_bytes() == b"x" * 10000


@pytest.mark.skipif(not getattr(os, "O_DIRECT", 0), reason="no O_DIRECT on this platform")
def test_writes_refused_with_o_direct_go_on_buffered(tmp_path, small_buffers, monkeypatch):
    real_write = os.write
    refused = []

    def refuse_once(fd, data):
        if not refused:
            refused.append(len(data))
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(fd, data)

    monkeypatch.setattr(_direct.os, "write", refuse_once)
    path = tmp_path / "out.bin"
    with _direct.DirectWriter(path) as handle:
        direct_at_start = handle.direct
        handle.write(bytes(range(256)) * 100)
    assert refused == ([8192] if direct_at_start else [])
    assert not handle.direct
    assert path.read_bytes() == bytes(range(256)) * 100


def test_an_error_inside_leaves_the_file_unfinished(tmp_path, small_buffers):
    path = tmp_path / "out.bin"
    with pytest.raises(RuntimeError), _direct.DirectWriter(path) as handle:
        handle.write(b"y" * 9000)
        raise RuntimeError("boom")
    assert path.stat().st_size != 9000  # not cut to length: whole blocks only
    assert len(_direct._spare) == 2  # the buffers went back


def test_big_durable_tensors_are_written_around_the_page_cache(tmp_path, small_buffers,
                                                               monkeypatch):
    monkeypatch.setattr(_tensorfile, "DIRECT_MIN_BYTES", 1000)
    writers = []
    real = _tensorfile.DirectWriter
    monkeypatch.setattr(_tensorfile, "DirectWriter",
                        lambda path: writers.append(path) or real(path))
    arrays = {"a": np.arange(3000, dtype=np.int64), "b": np.ones((7, 3), np.float32)}
    digest = save_tensors(tmp_path / "big.safetensors", arrays, {"k": "v"})
    small = save_tensors(tmp_path / "small.safetensors", {"a": np.arange(3)})
    scratch = save_tensors(tmp_path / "scratch.safetensors", arrays, {"k": "v"}, durable=False)
    assert len(writers) == 1 and writers[0].name.endswith(".tmp")
    loaded, meta = load_tensors(tmp_path / "big.safetensors")
    np.testing.assert_array_equal(loaded["a"], arrays["a"])
    np.testing.assert_array_equal(loaded["b"], arrays["b"])
    assert meta == {"k": "v"}
    assert digest == file_sha256(tmp_path / "big.safetensors") == scratch
    assert small == file_sha256(tmp_path / "small.safetensors")
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["big.safetensors", "scratch.safetensors", "small.safetensors"]
    from graphshard.storage.files import file_mode  # the umask's mode, as open() gives

    assert (tmp_path / "big.safetensors").stat().st_mode & 0o777 == file_mode()


def test_a_failed_disk_write_leaves_no_file_and_no_temp(tmp_path, small_buffers, monkeypatch):
    """A write that fails in the writer's background thread (here: a full disk) reaches
    the caller, and neither the file nor its temp name is left behind."""
    monkeypatch.setattr(_tensorfile, "DIRECT_MIN_BYTES", 1000)

    def disk_full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_direct.os, "write", disk_full)
    with pytest.raises(OSError, match="No space left"):
        save_tensors(tmp_path / "big.safetensors", {"a": np.arange(5000)})
    assert list(tmp_path.iterdir()) == []
    assert len(_direct._spare) == 2
