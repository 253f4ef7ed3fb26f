"""Routine training (Graph4Rec's ``train_mode: online_train``, issue 44 item 2): one run per
dated folder ``YYYYMMDD/HH``, each starting from the previous period's dump by node ID,
dumped to ``<output_path>/YYYYMMDD/HH``; a rerun continues after the last complete period."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("yaml", reason="needs pyyaml")

from graphshard.errors import ConfigError
from graphshard.train import train_from_config, validate_config
from graphshard.train import walk_embed as we
from graphshard.train.routine import MARKER, match_ids

PERIODS = ("20230219/02", "20230219/05", "20230219/08")  # PGLBox's example, time_delta 3
#: Users and items per period: user 1 leaves after the first, 7 and 107 arrive in the second.
USERS = ([1, 2, 3, 4, 5, 6], [2, 3, 4, 5, 6, 7], [2, 3, 4, 5, 6, 7])
ITEMS = ([101, 102, 103, 104], [101, 102, 103, 104, 107], [101, 102, 103, 104, 107])

CONFIG = """\
train_mode: online_train
start_time: 20230219/02
time_delta: 3
etype2files: "u2click2i:u2click2i.txt"
ntype2files: "u:node_types.txt,i:node_types.txt"
graph_data_local_path: data
symmetry: True
meta_path: "u2click2i-i2click2u"
walk_len: 4
walk_times: 2
win_size: 2
neg_num: 2
emb_size: 8
epochs: 1
batch_size: 64
sample: 0
sparse_type: adagrad
output_path: out
"""


def _write_period(root: Path, label: str, users: list[int], items: list[int]) -> None:
    d = root / label
    d.mkdir(parents=True)
    (d / "node_types.txt").write_text("".join(f"u\t{u}\n" for u in users)
                                      + "".join(f"i\t{i}\n" for i in items))
    edges = [(u, items[(k + j) % len(items)]) for k, u in enumerate(users) for j in range(2)]
    (d / "u2click2i.txt").write_text("".join(f"{u}\t{i}\n" for u, i in edges))


def _setup(tmp_path: Path, text: str = CONFIG, periods: tuple[str, ...] = PERIODS) -> Path:
    for k, label in enumerate(periods):
        _write_period(tmp_path / "data", label, USERS[k], ITEMS[k])
    cfg = tmp_path / "g4r.yaml"
    cfg.write_text(text)
    return cfg


def _dump(out: Path, ntype: str) -> dict[int, np.ndarray]:
    """``{file node ID: dumped row}`` of a period's dump (the .txt IDs, the .npy rows)."""
    ids = [int(line.split("\t")[0]) for line in (out / f"{ntype}.txt").read_text().splitlines()]
    return dict(zip(ids, np.load(out / f"{ntype}.npy"), strict=True))


@pytest.fixture
def initial_tables(monkeypatch):
    """The id tables each run starts from (``init_tables``' node block, a copy) and the
    random ones a cold start would draw, one entry per period trained."""
    seen: list[tuple[np.ndarray, np.ndarray, list[str], list[int]]] = []
    real = we.init_tables

    def spy(torch, store, emb_size, optimizer, lr, seed, init, context, init_range=None):
        tables, blocks = real(torch, store, emb_size, optimizer, lr, seed, init, context,
                              init_range)
        _, cold = real(torch, store, emb_size, optimizer, lr, seed, None, context, init_range)
        seen.append((blocks[0].copy(), cold[0].copy(), list(store.ntypes),
                     [store.num_nodes(t) for t in store.ntypes]))
        return tables, blocks

    monkeypatch.setattr(we, "init_tables", spy)
    return seen


def _row(entry, res, ntype: str, node_id: int, which: int = 0) -> np.ndarray:
    """The initial (``which`` 0) or cold (1) row of ``node_id`` in a run's tables."""
    block, ntypes, counts = entry[which], entry[2], entry[3]
    offset = sum(counts[:ntypes.index(ntype)])
    return block[offset + res.node_ids[ntype].tolist().index(node_id)]


def test_periods_continue_by_node_id_and_new_nodes_start_at_random(tmp_path, initial_tables):
    cfg = _setup(tmp_path)
    res = train_from_config(cfg)
    assert res.periods == list(PERIODS) and res.skipped == []
    out = tmp_path / "out"
    dumps = [_dump(out / p, "u") for p in PERIODS]
    assert [sorted(d) for d in dumps] == list(USERS)
    for p in PERIODS:
        assert (out / p / MARKER).is_file()
    first, second = initial_tables[0], initial_tables[1]
    # period 1 starts cold; period 2's initial row of user 2 is period 1's dumped row
    np.testing.assert_array_equal(_row(first, res.results[0], "u", 2),
                                  _row(first, res.results[0], "u", 2, which=1))
    for uid in (2, 6):
        np.testing.assert_array_equal(_row(second, res.results[1], "u", uid), dumps[0][uid])
        assert not np.allclose(dumps[1][uid], dumps[0][uid])  # and it trained on
    np.testing.assert_array_equal(_row(second, res.results[1], "i", 101),
                                  _dump(out / PERIODS[0], "i")[101])
    # user 7 and item 107 are new: the trainer's own random rows, then trained
    for t, nid in (("u", 7), ("i", 107)):
        np.testing.assert_array_equal(_row(second, res.results[1], t, nid),
                                      _row(second, res.results[1], t, nid, which=1))
    assert 7 in dumps[1] and np.isfinite(dumps[1][7]).all()
    np.testing.assert_array_equal(_row(initial_tables[2], res.results[2], "u", 7), dumps[1][7])


def test_a_rerun_redoes_only_the_period_whose_dump_is_gone(tmp_path):
    cfg = _setup(tmp_path)
    train_from_config(cfg)
    out = tmp_path / "out"
    before = {p: (out / p / "u.npy").read_bytes() for p in PERIODS}
    again = train_from_config(cfg)  # everything complete: nothing trained
    assert again.periods == [] and again.skipped == list(PERIODS)
    assert "every period up to 20230219/08 is complete" in again.note
    shutil.rmtree(out / PERIODS[2])
    (out / PERIODS[1] / "u.txt").write_text("damaged\n")  # no longer matches its marker
    res = train_from_config(cfg)
    # period 2's dump no longer matches its checksums: the last complete one is period 1
    assert res.skipped == [PERIODS[0]] and res.periods == list(PERIODS[1:])
    assert (out / PERIODS[0] / "u.npy").read_bytes() == before[PERIODS[0]]
    for p in PERIODS[1:]:  # the same warm start and seed: the same tables again
        assert (out / p / "u.npy").read_bytes() == before[p]
    shutil.rmtree(out / PERIODS[2])
    res = train_from_config(cfg)
    assert res.periods == [PERIODS[2]] and res.skipped == list(PERIODS[:2])
    assert (out / PERIODS[2] / "u.npy").read_bytes() == before[PERIODS[2]]
    assert "does not wait for the next one (20230219/11)" in res.note


def test_newest_time_bounds_the_run_and_a_missing_folder_is_named(tmp_path):
    cfg = _setup(tmp_path, CONFIG + "newest_time: 20230219/05\n")
    res = train_from_config(cfg)
    assert res.periods == list(PERIODS[:2]) and "(newest_time 20230219/05)" in res.note
    assert not (tmp_path / "out" / PERIODS[2]).exists()
    shutil.rmtree(tmp_path / "data" / PERIODS[1])
    shutil.rmtree(tmp_path / "out" / PERIODS[1])
    with pytest.raises(ConfigError, match=r"folder of period 20230219/05 is missing: .*"
                       r"data/20230219/05"):
        validate_config(cfg)


def test_sage_mode_periods_continue_from_the_id_tables(tmp_path, initial_tables):
    """With an encoder the dump is its output, not the id table: the next period starts
    from the id tables (kept in the period's routine/ folder)."""
    cfg = _setup(tmp_path, CONFIG.replace("sparse_type: adagrad\n", "") + (
        "sage_mode: true\nsamples: [2]\ninfer_samples: [2]\nnewest_time: 20230219/05\n"
        "gcl_loss: simgcl_loss\nhcl: true\n"))
    res = train_from_config(cfg)
    p1 = res.results[0]
    row = p1.node_ids["u"].tolist().index(3)
    np.testing.assert_array_equal(_row(initial_tables[1], res.results[1], "u", 3),
                                  p1.tables["u"][row])
    assert not np.allclose(p1.tables["u"][row], p1.embeddings["u"][row])


@pytest.mark.parametrize(("key", "value", "match"), [  # values as the YAML gives them
    ("start_time", "2023-02-19", "start_time must be YYYYMMDD/HH"),  # a YAML date
    ("start_time", "20230219", "start_time must be YYYYMMDD/HH"),  # no hour
    ("start_time", "20230219/24", "start_time must be YYYYMMDD/HH"),
    ("start_time", "20230230/02", "start_time must be YYYYMMDD/HH"),
    ("time_delta", "0", "time_delta must be an integer number of hours"),
    ("time_delta", "1.5", "time_delta must be an integer number of hours"),
    ("time_delta", '"3"', "time_delta must be an integer number of hours"),
    ("time_delta", "true", "time_delta must be an integer number of hours"),
    ("newest_time", "20230218/23", "newest_time 20230218/23 must be start_time"),
    ("newest_time", "20230219/04", r"e\.g\. 20230219/02 or 20230219/05"),
    ("newest_time", "tomorrow", "newest_time must be YYYYMMDD/HH"),
])
def test_bad_routine_values_are_refused_naming_the_key(tmp_path, key, value, match):
    lines = [ln for ln in CONFIG.splitlines() if not ln.startswith(f"{key}:")]
    cfg = _setup(tmp_path, "\n".join([*lines, f"{key}: {value}", ""]), periods=PERIODS[:1])
    with pytest.raises(ConfigError, match=match) as info:
        validate_config(cfg)
    assert info.value.field == key


@pytest.mark.parametrize(("text", "field"), [
    (CONFIG.replace("train_mode: online_train\n", ""), "start_time"),
    (CONFIG.replace("train_mode: online_train", "train_mode: online-train"), "start_time"),
    (CONFIG.replace('"u2click2i:u2click2i.txt"', '"u2click2i:/abs/u2click2i.txt"'),
     "etype2files"),
    (CONFIG + "warm_start_from: old\n", "warm_start_from"),
    (CONFIG + "need_train: false\n", "need_train"),
    ("\n".join(ln for ln in CONFIG.splitlines() if "2files" not in ln and "meta_path" not in ln)
     + "\ngenerate: sbm:nodes=20,edges=40\n", "generate"),
    (CONFIG.replace("start_time: 20230219/02\n", ""), "start_time"),
])
def test_routine_options_that_cannot_work_are_refused(tmp_path, text, field):
    cfg = _setup(tmp_path, text, periods=PERIODS[:1])
    with pytest.raises(ConfigError) as info:
        validate_config(cfg)
    assert info.value.field == field


def test_match_ids_maps_by_id_in_any_order():
    rows, src = match_ids(np.array([30, 10, 20]), np.array([20, 40, 30, 10]))
    assert rows.tolist() == [0, 2, 3] and src.tolist() == [2, 0, 1]
    rows, src = match_ids(np.array(["a", "b"]), np.array([1, 2]))
    assert rows.tolist() == [] and src.tolist() == []
