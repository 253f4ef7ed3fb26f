"""Progress bars: drawn on stderr when enabled, nothing otherwise."""

from __future__ import annotations

from graphshard._util import progress as _progress


def test_a_hand_advanced_bar_draws_on_stderr_when_enabled(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "progress_enabled", lambda: True)
    with _progress.progress_bar(desc="routing", total=4, unit="task") as bar:
        bar.update(3)
    err = capsys.readouterr().err
    assert "routing:" in err and "/4 [" in err  # tqdm redraws at most every 0.1 s
    assert err.endswith(" \r")  # cleared when the step ends


def test_no_bar_when_disabled(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "progress_enabled", lambda: False)
    with _progress.progress_bar(desc="routing", total=4, unit="task") as bar:
        bar.update(4)
    assert capsys.readouterr().err == ""
