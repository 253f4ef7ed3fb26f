"""assign / import_assignment: the assignment folder follows every writer's folder rule."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ConfigError, ValidationError
from graphshard.pipeline import assign, import_assignment
from graphshard.storage import files as _files


@pytest.fixture
def chunked(tmp_path: Path) -> Path:
    gs.io.write_chunked(gs.graph((np.arange(6), (np.arange(6) + 1) % 6)), tmp_path / "g", 2)
    return tmp_path / "g"


def test_a_foreign_folder_is_refused_and_left_alone(chunked: Path, tmp_path: Path) -> None:
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "_N.txt").write_text("precious\n")
    (out / "partition_meta.json").write_text('{"num_parts": 2}')  # DGL's, not ours
    with pytest.raises(ConfigError, match="holds no assignment written by graphshard"):
        assign(chunked, 2, out, method="hash")
    parmetis = tmp_path / "parmetis.txt"
    parmetis.write_text("0\n1\n" * 3)
    with pytest.raises(ConfigError, match="holds no assignment written by graphshard"):
        import_assignment(parmetis, chunked, out)
    assert (out / "_N.txt").read_text() == "precious\n"
    assert sorted(p.name for p in out.iterdir()) == ["_N.txt", "partition_meta.json"]


def test_an_earlier_assignment_is_replaced(chunked: Path, tmp_path: Path) -> None:
    out = tmp_path / "a"
    assign(chunked, 2, out, method="hash")
    result = assign(chunked, 3, out, method="hash")
    assert result.part_sizes == [2, 2, 2]
    assert json.loads((out / "assignment.json").read_text())["num_parts"] == 3
    assert sorted(p.name for p in out.iterdir()) == ["_N.npy", "_N.txt", "assignment.json"]


def test_a_failed_rewrite_leaves_no_assignment_json(chunked: Path, tmp_path: Path,
                                                    monkeypatch) -> None:
    out = tmp_path / "a"
    assign(chunked, 2, out, method="hash")

    def full(path, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(_files, "atomic_path", full)
    with pytest.raises(OSError, match="No space left"):
        assign(chunked, 3, out, method="hash")
    assert not (out / "assignment.json").exists()  # the old one would describe 2 parts
    monkeypatch.undo()
    assert assign(chunked, 3, out, method="random").num_parts == 3  # ours: rerun is fine


def test_importing_a_missing_file_names_it(chunked: Path, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="missing: the assignment to import does not "
                                              "exist"):
        import_assignment(tmp_path / "missing", chunked, tmp_path / "a")
    assert not (tmp_path / "a").exists()
