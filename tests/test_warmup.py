"""``graphshard warmup`` compiles kernels into numba's cache (issue 46 item 8)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from graphshard import warmup as warmup_module
from graphshard.cli import cli
from graphshard.errors import ValidationError
from graphshard.warmup import warm_kernels


def test_a_step_runs_and_reports_its_time():
    report = warm_kernels(["sampling"])
    assert [name for name, _ in report.steps] == ["sampling"]
    assert report.steps[0][1] > 0 and report.seconds == report.steps[0][1]
    assert report.skipped == {}


def test_a_step_without_its_dependency_is_skipped(monkeypatch):
    ran = []
    monkeypatch.setitem(warmup_module.STEPS, "sampling",
                        (lambda work: ran.append(work), "no_such_module_here"))
    report = warm_kernels(["sampling"])
    assert report.steps == [] and ran == []
    assert report.skipped == {"sampling": "needs no_such_module_here"}


def test_unknown_steps_are_refused():
    with pytest.raises(ValidationError, match=r"unknown warm-up step 'sampler'; the steps "
                       r"are \['partition', 'pipeline', 'sampling', 'training'\]"):
        warm_kernels(["sampler"])
    result = CliRunner().invoke(cli, ["warmup", "--step", "sampler"])
    assert result.exit_code == 2 and "'sampler' is not one of" in result.output


def test_cli_prints_each_step():
    result = CliRunner().invoke(cli, ["warmup", "--step", "sampling"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("sampling") and lines[-1].startswith("total")
