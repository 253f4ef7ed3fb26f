"""The graphshard command through click's runner: every --help, examples, errors."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import graphshard as gs
from graphshard.cli import cli, main


@pytest.mark.parametrize("args", [[], ["partition"], ["inspect"], ["convert"], ["assign"],
                                  ["dispatch"], ["pipeline"], ["chunk"], ["serve"], ["train"]])
def test_every_help(args):
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output or not args


def test_assign_method_choices_are_the_registry():
    """The CLI's --method choices are the pipeline's registry (issue 39: not hard-coded)."""
    from graphshard.pipeline import ASSIGN_METHODS

    for command in ("assign", "pipeline"):
        option = next(p for p in cli.commands[command].params if p.name == "method")
        assert sorted(option.type.choices) == sorted(ASSIGN_METHODS), command


def test_partition_generate_and_inspect(tmp_path):
    runner = CliRunner()
    out = tmp_path / "parts"
    result = runner.invoke(cli, ["-q", "partition", "--generate",
                                 "sbm:nodes=2000,edges=16000,blocks=4", "--parts", "4",
                                 "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["num_parts"] == 4 and report["num_nodes"] == 2000
    # a 4-block SBM split into 4 parts cuts far less than random would (3/4 of edges)
    assert report["cut_ratio"] < 0.4
    png = tmp_path / "r.png"
    result = runner.invoke(cli, ["inspect", str(out / "sbm.json"), "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert "edge cut" in result.output and png.read_bytes()[:4] == b"\x89PNG"


def test_partition_metis_file_input(shared_file, tmp_path):
    path = shared_file("walshaw", "graphs", "add20.graph")
    result = CliRunner().invoke(cli, ["partition", str(path), "-k", "2", "--out",
                                      str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["num_nodes"] == 2395


def test_partition_time_budget_picks_auto_backend(shared_file, tmp_path):
    """add20 is skewed (degree CV 2.1): a budget below KaMinPar's estimate gives METIS
    k-way, one above recursive bisection's gives it (balancing nodes only: with the
    edges too, only METIS takes two constraints); 0 is refused before any file."""
    path = shared_file("walshaw", "graphs", "add20.graph")
    runner = CliRunner()
    for budget, method in (("0.3", "auto:metis:kway"), ("3.5", "auto:metis:recursive")):
        out = tmp_path / budget
        result = runner.invoke(cli, ["partition", str(path), "-k", "4", "--time-budget", budget,
                                     "--no-balance-edges", "--out", str(out), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["method"] == method
    result = runner.invoke(cli, ["partition", str(path), "-k", "4", "--time-budget", "0",
                                 "--out", str(tmp_path / "zero")])
    assert result.exit_code == 2 and "--time-budget" in result.output
    assert not (tmp_path / "zero").exists()


def test_partition_npy_edge_list(tmp_path):
    edges = np.array([[0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3]]).T
    np.save(tmp_path / "e.npy", edges)
    result = CliRunner().invoke(cli, ["partition", str(tmp_path / "e.npy"), "-k", "2",
                                      "--out", str(tmp_path / "o"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["edge_cut"] == 0


def test_errors_exit_codes(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("precious")
    code = main(["partition", "--generate", "rmat:nodes=100,edges=400", "-k", "2",
                 "--out", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err
    assert "is not empty and holds no graphshard partition config" in err
    assert (tmp_path / "keep.txt").read_text() == "precious"
    assert main(["partition", "-k", "2", "--out", str(tmp_path / "x")]) == 2
    assert main(["partition", "--generate", "rmat:nodes=100", "-k", "2", "--out",
                 str(tmp_path / "y")]) == 1
    assert "missing edges" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["inspect", str(bad)]) == 1
    assert "bad.json: not valid JSON" in capsys.readouterr().err


def test_methods_choice_lists_registry():
    result = CliRunner().invoke(cli, ["partition", "--help"])
    for name in gs.partition.METHODS:
        assert name in result.output


def test_pipeline_commands_local(tmp_path):
    g = gs.datasets.sbm(3000, 20000, num_blocks=4, num_features=2, seed=1)
    src, dst = g.edges()
    np.save(tmp_path / "edges.npy", np.stack([src, dst], axis=1))
    runner = CliRunner()
    result = runner.invoke(cli, ["chunk", str(tmp_path / "edges.npy"), "--chunks", "3",
                                 "--out", str(tmp_path / "chunked")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["assign", str(tmp_path / "chunked"), "-k", "4", "-m", "hash",
                                 "--out", str(tmp_path / "assign"), "--engine", "local"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "assign" / "_N.txt").read_text().split()[:5] == ["0", "1", "2", "3", "0"]
    result = runner.invoke(cli, ["dispatch", str(tmp_path / "chunked"), str(tmp_path / "assign"),
                                 "--out", str(tmp_path / "parts"), "--engine", "local",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    src, dst = g.edges()
    assert report["edge_cut"] == int(np.count_nonzero(src % 4 != dst % 4))
    result = runner.invoke(cli, ["pipeline", str(tmp_path / "chunked"), "-k", "4", "-m", "hash",
                                 "--out", str(tmp_path / "both"), "--engine", "local",
                                 "--json"])
    assert result.exit_code == 0, result.output
    both = json.loads(result.output)
    assert both["edge_cut"] == report["edge_cut"] and both["part_edges"] == report["part_edges"]
    assert set(both["seconds"]) == {"assign", *report["seconds"]}
    assert (tmp_path / "both" / "assignment" / "_N.txt").read_text() == \
        (tmp_path / "assign" / "_N.txt").read_text()
    parmetis = tmp_path / "parmetis.txt"
    parmetis.write_text("\n".join(str(i % 2) for i in range(3000)) + "\n")
    result = runner.invoke(cli, ["assign", str(tmp_path / "chunked"), "-k", "2", "--import",
                                 str(parmetis), "--out", str(tmp_path / "imported")])
    assert result.exit_code == 0, result.output
    assert main(["dispatch", str(tmp_path / "chunked"), str(tmp_path / "imported"), "--out",
                 str(tmp_path / "p2"), "--engine", "local", "--memory-budget", "1k"]) == 1


def test_serve_for_a_moment(tmp_path, ray_cluster):
    g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    gs.partition_graph(g, "ring", 2, tmp_path, part_method="hash")
    result = CliRunner().invoke(cli, ["serve", str(tmp_path / "ring.json"), "--for", "0"])
    assert result.exit_code == 0, result.output
    assert "serving" in result.output and "ring" in result.output
    assert main(["serve", str(tmp_path / "ring.json"), "--detach"]) == 2


# ----- failures: one line naming the path, exit 1, nothing that looks complete ----------
def _edges(tmp_path):
    np.save(tmp_path / "e.npy", np.array([[0, 1], [1, 2], [2, 0]]))
    return str(tmp_path / "e.npy")


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("graphshard: error: "), err
    return lines[0]


def test_disk_full_is_one_line_naming_the_file(tmp_path, capsys, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a write(2) reports it

    edges = _edges(tmp_path)
    monkeypatch.setattr(np, "save", full)
    assert main(["chunk", edges, "--chunks", "1", "--out", str(tmp_path / "c")]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert line.endswith("0-_N__E__N-0.npy: No space left on device"), line
    assert not list((tmp_path / "c").rglob("metadata.json"))


def test_a_read_only_folder_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    """As root chmod does not stop writes: the refusal is simulated where it would come."""
    real = Path.touch

    def refuse(self, *args, **kwargs):
        if self.parent.name == "ro":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(Path, "touch", refuse)
    assert main(["assign", _chunked(tmp_path), "-k", "2", "-m", "hash", "--engine", "local",
                 "--out", str(tmp_path / "ro")]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert line.endswith("ro/.graphshard-incomplete: Permission denied"), line


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into a read-only folder anyway")
def test_a_really_read_only_folder(tmp_path, capsys):
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o500)
    try:
        assert main(["chunk", _edges(tmp_path), "--out", str(tmp_path / "ro")]) == 1
    finally:
        (tmp_path / "ro").chmod(0o700)
    assert "Permission denied" in _one_error_line(capsys.readouterr().err)


def _chunked(tmp_path):
    gs.io.write_chunked(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), tmp_path / "g", 2)
    return str(tmp_path / "g")


@pytest.mark.parametrize("case", ["chunk-out-file", "import-missing", "metis-dir",
                                  "chunk-foreign", "euler-out-json"])
def test_bad_paths_are_one_line(tmp_path, capsys, case):
    edges = _edges(tmp_path)
    args, expect = {
        "chunk-out-file": (["chunk", edges, "--out", edges],
                           "e.npy exists and is not a directory"),
        "import-missing": (["assign", _chunked(tmp_path), "-k", "2", "--import",
                            str(tmp_path / "missing"), "--out", str(tmp_path / "a")],
                           "missing: the assignment to import does not exist"),
        "metis-dir": (["partition", _chunked(tmp_path), "--format", "metis", "-k", "2",
                       "--out", str(tmp_path / "p")], "g: is a directory"),
        "chunk-foreign": (["chunk", edges, "--out", str(tmp_path)],
                          "is not empty and holds no chunked graph written by graphshard"),
        "euler-out-json": (["convert", "--from", "edgelist", edges, "--to", "euler",
                            "--out", str(tmp_path / "x.json")],
                           "x.json: the output is a folder, but this name looks like a file"),
    }[case]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main(args) == 1
    assert expect in _one_error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written


def test_verbose_or_debug_adds_the_traceback(tmp_path, capsys, monkeypatch):
    edges = _edges(tmp_path)
    assert main(["-v", "chunk", edges, "--out", edges]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.rstrip().endswith("exists and is not a directory")
    assert main(["chunk", edges, "--out", edges]) == 1  # -v does not stick
    assert "Traceback" not in capsys.readouterr().err
    monkeypatch.setenv("GRAPHSHARD_DEBUG", "1")
    assert main(["chunk", edges, "--out", edges]) == 1
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("budget", ["-5G", "0", "nan", "inf", "lots", "0.1"])
@pytest.mark.parametrize("command", ["dispatch", "pipeline"])
def test_a_bad_memory_budget_is_refused_before_any_file(tmp_path, capsys, budget, command):
    chunked = _chunked(tmp_path)
    if command == "dispatch":
        from graphshard.pipeline import assign as run_assign

        run_assign(chunked, 2, tmp_path / "a", method="hash")
        args = ["dispatch", chunked, str(tmp_path / "a")]
    else:
        args = ["pipeline", chunked, "-k", "2", "-m", "hash"]
    assert main([*args, "--out", str(tmp_path / "p"), "--engine", "local",
                 "--memory-budget", budget]) == 2
    assert "is not a size like 1.5G or 800M (more than 0 bytes)" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_a_budget_too_small_for_the_graph_is_refused_before_any_file(tmp_path, capsys):
    assert main(["pipeline", _chunked(tmp_path), "-k", "2", "-m", "hash", "--engine",
                 "local", "--out", str(tmp_path / "p"), "--memory-budget", "1"]) == 1
    assert "--memory-budget 0 MiB is too small" in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "p").exists()


def test_partition_reader_options(tmp_path, capsys):
    edges = tmp_path / "sparse.csv"
    edges.write_text("src,dst\n0,999999999999\n999999999999,5\n")
    out = tmp_path / "parts"
    assert main(["partition", str(edges), "-k", "2", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "sparse.csv" in err and "relabel=True" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())
    assert main(["partition", str(edges), "-k", "2", "-O", "relabel=true", "--out", str(out),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["num_nodes"] == 3 and report["num_edges"] == 2
    assert main(["partition", str(edges), "-k", "2", "-O", "nope=1", "--out", str(out)]) == 1
    assert "reader 'edgelist' takes" in capsys.readouterr().err


def test_chunk_reader_options(tmp_path, capsys):
    edges = tmp_path / "sparse.csv"
    edges.write_text("src,dst\n0,999999999999\n999999999999,5\n")
    assert main(["chunk", str(edges), "--out", str(tmp_path / "c")]) == 1
    assert "relabel=True" in capsys.readouterr().err
    assert main(["chunk", str(edges), "-O", "relabel=true", "--chunks", "1",
                 "--out", str(tmp_path / "c")]) == 0
    assert gs.io.read_chunked(tmp_path / "c").num_nodes() == 3


@pytest.mark.parametrize("change", [{"edge_cut": "2"}, {"part_nodes": 5}, {"method": None},
                                    {"part_nodes_per_type": {"_N": ["a"]}}, "drop:num_edges"])
def test_inspect_a_damaged_report(tmp_path, capsys, change):
    g = gs.graph((np.arange(8), (np.arange(8) + 1) % 8))
    config = gs.partition.build_partitions(g, "ring", 2, tmp_path / "p").config_path
    cfg = json.loads(config.read_text())
    if change == "drop:num_edges":
        del cfg["graphshard"]["report"]["num_edges"]
    else:
        cfg["graphshard"]["report"].update(change)
    config.write_text(json.dumps(cfg))
    assert main(["inspect", str(config)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ring.json: graphshard.report: report field" in err


@pytest.mark.parametrize(("name", "text", "args"), [
    ("csv", "src,dst\n0,1\n1,2\n2,0\n", []),
    ("tsv", "0\t1\n1\t2\n2\t0\n", ["-O", "header=false", "-O", "src=0", "-O", "dst=1"]),
])
def test_format_aliases_read_an_edge_list_whatever_its_suffix(tmp_path, capsys, name, text,
                                                               args):
    path = tmp_path / "edges.dat"  # a suffix that names no format
    path.write_text(text)
    assert main(["partition", str(path), "--format", name, "-k", "2", "--out",
                 str(tmp_path / "p"), "--json", *args]) == 0
    assert json.loads(capsys.readouterr().out)["num_nodes"] == 3
    assert main(["chunk", str(path), "--format", name, "--out", str(tmp_path / "c"),
                 *args]) == 0
    assert gs.io.read_chunked(tmp_path / "c").num_edges() == 3
    assert main(["convert", "--from", name, str(path), "--to", "euler", "--out",
                 str(tmp_path / "e"), *args]) == 0
    assert gs.io.read_euler(tmp_path / "e").num_edges() == 3


def test_format_choices_and_help_come_from_the_io_registry():
    from graphshard.io.convert import READERS, WRITERS, format_names

    params = {c: {p.name: p for p in cli.commands[c].params} for c in ("partition", "chunk",
                                                                       "convert")}
    assert list(params["partition"]["fmt"].type.choices) == format_names(READERS)
    assert list(params["chunk"]["fmt_in"].type.choices) == format_names(READERS)
    assert list(params["convert"]["src_format"].type.choices) == format_names(READERS)
    assert list(params["convert"]["dst_format"].type.choices) == [*sorted(WRITERS), "graphshard"]
    result = CliRunner().invoke(cli, ["convert", "--help"])
    assert "csv, npy, npz, parquet, tsv (edgelist with that fmt)" in " ".join(
        result.output.split())
    assert main(["partition", "x.dat", "--format", "dgl", "-k", "2", "--out", "p"]) == 2


# ----- issue 28: real data in from the shell -------------------------------------------------
def _report(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_snap_edgelist_in_one_command(shared_file, tmp_path, capsys):
    """The .edgelist suffix names an edge list; no header is read from the first line."""
    path = shared_file("snap-small", "MIT8.edgelist")
    assert main(["partition", str(path), "-k", "2", "--out", str(tmp_path / "p"),
                 "--json"]) == 0
    report = _report(capsys)
    assert (report["num_nodes"], report["num_edges"]) == (6440, 251252)


def test_snap_sparse_ids_warn_and_relabel(shared_file, tmp_path, capsys, caplog):
    path = shared_file("snap-small", "wiki-Vote.txt")
    with caplog.at_level("WARNING"):
        assert main(["-q", "partition", str(path), "-k", "2", "--out", str(tmp_path / "a"),
                     "--json"]) == 0
    assert _report(capsys)["num_nodes"] == 8298
    assert "1183 of the 8298 nodes (14%) appear in no edge" in caplog.text
    assert "(CLI: --relabel)" in caplog.text
    assert main(["partition", str(path), "--relabel", "-k", "2", "--out", str(tmp_path / "b"),
                 "--json"]) == 0
    assert _report(capsys)["num_nodes"] == 7115


def test_edge_list_layout_options(tmp_path, capsys):
    path = tmp_path / "e.dat"
    path.write_text("% w;b;a\n5;1;9\n3;9;1\n")  # weight first, then dst, then src
    args = ["--format", "csv", "--no-header", "--src", "2", "--dst", "1", "--delimiter",
            "semicolon", "--relabel", "-k", "1"]
    assert main(["partition", str(path), *args, "-O", "comment=%", "--out", str(tmp_path / "p"),
                 "--json"]) == 0
    assert _report(capsys)["num_edges"] == 2
    g = gs.load_partition(tmp_path / "p" / "e.json", 0)[0]
    assert sorted(g.ndata["orig_id"].tolist()) == [0, 1]
    assert main(["chunk", str(path), *args[:-2], "-O", "comment=%", "--out",
                 str(tmp_path / "c")]) == 0
    assert gs.io.read_chunked(tmp_path / "c").ndata["node_id"].tolist() == [1, 9]


def test_header_flags_override_the_sniffing(tmp_path, capsys):
    path = tmp_path / "e.txt"
    path.write_text("alice bob\nbob carol\n")  # words: a header, unless --no-header
    out = str(tmp_path / "p")
    assert main(["partition", str(path), "-k", "1", "--out", out, "--json"]) == 0
    assert _report(capsys)["num_edges"] == 1
    assert main(["partition", str(path), "--no-header", "-k", "1", "--out", out, "--json"]) == 0
    assert _report(capsys)["num_edges"] == 2
    path.write_text("1 2\n2 3\n3 1\n")  # numbers: data, unless --header
    assert main(["partition", str(path), "--header", "--src", "0", "--dst", "1", "-k", "1",
                 "--out", out, "--json"]) == 0
    assert _report(capsys)["num_edges"] == 2


def test_musae_one_direction_list_add_reverse(shared_file, tmp_path, capsys, caplog):
    path = shared_file("musae-karateclub", "facebook", "edges.csv")  # header id_1,id_2
    with caplog.at_level("WARNING"):
        assert main(["partition", str(path), "--add-reverse", "-k", "2", "--out",
                     str(tmp_path / "a"), "--json"]) == 0
    assert _report(capsys)["num_edges"] == 2 * 171002 - 179
    assert "kept 179 self loop(s)" in caplog.text and "--self-loops drop" in caplog.text
    assert main(["partition", str(path), "--add-reverse", "--self-loops", "drop",
                 "--duplicates", "drop", "-k", "2", "--out", str(tmp_path / "b"),
                 "--json"]) == 0
    assert _report(capsys)["num_edges"] == 2 * 170823  # the README's undirected edges


def test_edge_list_options_are_refused_for_other_readers(shared_file, tmp_path, capsys):
    path = shared_file("dimacs10-small", "karate.graph")
    assert main(["partition", str(path), "--src", "1", "--header", "-k", "2", "--out",
                 str(tmp_path / "p")]) == 2
    assert "--header, --src: for edge lists only; the input is read as metis" in \
        capsys.readouterr().err
    assert main(["partition", str(path), "--add-reverse", "--duplicates", "drop", "-k", "2",
                 "--out", str(tmp_path / "p"), "--json"]) == 0  # the policy: any reader
    assert _report(capsys)["num_edges"] == 156


def test_unknown_suffix_lists_the_formats(tmp_path, capsys):
    path = tmp_path / "g.xyz"
    path.write_text("0 1\n")
    assert main(["partition", str(path), "-k", "1", "--out", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "cannot tell the format from the suffix '.xyz'; pass --format (one of chunked, " \
        "edgelist" in err and "src_format" not in err


def test_graph_files_where_a_folder_or_config_belongs(shared_file, tmp_path, capsys):
    path = shared_file("dimacs10-small", "karate.graph")
    for command in (["pipeline", str(path), "-k", "2", "--out", str(tmp_path / "p")],
                    ["assign", str(path), "-k", "2", "--out", str(tmp_path / "a")]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert f"graphshard {command[0]} reads a chunked graph folder" in err
        assert f"this is a metis graph: run graphshard chunk {path} --out chunked/" in err
        assert "JSON" not in err and not (tmp_path / "p").exists()
    assert main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    assert "a metis graph; inspect reads the partition config JSON that graphshard " \
        "partition writes" in err and "not valid JSON" not in err
    assert main(["partition", str(path), "-k", "2", "--out", str(tmp_path / "parts")]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "parts")]) == 1
    assert f"name one: {tmp_path / 'parts' / 'karate.json'}" in capsys.readouterr().err
    assert main(["chunk", str(path), "--out", str(tmp_path / "c")]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "c" / "metadata.json")]) == 1
    assert f"a chunked graph's metadata: graphshard pipeline {tmp_path / 'c'} --parts N" in \
        capsys.readouterr().err


def test_save_orig_ids_spellings(tmp_path, capsys):
    for flag in ("--save-orig-ids", "--save-orig-nids", "--save-orig-eids"):
        out = tmp_path / flag
        assert main(["partition", "--generate", "sbm:nodes=200,edges=800", "-k", "2",
                     flag, "--out", str(out)]) == 0
        assert "orig_ids.safetensors" in {p.name for p in (out / "part0").iterdir()}
    for command in ("pipeline", "dispatch"):
        option = next(p for p in cli.commands[command].params if p.name == "save_orig_ids")
        assert set(option.opts) == {"--save-orig-ids", "--save-orig-nids", "--save-orig-eids"}


def test_quiet_starts_ray_logging_errors_only():
    """-q reaches ray.init (its token-authentication warning is a WARNING of the 'ray'
    logger, which ray.init's logging_level sets), for that invocation only."""
    import click

    from graphshard.runtime.ray import init_ray

    class FakeRay:
        def init(self, **kwargs):
            self.kwargs = kwargs

    @cli.command("probe-ray")
    def probe() -> None:  # a command that starts Ray, as serve/pipeline/train do
        ray = FakeRay()
        init_ray(ray, "ray://head:10001")
        click.echo(f"logging_level={ray.kwargs.get('logging_level')}")

    try:
        assert "logging_level=40" in CliRunner().invoke(cli, ["-q", "probe-ray"]).output
        assert "logging_level=None" in CliRunner().invoke(cli, ["probe-ray"]).output
        ray = FakeRay()  # nothing left behind by the -q invocation
        init_ray(ray, "ray://head:10001")
        assert "logging_level" not in ray.kwargs
    finally:
        cli.commands.pop("probe-ray")


def test_outputs_follow_the_umask(tmp_path):
    pytest.importorskip("matplotlib")
    old = os.umask(0o027)
    try:
        assert main(["partition", "--generate", "sbm:nodes=200,edges=800", "-k", "2",
                     "--out", str(tmp_path / "p")]) == 0
        assert main(["inspect", str(tmp_path / "p" / "sbm.json"), "--plot",
                     str(tmp_path / "r.png")]) == 0
    finally:
        os.umask(old)
    for path in (tmp_path / "p" / "sbm.json", tmp_path / "r.png",
                 tmp_path / "p" / "part0" / "graph.safetensors"):
        assert oct(path.stat().st_mode & 0o777) == "0o640", path


def test_replacing_another_graph_says_so(tmp_path, caplog):
    out = tmp_path / "p"
    assert main(["partition", "--generate", "rmat:nodes=300,edges=1200", "-k", "2",
                 "--out", str(out)]) == 0
    with caplog.at_level("INFO", logger="graphshard.partition.build"):
        assert main(["partition", "--generate", "rmat:nodes=300,edges=1200", "-k", "2",
                     "--out", str(out)]) == 0
    assert [r.levelname for r in caplog.records if "the earlier output" in r.message] == ["INFO"], \
        [r.getMessage() for r in caplog.records]
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert main(["partition", "--generate", "sbm:nodes=300,edges=1200", "-k", "3",
                     "--out", str(out)]) == 0
    assert f"{out}: replacing the earlier output rmat.json (graph 'rmat', 2 parts) with " \
        "graph 'sbm'" in caplog.text
    assert sorted(p.name for p in out.glob("*.json")) == ["sbm.json"]


def test_shchur_npz_sparse_features_in_one_command(shared_file, tmp_path, capsys):
    path = shared_file("gnn-benchmark-shchur", "amazon-photo.zip")
    assert main(["partition", str(path), "--add-reverse", "--self-loops", "drop",
                 "--duplicates", "drop", "-k", "2", "--out", str(tmp_path / "p"),
                 "--json"]) == 0
    report = _report(capsys)
    assert (report["num_nodes"], report["num_edges"]) == (7650, 238162)  # PyG's count
    _, nfeat, *_ = gs.load_partition(tmp_path / "p" / "amazon-photo.json", 0)
    assert isinstance(nfeat["_N/feat"], gs.SparseRows) and nfeat["_N/feat"].num_cols == 745


def test_hgb_folder_in_one_command(shared_file, tmp_path, capsys):
    import zipfile

    with zipfile.ZipFile(shared_file("hgb", "ACM.zip")) as zf:
        zf.extractall(tmp_path)
    assert main(["partition", str(tmp_path / "ACM"), "-k", "2", "--out", str(tmp_path / "p"),
                 "--json"]) == 0
    report = _report(capsys)
    assert (report["num_nodes"], report["num_edges"]) == (10942, 547872)
    assert report["part_nodes_per_type"]["paper"] and len(report["part_nodes_per_type"]) == 4
    _, nfeat, *_ = gs.load_partition(tmp_path / "p" / "ACM.json", 0)
    assert {"paper/feat", "paper/label", "paper/train_mask", "paper/test_mask"} <= set(nfeat)


def test_convert_from_each_dataset_kind(shared_file, tmp_path, capsys):
    cases = [("planetoid", shared_file("planetoid", "ind.cora.graph"), 2708),
             ("shchur", shared_file("gnn-benchmark-shchur", "coauthor-cs.zip"), 18333),
             ("hgb", shared_file("hgb", "ACM.zip"), 10942)]
    for kind, path, nodes in cases:
        out = tmp_path / kind
        dense = ["-O", "sparse_features=false"] if kind != "hgb" else []  # chunked: dense
        assert main(["convert", "--from", kind, str(path), "--to", "chunked", "--out",
                     str(out), *dense]) == 0, capsys.readouterr().err
        assert gs.io.read_chunked(out).num_nodes() == nodes
    assert main(["convert", "--from", "planetoid", str(cases[0][1]), "--to", "graphshard",
                 "--self-loops", "drop", "--duplicates", "drop", "--out",
                 str(tmp_path / "g")]) == 0
    assert "10,556" in capsys.readouterr().out  # PyG's Cora edge count


def test_readme_own_data_commands_run_as_written(shared_file, tmp_path, capsys, monkeypatch):
    """The README's "Your own data" commands, on the files as distributed, give the node and
    edge counts its output block shows."""
    import re
    import shlex
    import zipfile

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("## Your own data", 1)[1].split("\n## ", 1)[0]
    commands = re.search(r"```bash\n(.*?)```", section, re.S).group(1).strip().splitlines()
    shown = dict(re.findall(r"^(parts/\S+)\s+nodes / edges ([\d,]+ / [\d,]+)", section, re.M))
    assert len(commands) == 4 and len(shown) == 4
    (tmp_path / "lastfm").mkdir()
    for link, target in (("wiki-Vote.txt", ("snap-small", "wiki-Vote.txt")),
                         ("lastfm/edges.csv", ("musae-karateclub", "lastfm", "edges.csv")),
                         ("amazon-photo.zip", ("gnn-benchmark-shchur", "amazon-photo.zip"))):
        (tmp_path / link).symlink_to(shared_file(*target))
    with zipfile.ZipFile(shared_file("hgb", "ACM.zip")) as zf:
        zf.extractall(tmp_path)
    monkeypatch.chdir(tmp_path)
    for command in commands:
        args = shlex.split(command)
        assert args[0] == "graphshard"
        assert main([*args[1:], "--json"]) == 0, command
        report = _report(capsys)
        counts = f"{report['num_nodes']:,} / {report['num_edges']:,}"
        assert shown[report["config"]] == counts, command


@pytest.mark.parametrize("command", ["export", "import"])
def test_dgl_commands_help_and_missing_dgl(tmp_path, command):
    """`graphshard export` / `import` exist, show an example, and without dgl fail with one
    line naming the package (exit 1), writing nothing."""
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and "Example" in result.output
    from graphshard._util.optional import is_installed

    if is_installed("dgl"):
        pytest.skip("dgl is installed here: tests/partition/test_dgl_interop.py runs it")
    gs.partition_graph(gs.graph(([0, 1], [1, 0])), "g", 1, tmp_path / "p")
    assert main([command, str(tmp_path / "p" / "g.json"), "--out", str(tmp_path / "o")]) == 1
    assert not (tmp_path / "o").exists()


def test_pipeline_and_dispatch_trainers(tmp_path):
    """`--trainers` reaches the out-of-core path: the same files as `partition --trainers`."""
    g = gs.graph(([0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 0]))
    gs.io.write_chunked(g, tmp_path / "g", 2)
    assert main(["partition", str(tmp_path / "g"), "-k", "2", "-m", "hash", "--trainers", "2",
                 "--name", "g", "--out", str(tmp_path / "ref")]) == 0
    assert main(["pipeline", str(tmp_path / "g"), "-k", "2", "-m", "hash", "--trainers", "2",
                 "--engine", "local", "--name", "g", "--out", str(tmp_path / "one")]) == 0
    assert main(["dispatch", str(tmp_path / "g"), str(tmp_path / "one" / "assignment"),
                 "--trainers", "2", "--engine", "local", "--name", "g", "--out",
                 str(tmp_path / "two")]) == 0
    want = gs.load_partition(tmp_path / "ref" / "g.json", 1)[1]["_N/trainer_id"].tolist()
    assert want == [2, 3, 2, 3]  # hash over 4 trainer parts: nodes 2, 3, 6, 7 on machine 1
    for out in ("one", "two"):
        cfg = json.loads((tmp_path / out / "g.json").read_text())
        assert cfg["num_trainers_per_machine"] == 2 and cfg["num_parts"] == 2
        assert gs.load_partition(tmp_path / out / "g.json", 1)[1]["_N/trainer_id"].tolist() \
            == want


@pytest.mark.parametrize(("args", "message"), [
    (["serve", "parts/g.json", "--for", "-5"], "Invalid value for '--for'"),
    (["partition", "edges.csv", "-k", "2", "--delimiter", "", "--out", "o"],
     "--delimiter: empty"),
    (["pipeline", "chunked", "-k", "2", "--engine", "local", "--address", "auto", "--out", "o"],
     "--engine local runs in this process and --address joins a Ray cluster"),
])
def test_conflicting_or_empty_options_are_refused(tmp_path, monkeypatch, args, message):
    """Issue 41 item 10: each was ignored, or failed late (serve --for -5 started Ray first)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "edges.csv").write_text("0,1\n1,2\n")
    (tmp_path / "chunked").mkdir()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert message in result.output.replace("\n", " ").replace("  ", " ")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("method", "accepted"), [
    ("random", False), ("hash", False), ("kaminpar", False), ("lp", False), ("metis", True),
    ("auto", True)])
def test_an_objective_a_method_does_not_minimise_is_refused(tmp_path, method, accepted):
    """Issue 41 item 10: --objtype vol was silently ignored by methods without it."""
    if method == "kaminpar":
        pytest.importorskip("kaminpar")
    result = CliRunner().invoke(cli, ["-q", "partition", "--generate",
                                      "sbm:nodes=300,edges=2400,blocks=2", "-k", "2",
                                      "-m", method, "--objtype", "vol", "--json",
                                      "--out", str(tmp_path / "o")])
    if accepted:
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["comm_volume"] > 0
    else:
        assert result.exit_code == 1, result.output
        assert f"partition method {method!r} does not minimise it" in str(result.exception)
        assert not (tmp_path / "o" / "sbm.json").exists()


def test_serve_stop_with_nothing_running_starts_no_ray(tmp_path):
    """Issue 41 item 10: `serve --stop` with nothing running started a fresh Ray (44 s) to
    find no servers; now it says so at once, without importing a Ray of its own."""
    import subprocess
    import sys

    gs.partition_graph(gs.graph(([0, 1, 2, 3], [1, 2, 3, 0])), "ring", 2, tmp_path,
                       part_method="hash")
    (tmp_path / "raytmp").mkdir()  # no cluster recorded there
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(tmp_path / "raytmp")
    code = ("import sys; from graphshard.cli import main; "
            f"rc = main(['serve', {str(tmp_path / 'ring.json')!r}, '--stop']); "
            "ray = sys.modules.get('ray'); "
            "print('rc', rc, 'ray started', bool(ray and ray.is_initialized()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    assert "rc 0 ray started False" in out.stdout, out.stdout + out.stderr
    said = " ".join(out.stdout.split())  # the console wraps long paths at any width
    assert "no graph servers of" in said and "ring.json are running" in said


def test_partition_balances_edges_by_default_and_flags_an_imbalance(tmp_path):
    """Issue 43: the CLI balances each part's in-edges (a trainer's work) unless told not
    to, and says so when a partition leaves them far apart."""
    spec = "rmat:nodes=3000,edges=30000,seed=2"
    runner = CliRunner()
    balanced = runner.invoke(cli, ["partition", "--generate", spec, "-k", "4", "--json",
                                   "--out", str(tmp_path / "a")])
    assert balanced.exit_code == 0, balanced.output
    report = json.loads(balanced.stdout)
    assert report["edge_balance"] <= 1.031 and "warning" not in balanced.stderr
    nodes_only = runner.invoke(cli, ["partition", "--generate", spec, "-k", "4",
                                     "--no-balance-edges", "--out", str(tmp_path / "b")])
    assert nodes_only.exit_code == 0, nodes_only.output
    cfg = gs.partition.read_config(tmp_path / "b" / "rmat.json")
    edges = cfg.read_report().part_edges
    assert cfg.read_report().edge_balance > 1.2  # R-MAT's hubs: far apart without
    assert (f"graphshard: warning: edge balance {cfg.read_report().edge_balance:.2f}: part "
            f"{int(np.argmax(edges))} holds {max(edges):,} edges") in nodes_only.stderr
    shown = runner.invoke(cli, ["inspect", str(tmp_path / "b" / "rmat.json")])
    assert "graphshard: warning: edge balance" in shown.stderr


def test_engine_auto_runs_small_inputs_in_process(tmp_path, monkeypatch):
    """Issue 43: Ray's start and stop cost more than they save on a small graph; --engine
    auto (the default) runs it here, and Ray above AUTO_LOCAL_EDGES or with --address."""
    import importlib

    cli_pipeline = importlib.import_module("graphshard.cli.pipeline")  # not the command
    chunked = _chunked(tmp_path)
    assert cli_pipeline._use_ray("auto", None, chunked) is False
    assert cli_pipeline._use_ray("auto", "auto", chunked) is True
    assert cli_pipeline._use_ray("ray", None, chunked) is True
    assert cli_pipeline._use_ray("local", None, chunked) is False
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")  # a cluster named to join: Ray
    assert cli_pipeline._use_ray("auto", None, chunked) is True
    monkeypatch.delenv("RAY_ADDRESS")
    monkeypatch.setattr(cli_pipeline, "AUTO_LOCAL_EDGES", 0)
    assert cli_pipeline._use_ray("auto", None, chunked) is True
    monkeypatch.setattr(cli_pipeline, "AUTO_LOCAL_EDGES", 10**9)
    ray = pytest.importorskip("ray")

    def no_ray(*args, **kwargs):
        raise AssertionError("--engine auto started Ray for a 4-edge graph")

    monkeypatch.setattr(ray, "init", no_ray)
    assert main(["pipeline", chunked, "-k", "2", "-m", "hash", "--out",
                 str(tmp_path / "parts")]) == 0
    assert (tmp_path / "parts" / "graph.json").exists()


@pytest.mark.parametrize("flags", [[], ["--no-balance-edges"]])
def test_partition_imbalance_reaches_metis_at_k2(shared_file, tmp_path, flags):
    """Issue 43: --imbalance had no effect on the default run at k=2 (Walshaw: the same cut
    at 0.03, 0.05 and 0.10) with one balance column: METIS's recursive bisection split
    near-exactly. Each run stays within its limit, and the looser one cuts no more."""
    path = shared_file("walshaw", "graphs", "data.graph")
    runner, reports = CliRunner(), {}
    for eps in (0.03, 0.10):
        result = runner.invoke(cli, ["partition", str(path), "-k", "2", "--imbalance",
                                     str(eps), *flags, "--json", "--out",
                                     str(tmp_path / f"p{eps}")])
        assert result.exit_code == 0, result.output
        reports[eps] = report = json.loads(result.stdout)
        assert report["method"] == "auto:metis:recursive"
        assert report["node_balance"] <= 1 + eps
    assert reports[0.10]["node_balance"] > 1.03, reports  # the allowance is used
    assert reports[0.10]["edge_cut"] <= reports[0.03]["edge_cut"]


def test_partition_refuses_ids_mostly_in_no_edge_unless_told(tmp_path, capsys):
    """Issue 43: a SNAP file whose IDs are mostly unused (79% on CA-CondMat), partitioned
    without --relabel, exited 0 reporting "edge cut 0 (0.00 %)": the isolated IDs filled
    the parts. Now refused with the reason; --relabel or --no-relabel decides."""
    path = tmp_path / "sparse.txt"
    path.write_text("# SNAP\n" + "".join(f"{5 * i}\t{5 * ((i + 1) % 300)}\n"
                                         for i in range(300)))  # 300 of 1496 IDs used
    args = ["partition", str(path), "-k", "2", "--no-balance-edges", "--json"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "1196 of the 1496 nodes (80%) appear in no edge" in line
    assert "(CLI: --relabel)" in line and "(CLI: --no-relabel)" in line
    assert not (tmp_path / "a").exists() or not any((tmp_path / "a").iterdir())
    assert main([*args, "--relabel", "--out", str(tmp_path / "b")]) == 0
    relabelled = _report(capsys)
    assert relabelled["num_nodes"] == 300 and relabelled["edge_cut"] > 0
    assert main([*args, "--no-relabel", "--out", str(tmp_path / "c")]) == 0
    assert _report(capsys)["num_nodes"] == 1496  # kept as given, as asked
    assert main(["chunk", str(path), "--out", str(tmp_path / "d")]) == 0  # other commands warn
