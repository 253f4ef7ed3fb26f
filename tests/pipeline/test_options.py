"""The pipeline's options: one frozen, validated dataclass per step, made once at the front
door from a dict or given as is (issue 39)."""

from __future__ import annotations

import dataclasses

import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.pipeline import AssignOptions, DispatchOptions, run_pipeline


def test_a_dict_and_the_dataclass_give_the_same_options():
    given = {"seed": 5, "imbalance": 0.05, "balance_edges": False, "work_dir": "/tmp/w"}
    opts = AssignOptions.of(given)
    assert opts == AssignOptions(**given) and AssignOptions.of(opts) is opts
    assert opts.result_key() == {"balance_edges": False, "imbalance": 0.05, "seed": 5}
    assert AssignOptions.of({"seed": 0}).result_key() == AssignOptions.of(None).result_key()
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(("cls", "given", "message"), [
    (AssignOptions, {"sed": 1}, "assign_options: unknown option 'sed'; the options are "
                                "balance_edges, coarse_entries"),
    (AssignOptions, {"imbalance": 1.5}, "imbalance must be a number in"),
    (AssignOptions, {"num_workers": 0}, "num_workers must be an integer >= 1 or None"),
    (AssignOptions, {"seed": "1"}, "seed must be an integer"),
    (AssignOptions, {"balance_edges": "yes"}, "balance_edges must be True, False or None"),
    (DispatchOptions, {"num_hops": 0}, "num_hops must be an integer >= 1"),
    (DispatchOptions, {"memory_budget": -1}, "memory_budget must be an integer >= 1"),
    (DispatchOptions, {"halo": 2}, "dispatch_options: unknown option 'halo'"),
    (DispatchOptions, [("num_hops", 2)], "expected a dict or DispatchOptions"),
])
def test_bad_options_name_the_option(cls, given, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        cls.of(given)


def test_run_pipeline_refuses_a_bad_option_before_writing(tmp_path):
    """An unknown option was a raw TypeError from assign() once the run had claimed its
    output folder; now it is refused first, naming the option."""
    gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), tmp_path / "g", 2)
    with pytest.raises(ValidationError, match="unknown option 'max_entries'"):
        run_pipeline(tmp_path / "g", 2, tmp_path / "out", method="random",
                     assign_options={"max_entries": 10})
    assert not (tmp_path / "out").exists()


def test_run_pipeline_takes_the_dataclasses(tmp_path):
    gs.io.write_chunked(gs.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 0])), tmp_path / "g", 2)
    a = run_pipeline(tmp_path / "g", 2, tmp_path / "a", method="random",
                     assign_options=AssignOptions(seed=3),
                     dispatch_options=DispatchOptions(graph_name="ring", num_hops=2))
    b = run_pipeline(tmp_path / "g", 2, tmp_path / "b", method="random",
                     assign_options={"seed": 3},
                     dispatch_options={"graph_name": "ring", "num_hops": 2})
    assert a.assignment.part_sizes == b.assignment.part_sizes
    assert a.partitions.report.edge_cut == b.partitions.report.edge_cut
    assert gs.partition.read_config(a.partitions.config_path).halo_hops == 2
