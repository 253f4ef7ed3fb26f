"""The commands ``benchmarks/bench_pipeline.py`` documents run as written, at a small scale
(issue 42: its 100M-edge command stopped at once on the default memory budget).  Each
documented line is run with its sizes scaled down (``--edges``, ``--nodes``, ``--chunks``)
and one small Walshaw graph for ``--graph``; optional parts in brackets are run too."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from waiting import run_while_busy

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_pipeline.py"
SMALL = {"--edges": "200000", "--nodes": "16384", "--chunks": "4"}


def _documented() -> list[list[str]]:
    """The argument lists of the docstring's ``python benchmarks/bench_pipeline.py`` lines,
    brackets dropped (their contents kept)."""
    lines = re.findall(r"^\s*python benchmarks/bench_pipeline\.py(.*)$",
                       BENCH.read_text().split('"""')[1], flags=re.M)
    return [shlex.split(line.replace("[", " ").replace("]", " ")) for line in lines]


def test_the_docstring_documents_commands():
    commands = _documented()
    assert len(commands) >= 3 and any("--edges" in c for c in commands)


@pytest.mark.parametrize("index", range(len(_documented())))
def test_documented_command_runs_small(index, tmp_path, shared_file):
    args = _documented()[index]
    out: list[str] = []
    for i, arg in enumerate(args):
        if i and args[i - 1] in SMALL:
            out.append(SMALL[args[i - 1]])
        elif "walshaw/graphs/" in arg:
            out.append(str(shared_file("walshaw", "graphs", "add20.graph")))
        else:
            out.append(arg)
    run = run_while_busy([sys.executable, str(BENCH), *out, "--dir", str(tmp_path / "w")],
                         "the documented command", cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "edge cut" in run.stdout or "cut" in run.stdout


def test_auto_budget_holds_the_documented_100m_run(tmp_path, monkeypatch):
    """The 100M-edge command (50 chunks, 4 parts, as documented): the old fixed 1.5G budget
    is refused before any work; ``auto`` gives what the parts need, which a 24 GiB,
    2-core machine holds, and is refused naming the share on a smaller machine."""
    from dataclasses import replace

    import graphshard as gs
    from graphshard.io.chunked import load_chunked_meta
    from graphshard.pipeline import budget

    gs.io.write_chunked(gs.graph(([0, 1], [1, 0])), tmp_path / "g", 1)
    small = load_chunked_meta(tmp_path / "g")
    et = next(iter(small.num_edges))
    meta = replace(small, num_edges={et: 100_000_000}, edge_chunks={et: [2_000_000] * 50})
    with pytest.raises(gs.ValidationError, match="too small for parts of about 25,000,000"):
        budget.check_memory_budget(meta, 4, int(1.5 * 2**30))
    monkeypatch.setattr(budget, "machine_memory", lambda: 24 << 30)
    monkeypatch.setattr(budget.os, "cpu_count", lambda: 2)
    chosen = budget.auto_memory_budget(meta, 4)
    budget.check_memory_budget(meta, 4, chosen)  # passes
    assert 25_000_000 * budget.PART_TASK_BYTES < chosen <= 12 << 30
    monkeypatch.setattr(budget, "machine_memory", lambda: 8 << 30)
    with pytest.raises(gs.ValidationError, match=r"more than this machine's 4\.0 GiB per core"):
        budget.auto_memory_budget(meta, 4)
