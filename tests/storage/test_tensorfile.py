"""Our safetensors writer/reader agree with the safetensors package, both ways."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fuzzing import mutate_bytes, mutate_json, run_fuzz
from graphshard.errors import FormatError
from graphshard.storage.tensorfile import load_tensors, save_tensors

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


def _tensor_case(rng, folder):
    """A valid file with its bytes mutated, or its header JSON mutated (length prefix kept
    right, so the mutation reaches the header checks)."""
    path = folder / "t.safetensors"
    save_tensors(path, {"a": np.arange(6), "b": np.ones((2, 2), dtype=np.float32),
                        "c": np.zeros((0, 3), dtype=np.uint8)}, {"k": "v"})
    data = path.read_bytes()
    if rng.random() < 0.4:
        path.write_bytes(mutate_bytes(rng, data))
        return path
    n = int.from_bytes(data[:8], "little")
    header = mutate_json(rng, json.loads(data[8:8 + n]))
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)
    path.write_bytes(len(blob).to_bytes(8, "little") + blob + data[8 + n:])
    return path


def _tensors_problem(out) -> str | None:
    tensors, meta = out
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        return f"metadata not str -> str: {meta!r:.80}"
    for name, arr in tensors.items():
        if not isinstance(arr, np.ndarray) or arr.nbytes > 4096:
            return f"tensor {name!r}: {type(arr).__name__} of {getattr(arr, 'nbytes', '?')} " \
                   "bytes from a file of about 200"
    return None


def test_fuzz_load_tensors(tmp_path):
    run_fuzz("safetensors", _tensor_case, load_tensors, tmp_path, check=_tensors_problem)


def _with_header(path, header: dict) -> None:
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    blob = json.dumps(header).encode()
    path.write_bytes(len(blob).to_bytes(8, "little") + blob + data[8 + n:])


@pytest.mark.parametrize(("entry", "field"), [
    ({"a": {"dtype": "I64", "shape": [2**32, 2**32], "data_offsets": [0, 0]}}, "a"),  # wraps
    ({"a": {"dtype": "I64", "shape": [2**64], "data_offsets": [0, 48]}}, "a"),
    ({"a": {"dtype": "I64", "shape": [6], "data_offsets": [0, 2**70]}}, "a"),
    ({"a": {"dtype": "I64", "shape": [1.5], "data_offsets": [0, 8]}}, "a"),
    ({"__metadata__": [1], "a": {"dtype": "I64", "shape": [6], "data_offsets": [0, 48]}},
     "__metadata__"),
])
def test_inconsistent_header_is_format_error(tmp_path, entry, field):
    path = tmp_path / "t.safetensors"
    save_tensors(path, {"a": np.arange(6)})
    _with_header(path, entry)
    with pytest.raises(FormatError, match=r"t\.safetensors: ") as e:
        load_tensors(path)
    assert e.value.field == field
