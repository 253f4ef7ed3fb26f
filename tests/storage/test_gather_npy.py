"""``gather_npy``: a gather from a ``.npy`` read in blocks, without mapping the file."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphshard.errors import FormatError
from graphshard.storage.files import gather_npy


@given(st.integers(0, 2**31), st.integers(0, 3000), st.sampled_from([1, 7, 64, 1 << 20]),
       st.booleans(), st.sampled_from(["<i8", "<i4", "<f4"]))
@settings(max_examples=60, deadline=None)
def test_gather_npy_is_the_gather_of_the_loaded_array(tmp_path_factory, seed, count, block,
                                                      in_order, dtype):
    """Any indices (repeats, any order or sorted, none), any block size, any dtype."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-(2**30), 2**30, 500).astype(dtype)
    path = tmp_path_factory.mktemp("g") / "a.npy"
    np.save(path, values)
    index = rng.integers(0, 500, count)
    if in_order:
        index = np.sort(index)
    got = gather_npy(path, index, block=block)
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(got, values[index])


def test_gather_npy_names_the_file_for_an_index_outside_it_or_a_2d_array(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(10))
    with pytest.raises(FormatError, match=r"a\.npy: index 10 outside its 10 entries"):
        gather_npy(path, [3, 10])
    with pytest.raises(FormatError, match="index -1"):
        gather_npy(path, [-1, 3])
    np.save(path, np.zeros((2, 2)))
    with pytest.raises(FormatError, match="1-D"):
        gather_npy(path, [0])
    path.write_bytes(b"not a npy")
    with pytest.raises(FormatError, match=r"a\.npy"):
        gather_npy(path, [0])
