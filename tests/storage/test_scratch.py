"""Scratch files are reused in place: released into a pool, claimed by later writes, and
the writes give the same bytes as writes to new files."""

from __future__ import annotations

import os

import numpy as np
import pytest

from graphshard.storage import files as _files
from graphshard.storage import scratch as _scratch
from graphshard.storage.scratch import REUSE_MIN_BYTES, ScratchPool, claim_scratch, save_npy
from graphshard.storage.tensorfile import load_tensors, save_tensors

MIB = 1 << 20


def _file(path, size):
    path.write_bytes(b"\xab" * size)
    return path


def test_a_released_file_is_written_over_in_place_and_cut_to_length(tmp_path):
    pool = ScratchPool(tmp_path / "pool")
    old = _file(tmp_path / "old.npy", 3 * MIB)
    inode = os.stat(old).st_ino
    pool.release([old])
    assert not old.exists() and len(os.listdir(pool.folder)) == 1
    arr = np.arange(MIB // 8 + 5, dtype=np.int64)  # a little over 1 MiB
    save_npy(tmp_path / "new.npy", arr, pool.folder)
    assert os.stat(tmp_path / "new.npy").st_ino == inode  # the same file
    assert os.listdir(pool.folder) == []
    np.testing.assert_array_equal(np.load(tmp_path / "new.npy"), arr)
    np.save(tmp_path / "plain.npy", arr)
    assert (tmp_path / "new.npy").read_bytes() == (tmp_path / "plain.npy").read_bytes()


def test_save_npy_writes_over_its_own_file(tmp_path):
    path = tmp_path / "a.npy"
    save_npy(path, np.arange(MIB))
    inode = os.stat(path).st_ino
    save_npy(path, np.arange(10))  # e.g. a shard thinned in place
    assert os.stat(path).st_ino == inode and np.load(path).tolist() == list(range(10))


def test_small_files_are_deleted_and_not_claimed_for(tmp_path):
    pool = ScratchPool(tmp_path / "pool")
    small, big = _file(tmp_path / "s", REUSE_MIN_BYTES - 1), _file(tmp_path / "b", 2 * MIB)
    pool.release([small, big])
    assert not small.exists() and len(os.listdir(pool.folder)) == 1
    save_npy(tmp_path / "tiny.npy", np.arange(3), pool.folder)  # too small to claim one
    assert len(os.listdir(pool.folder)) == 1


def test_a_claim_takes_the_smallest_file_that_holds_it_else_the_largest(tmp_path):
    pool = ScratchPool(tmp_path / "pool")
    files = {size: _file(tmp_path / f"f{size}", size * MIB) for size in (2, 4, 8)}
    inodes = {os.stat(f).st_ino: size for size, f in files.items()}
    pool.release(files.values())
    order = []
    for need in (3, 3, 3):
        assert claim_scratch(pool.folder, need * MIB, tmp_path / "t")
        order.append(inodes[os.stat(tmp_path / "t").st_ino])
    assert order == [4, 8, 2]
    assert not claim_scratch(pool.folder, MIB, tmp_path / "t")
    assert not claim_scratch(tmp_path / "gone", MIB, tmp_path / "t")


def test_release_tree_keeps_the_pools_own_files(tmp_path):
    pool = ScratchPool(tmp_path / "work" / "pool")
    pool.release([_file(tmp_path / "a", 2 * MIB)])
    (tmp_path / "work" / "level0").mkdir()
    _file(tmp_path / "work" / "level0" / "x", 2 * MIB)
    _file(tmp_path / "work" / "level0" / "y", 10)  # small: deleted
    pool.release_tree(tmp_path / "work")
    assert len(os.listdir(pool.folder)) == 2 and os.listdir(tmp_path / "work" / "level0") == []


def test_atomic_write_over_a_pool_file_gives_the_same_bytes(tmp_path):
    pool = ScratchPool(tmp_path / "pool")
    pool.release([_file(tmp_path / "old", 5 * MIB)])
    tensors = {"a": np.arange(MIB // 4), "b": np.ones(7, np.float32)}
    digest = save_tensors(tmp_path / "new.safetensors", tensors, {"k": "v"},
                          reuse=pool.folder)
    assert os.listdir(pool.folder) == []
    assert digest == save_tensors(tmp_path / "plain.safetensors", tensors, {"k": "v"})
    assert (tmp_path / "new.safetensors").read_bytes() == \
        (tmp_path / "plain.safetensors").read_bytes()
    assert os.stat(tmp_path / "new.safetensors").st_mode == \
        os.stat(tmp_path / "plain.safetensors").st_mode  # a reused file gets the same mode
    loaded, meta = load_tensors(tmp_path / "new.safetensors")
    np.testing.assert_array_equal(loaded["a"], tensors["a"])
    assert meta == {"k": "v"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "new.safetensors", "plain.safetensors", "pool"]  # no temp file left


def test_a_failed_atomic_write_over_a_pool_file_leaves_the_target_alone(tmp_path):
    pool = ScratchPool(tmp_path / "pool")
    pool.release([_file(tmp_path / "old", 2 * MIB)])
    (tmp_path / "t.txt").write_text("before")
    with pytest.raises(RuntimeError), \
            _files.atomic_write(tmp_path / "t.txt", "w", reuse=pool.folder, size=2 * MIB) as h:
        h.write("half")
        raise RuntimeError("crash")
    assert (tmp_path / "t.txt").read_text() == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool", "t.txt"]


def test_a_pool_on_another_file_system_is_left_alone(tmp_path, monkeypatch):
    pool = ScratchPool(tmp_path / "pool")
    pool.release([_file(tmp_path / "old", 2 * MIB)])

    def cross_device(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(_scratch.os, "rename", cross_device)
    assert not claim_scratch(pool.folder, MIB, tmp_path / "t")
    save_npy(tmp_path / "a.npy", np.arange(MIB), pool.folder)  # a new file instead
    assert np.load(tmp_path / "a.npy")[-1] == MIB - 1
    assert len(os.listdir(pool.folder)) == 1


def test_keep_largest_deletes_the_files_no_step_will_take(tmp_path):
    pool = ScratchPool(tmp_path / "pool")
    pool.release([_file(tmp_path / f"f{size}", size * MIB) for size in (3, 1, 4, 2)])
    pool.keep_largest(2)
    assert sorted(int(name.split("-")[0]) // MIB for name in os.listdir(pool.folder)) == [3, 4]
    pool.keep_largest(0)
    assert os.listdir(pool.folder) == []


def test_scratch_folder_removes_what_dead_processes_of_this_host_left(tmp_path):
    import socket
    import subprocess
    import sys

    from graphshard.storage.scratch import scratch_folder

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    prefix = f"graphshard-scratch-{socket.gethostname()}-"
    dead = tmp_path / f"{prefix}{gone.stdout.strip()}-abc"
    alive = tmp_path / f"{prefix}{os.getpid()}-def"
    other_host = tmp_path / "graphshard-scratch-elsewhere-1-ghi"
    for folder in (dead, alive, other_host):
        folder.mkdir()
        _file(folder / "f", 10)
    new = scratch_folder(tmp_path)
    assert not dead.exists() and alive.exists() and other_host.exists()
    assert new.is_dir() and new.name.startswith(f"{prefix}{os.getpid()}-")
