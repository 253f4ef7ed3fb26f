"""Every test file and every doctest of the package is collected by the README's test command.

pytest skips folders it considers build output (``dist``, ``build``, ...) without a word:
108 tests under ``tests/dist/`` once ran nowhere. This test runs the collection the way the
README's command does (same rootdir, same configuration) and fails naming each test file,
and each module with ``>>>`` examples, that yielded nothing.  When this run is the README's
command, its own collection (every xdist worker collects everything) already answers; a run
of fewer tests (``pytest tests/test_collection.py``) collects again in a subprocess.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _expected() -> set[str]:
    tests = {p for p in (ROOT / "tests").rglob("test_*.py")}
    doctests = {p for p in (ROOT / "src" / "graphshard").rglob("*.py")
                if ">>>" in p.read_text(encoding="utf-8")}
    return {p.relative_to(ROOT).as_posix() for p in tests | doctests
            if "__pycache__" not in p.parts}


def _collected() -> tuple[set[str], str]:
    """Files with at least one collected item, or skipped whole at import, and the output."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, check=False)
    files = {line.split("::", 1)[0] for line in proc.stdout.splitlines() if "::" in line}
    # a module skipped at import (pytest.importorskip) counts as looked at
    files |= set(re.findall(r"^SKIPPED \[\d+\] ([^:\s]+\.py)", proc.stdout, re.MULTILINE))
    return files, proc.stdout + proc.stderr


def test_every_test_file_and_doctest_module_is_collected(collected_files):
    files, output = collected_files, "(this run's own collection)"
    if _expected() - files:  # fewer tests asked for, or a file pytest skips: ask pytest
        files, output = _collected()
    missing = sorted(_expected() - files)
    assert not missing, (f"{len(missing)} file(s) with tests that pytest does not collect "
                         f"(a skipped folder name such as dist/build, or an import error):\n  "
                         + "\n  ".join(missing) + "\n--- pytest output (tail) ---\n"
                         + output[-3000:])
    # the distributed package is the one a default pytest option once hid
    assert any(f.startswith("tests/distributed/") for f in files)
    assert any(f.startswith("src/graphshard/distributed/") for f in files)
