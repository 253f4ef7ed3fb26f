"""The shared epoch loop: best epoch, early stopping, checkpoints of a stopped run."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphshard as gs
from graphshard.train.epochs import best_epoch, run_epochs, should_stop

NAN = math.nan


class FakeTeam:
    """Scripted validation/test values; counts the epochs it trained."""

    def __init__(self, val, test=None):
        self.val, self.test = list(val), list(test or val)
        self.trained: list[int] = []
        self.w = np.zeros(1, np.float32)

    def train_epoch(self, epoch):
        self.trained.append(epoch)
        self.w += 1
        return 2.0 * (epoch + 1), 4

    def evaluate(self):
        e = self.trained[-1]
        return {"auc": (self.val[e], self.test[e]), "mrr": (self.val[e] / 2, self.test[e] / 2)}

    def state(self):
        return {"w": self.w.copy()}, {}

    def load_state(self, model, optimizer):
        self.w = np.array(model["w"])

    def model(self):
        return self.w

    def close(self):
        pass


@pytest.mark.parametrize(("val", "min_delta", "best"), [
    ([0.5, 0.7, 0.7, 0.6], 0.0, 1),            # ties: the first
    ([0.5, 0.7, 0.705, 0.72], 0.01, 3),        # 0.705 is not enough, 0.72 is
    ([NAN, 0.2, NAN, 0.1], 0.0, 1),            # epochs not evaluated never count
    ([NAN, NAN], 0.0, 1),                      # nothing measured: the last epoch
    ([], 0.0, -1),
])
def test_best_epoch(val, min_delta, best):
    assert best_epoch(val, min_delta=min_delta) == best


def test_should_stop_counts_epochs_since_the_best():
    assert not should_stop([0.5, 0.4, 0.4], patience=None)
    assert not should_stop([0.5, 0.4], patience=2)
    assert should_stop([0.5, 0.4, 0.4], patience=2)
    assert not should_stop([0.5, 0.4, NAN], patience=2)  # only after an evaluation
    assert should_stop([0.5, 0.501, 0.502], patience=2, min_delta=0.01)
    assert not should_stop([NAN, NAN, NAN], patience=1)


def test_loop_stops_early_and_reports_the_best_epoch():
    team = FakeTeam([0.5, 0.8, 0.7, 0.79, 0.9, 0.95], test=[0.4, 0.75, 0.8, 0.8, 0.85, 0.9])
    seen = []
    run = run_epochs(team, epochs=6, eval_every=1, metrics=("auc", "mrr"), patience=2,
                     on_epoch=lambda e, m: seen.append((e, m)))
    assert team.trained == [0, 1, 2, 3] and run.stopped_early
    assert run.best_epoch == 1 and run.history["test_auc"][run.best_epoch] == 0.75
    assert run.history["losses"] == [0.5, 1.0, 1.5, 2.0]
    assert list(seen[0][1]) == ["loss", "val_auc", "test_auc", "val_mrr", "test_mrr",
                                "seconds", "eval_seconds", "samples"]
    # the monitor may be another metric; without patience every epoch runs
    run = run_epochs(FakeTeam([0.5, 0.8, 0.7]), epochs=3, eval_every=1, metrics=("auc", "mrr"),
                     monitor="mrr")
    assert run.best_epoch == 1 and not run.stopped_early and run.monitor == "mrr"


def test_stopping_on_the_last_epoch_is_not_early():
    run = run_epochs(FakeTeam([0.9, 0.5, 0.5]), epochs=3, eval_every=1, metrics=("auc",),
                     patience=2)
    assert len(run.history["losses"]) == 3 and not run.stopped_early


def test_eval_every_and_patience_count_epochs():
    team = FakeTeam([0.9, 0.9, 0.5, 0.5, 0.4, 0.4, 0.3, 0.3])
    run = run_epochs(team, epochs=8, eval_every=2, metrics=("auc",), patience=3)
    # evaluated at epochs 1, 3, 5: best 1, then 5 - 1 = 4 >= 3 epochs without improvement
    assert team.trained == [0, 1, 2, 3, 4, 5] and run.stopped_early and run.best_epoch == 1
    assert np.isnan(run.history["val_auc"][0])


def test_resumed_stopped_run_stays_stopped(tmp_path):
    from graphshard.train import load_checkpoint

    val = [0.5, 0.8, 0.7, 0.6, 0.9, 0.9]
    run = run_epochs(FakeTeam(val), epochs=6, eval_every=1, metrics=("auc",), patience=2,
                     checkpoint_dir=tmp_path)
    assert run.stopped_early and load_checkpoint(tmp_path).epoch == 4
    again = FakeTeam(val)
    resumed = run_epochs(again, epochs=6, eval_every=1, metrics=("auc",), patience=2,
                         checkpoint_dir=tmp_path, checkpoint=load_checkpoint(tmp_path))
    assert again.trained == [] and resumed.stopped_early and resumed.history == run.history
    assert resumed.model.tolist() == [4.0]  # the checkpoint's state was loaded
    # more patience: the run goes on from the checkpoint
    more = FakeTeam(val)
    longer = run_epochs(more, epochs=6, eval_every=1, metrics=("auc",), patience=3,
                        checkpoint_dir=tmp_path, checkpoint=load_checkpoint(tmp_path))
    assert more.trained == [4, 5] and longer.best_epoch == 4 and not longer.stopped_early


def test_bad_options_name_the_key():
    with pytest.raises(gs.ValidationError, match="patience must be None or an int >= 1"):
        run_epochs(FakeTeam([1.0]), epochs=1, eval_every=1, metrics=("auc",), patience=0)
    with pytest.raises(gs.ValidationError, match="min_delta must be a finite number >= 0"):
        run_epochs(FakeTeam([1.0]), epochs=1, eval_every=1, metrics=("auc",), min_delta=-1)
    with pytest.raises(gs.ValidationError, match=r"monitor must be one of \['auc'\]"):
        run_epochs(FakeTeam([1.0]), epochs=1, eval_every=1, metrics=("auc",), monitor="acc")


# an HGB IMDB-like Macro-F1 curve: a lucky epoch 0 that training first lowers (issue 43)
IMDB_LIKE = [0.25, 0.14, 0.16, 0.19, 0.22, 0.27, 0.31, 0.30, 0.29, 0.28]


def test_a_lucky_first_epoch_cannot_hold_the_run():
    run = run_epochs(FakeTeam(IMDB_LIKE), epochs=10, eval_every=1, metrics=("auc",),
                     patience=3)
    assert run.stopped_early and run.best_epoch == 0 and len(run.history["losses"]) == 4
    team = FakeTeam(IMDB_LIKE)
    run = run_epochs(team, epochs=10, eval_every=1, metrics=("auc",), patience=3, warmup=2)
    # epochs 0-1 are not monitored: the best is epoch 6, and the run trains on
    assert run.best_epoch == 6 and team.trained == list(range(10)) and not run.stopped_early
    assert run.history["test_auc"][run.best_epoch] == 0.31


def test_warmup_delays_the_stop_and_keeps_the_best_of_later_epochs():
    flat = [0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    team = FakeTeam(flat)
    run = run_epochs(team, epochs=8, eval_every=1, metrics=("auc",), patience=2, warmup=3)
    # the first monitored epoch (3) is the best; no stop before epoch warmup + patience = 5
    assert run.best_epoch == 3 and team.trained == [0, 1, 2, 3, 4, 5] and run.stopped_early
    # a run shorter than the warm-up still has a best epoch: of all its epochs
    assert run_epochs(FakeTeam(flat), epochs=2, eval_every=1, metrics=("auc",),
                      warmup=5).best_epoch == 0
    with pytest.raises(gs.ValidationError, match="warmup must be an int >= 0, got -1"):
        run_epochs(FakeTeam(flat), epochs=2, eval_every=1, metrics=("auc",), warmup=-1)
