"""Our safetensors writer/reader agree with the safetensors package, both ways."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from graphshard._tensorfile import load_tensors, save_tensors
from graphshard.errors import FormatError

safetensors_numpy = pytest.importorskip("safetensors.numpy")

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text("abcxyz/._", min_size=1, max_size=6),
                       st.sampled_from(DTYPES).flatmap(
                           lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=1, max_dims=3,
                                                                      min_side=0, max_side=4))),
                       max_size=4))
def test_round_trip_both_ways(tmp_path_factory, tensors):
    d = tmp_path_factory.mktemp("st")
    save_tensors(d / "ours.safetensors", tensors, {"k": "v"})
    theirs = safetensors_numpy.load_file(str(d / "ours.safetensors"))
    assert set(theirs) == set(tensors)
    for k, v in tensors.items():
        assert theirs[k].dtype == v.dtype and np.array_equal(theirs[k], v, equal_nan=True)
    safetensors_numpy.save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()},
                                str(d / "theirs.safetensors"))
    ours, _ = load_tensors(d / "theirs.safetensors")
    for k, v in tensors.items():
        assert ours[k].shape == v.shape and np.array_equal(ours[k], v, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 10**6))
def test_fuzzed_bytes_raise_format_error(tmp_path_factory, noise, position):
    path = tmp_path_factory.mktemp("fz") / "t.safetensors"
    save_tensors(path, {"a": np.arange(6), "b": np.ones((2, 2), dtype=np.float32)})
    data = bytearray(path.read_bytes())
    cut = position % (len(data) + 1)
    path.write_bytes(bytes(data[:cut]) + noise)
    try:
        tensors, _ = load_tensors(path)
    except FormatError:
        return
    for arr in tensors.values():  # whatever loads must be consistent
        assert isinstance(arr, np.ndarray)
