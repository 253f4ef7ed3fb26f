"""The pipeline's disk estimate (issue 42): checked against free space before any work,
and on the larger side of what a run writes."""

from __future__ import annotations

import os
import shutil
from collections import namedtuple
from pathlib import Path

import pytest

from graphshard.cli import main
from graphshard.datasets.rmat_stream import write_rmat_chunked
from graphshard.errors import ValidationError
from graphshard.io.chunked import load_chunked_meta
from graphshard.pipeline import disk, run_pipeline


@pytest.fixture(scope="module")
def chunked(tmp_path_factory):
    path = tmp_path_factory.mktemp("rmat") / "in"
    write_rmat_chunked(path, 1 << 14, 16 << 14, 4, seed=2, num_features=16, num_classes=4)
    return path


def _bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


@pytest.mark.parametrize("method", ["lp", "random"])
def test_the_estimate_holds_what_a_run_writes(chunked, tmp_path, method):
    meta = load_chunked_meta(chunked)
    need = disk.estimate_disk(meta, method)
    run_pipeline(chunked, 4, tmp_path / "out", method=method)
    written = _bytes(tmp_path / "out")
    # never below what is written, and not far above it
    assert 0.7 * need.output < written <= need.output, (written, need)
    assert need.scratch == (16 * meta.num_edges[("_N", "_E", "_N")] if method == "lp" else 0)


Usage = namedtuple("Usage", "total used free")


def test_a_run_that_cannot_fit_is_refused_before_any_work(chunked, tmp_path, monkeypatch,
                                                           capsys):
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: Usage(10**9, 10**9, 5 << 20))
    out = tmp_path / "out"
    with pytest.raises(ValidationError, match=r"the run needs about \d+ MiB of disk there "
                       r"\(partitions \d+ MiB, work files \d+ MiB, lp's shards \d+ MiB; "
                       r"about \d+ bytes per edge\) but its file system has 5 MiB free"):
        run_pipeline(chunked, 4, out, method="lp")
    assert not out.exists()
    assert main(["pipeline", str(chunked), "--parts", "4", "--engine", "local", "--out",
                 str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("graphshard: error: ") and "5 MiB free" in err and len(
        err.strip().splitlines()) == 1
    assert not out.exists()


def test_an_earlier_output_counts_as_space(chunked, tmp_path, monkeypatch):
    out = tmp_path / "out"
    run_pipeline(chunked, 4, out, method="random")
    need = disk.estimate_disk(load_chunked_meta(chunked), "random")
    # free space short of the estimate by less than the earlier output's bytes: a rerun fits
    free = need.total - _bytes(out) // 2
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: Usage(10**12, 0, free))
    run_pipeline(chunked, 4, out, method="random")
    shutil.rmtree(out)
    with pytest.raises(ValidationError, match="MiB free"):
        run_pipeline(chunked, 4, out, method="random")


def test_a_uri_output_is_not_checked_here(chunked):
    need = disk.check_disk(load_chunked_meta(chunked), "lp", "s3://bucket/parts")
    assert need.output > 0 and os.path.exists(chunked)


def test_a_killed_runs_scratch_counts_as_space(chunked, tmp_path, monkeypatch):
    """kill -9 leaves a run's scratch folder (lp's shards among it); the rerun removes it
    before it checks the free space, so a rerun that fits only without it is not refused."""
    import socket
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    work = tmp_path / "work"
    dead = work / f"graphshard-scratch-{socket.gethostname()}-{gone}-abc"
    dead.mkdir(parents=True)
    left = 4 << 20
    (dead / "shard.npy").write_bytes(b"\0" * left)
    meta = load_chunked_meta(chunked)
    need = disk.estimate_disk(meta, "lp")
    # the file system's free space: short of the estimate while the dead folder holds its bytes
    free = lambda p: Usage(10**12, 0, need.total - left // 2 + (0 if dead.exists() else left))  # noqa: E731
    monkeypatch.setattr(disk.shutil, "disk_usage", free)
    assert disk.check_disk(meta, "lp", tmp_path / "out", work) == need
    assert not dead.exists()
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: Usage(10**12, 0, need.total - 1))
    with pytest.raises(ValidationError, match="free"):  # still refused when it cannot fit
        disk.check_disk(meta, "lp", tmp_path / "out", work)
