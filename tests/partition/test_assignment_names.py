"""Node type names become assignment file names: a name that leads elsewhere is refused."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.errors import ValidationError
from graphshard.partition.assignment import read_assignment, write_assignment


@pytest.mark.parametrize("ntype", ["../x", "/tmp/x", "..", ".hidden", "a\\b", "a\nb"])
def test_type_names_that_are_not_file_names(tmp_path, ntype):
    out = tmp_path / "assign"
    with pytest.raises(ValidationError, match="node type name must be a plain file name"):
        write_assignment(out, {"ok": np.zeros(2, np.int64), ntype: np.zeros(2, np.int64)}, 2)
    assert not out.exists()
    assert not (tmp_path / "x.txt").exists()
    write_assignment(out, {"ok": np.zeros(2, np.int64)}, 2)
    with pytest.raises(ValidationError, match="node type name"):
        read_assignment(out, ["ok", ntype])
    assert read_assignment(out, ["ok"])["ok"].tolist() == [0, 0]
