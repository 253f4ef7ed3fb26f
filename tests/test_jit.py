"""The kernel decorator (``graphshard._util.jit``) and numba's on-disk cache."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numba
import numpy as np

_PROBE = '''
from graphshard._util.jit import kernel


@kernel
def weighted_sum(a):  # pragma: no cover - compiled
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * (i + 1)
    return s
'''


def _load(path: Path, name: str) -> ModuleType:
    """A module of its own for ``path``: a new dispatcher, nothing compiled in memory."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kernel_never_runs_code_that_the_cache_holds_for_another_signature(tmp_path):
    """numba saves a new cache entry unlocked: read the index, take the next free data file
    number, write the index, write the data.  Two processes compiling two signatures of one
    kernel at once (``pytest -n 2`` on a fresh clone) both take number 1; when one's index
    and the other's data land last, the index sends a signature to code compiled for the
    other, and numba runs it unchecked (but for the item size): here code for contiguous
    arrays on a strided view, which sums the wrong elements without a word.  That state,
    made directly: the kernel must treat it as a miss, compile, and write the entry right."""
    path = tmp_path / "gs_cache_probe.py"
    path.write_text(_PROBE, encoding="utf-8")
    fn = _load(path, "gs_cache_probe").weighted_sum
    full = np.arange(1, 201, dtype=np.int64)
    view = full[::2]  # layout "A": the same dtype and item size as ``full``
    assert fn(full) == int((full * np.arange(1, 201)).sum())  # compiled, saved
    cache, codegen = fn._cache, fn.targetctx.codegen()
    key_c = cache._index_key((numba.typeof(full),), codegen)
    key_a = cache._index_key((numba.typeof(view),), codegen)
    index = cache._cache_file._load_index()
    cache._cache_file._save_index({key_a: index[key_c]})  # what the race leaves
    want = int((view * np.arange(1, 101)).sum())
    assert fn(view) == want
    again = _load(path, "gs_cache_probe_again").weighted_sum
    assert again(view) == want
    assert again.stats.cache_hits[(numba.typeof(view),)] == 1  # the entry was rewritten
