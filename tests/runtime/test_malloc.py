"""The C heap settings of worker processes (``graphshard.runtime.malloc``), each checked in a
fresh interpreter: they change the process for good."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import os, sys
import numpy as np
from graphshard.runtime.malloc import keep_heap
if sys.argv[1] == "keep":
    assert keep_heap()
page = os.sysconf("SC_PAGE_SIZE")
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
before = resident()
a = np.ones(64 << 20, dtype=np.uint8)   # 64 MiB, written
del a
print((resident() - before) >> 20)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc only")
@pytest.mark.parametrize("mode", ["keep", "default"])
def test_keep_heap_keeps_freed_pages_resident(mode):
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True,
                         text=True, check=True)
    kept_mib = int(out.stdout)
    if mode == "keep":
        assert kept_mib >= 60  # freed, but still mapped for the next arrays
    else:
        assert kept_mib < 8  # a large array is its own mapping, unmapped when freed
