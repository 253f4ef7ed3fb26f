"""Routine (incremental) training over dated folders: Graph4Rec's ``train_mode:
online_train`` with ``start_time``, ``time_delta`` and ``newest_time``.

As PGLBox stores them, each period's graph files sit in
``<graph_data_local_path>/YYYYMMDD/HH`` (``20230219/02``, ``20230219/05``, ... for
``start_time: 20230219/02`` and ``time_delta: 3`` hours); the config's ``etype2files`` /
``ntype2files`` name the files inside each such folder.  :func:`routine_plan` lists the
periods from ``start_time`` by ``time_delta`` up to ``newest_time`` (inclusive) or, without
it, up to the newest period folder present (graphshard does not wait for new folders as
PGLBox's resident task does: a run ends after the newest one), and starts after the last
period whose dump is complete.  :func:`train_routine` then trains period by period: each
starts from the previous period's tables mapped by node ID (rows of nodes seen before
continue, new nodes keep the trainer's random initialisation: :class:`WarmRows`) and dumps
to ``<output_path>/YYYYMMDD/HH`` as a normal run dumps, then writes
:data:`MARKER` (checksums of the period's files) last: its presence, verified, means the
period is complete.

Unstable API (issue 44).

Example:
    >>> parse_time("20230219/05", "start_time", "g4r.yaml")
    datetime.datetime(2023, 2, 19, 5, 0)
    >>> parse_time("20230219", "start_time", "g4r.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    graphshard.errors.ConfigError: g4r.yaml: start_time must be YYYYMMDD/HH, a date and an hour...
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, GraphshardError
from ..storage.files import atomic_path, file_sha256, load_npy, write_json_atomic
from ._walk_tables import WarmRows
from .graph4rec import _file_spec, dumped_types, node_ids, read_config_graph

__all__ = ["MARKER", "ROUTINE_KEYS", "RoutinePlan", "RoutineResult", "match_ids",
           "parse_time", "routine_plan", "train_routine"]

logger = logging.getLogger(__name__)

#: The keys of routine training (Graph4Rec's).
ROUTINE_KEYS = ("train_mode", "start_time", "time_delta", "newest_time")
#: A period's completion record, written last in its dump folder.
MARKER = "graphshard_period.json"
_STATE = "routine"  # <ntype>.ids.npy, and <ntype>.npy where the dump is not the id table
_FORMAT = "graphshard-routine-period"
_TIME = re.compile(r"\d{8}/\d{2}")
_MAX_DELTA = 24 * 366


def parse_time(value: Any, key: str, path: Any) -> datetime:
    """A period's time from PGL's ``YYYYMMDD/HH`` (the hour is required)."""
    ok = isinstance(value, str) and _TIME.fullmatch(value.strip()) is not None
    try:
        if ok:
            return datetime.strptime(value.strip(), "%Y%m%d/%H")
    except ValueError:
        pass
    raise ConfigError(f"{path}: {key} must be YYYYMMDD/HH, a date and an hour (PGL's "
                      f"20230814/00, the hour even for daily data), got {value!r}",
                      path=str(path), field=key)


def _label(t: datetime) -> str:
    return t.strftime("%Y%m%d/%H")


@dataclass(frozen=True)
class RoutinePlan:
    """The periods of a routine run and where the last completed one stands.

    Attributes:
        root: The folder of the dated input folders (``graph_data_local_path``).
        out: The folder of the dated dumps (``output_path``).
        periods: Every period from ``start_time`` to the last, in order.
        step: ``time_delta``.
        first: Index in ``periods`` of the first period to train (after the last completed
            one; ``len(periods)`` when all are complete).
        bounded: Whether ``newest_time`` set the last period (else the newest folder did).
    """

    root: Path
    out: Path
    periods: tuple[datetime, ...] = field(repr=False)
    step: timedelta
    first: int
    bounded: bool

    def label(self, i: int) -> str:
        return _label(self.periods[i])

    def data_dir(self, i: int) -> Path:
        return self.root / self.label(i)

    def out_dir(self, i: int) -> Path:
        return self.out / self.label(i)


def _check_keys(cfg: dict[str, Any], path: Any) -> bool:
    """Whether ``cfg`` asks for routine training; refuses the routine keys without it and
    the options routine training cannot honour."""
    mode = cfg.get("train_mode")
    if mode is not None and not isinstance(mode, str):
        raise ConfigError(f"{path}: train_mode must be a string ('online_train': routine "
                          f"training; anything else: one run), got {mode!r}",
                          path=str(path), field="train_mode")
    if mode != "online_train":
        for key in ("start_time", "time_delta", "newest_time"):
            if key in cfg:
                raise ConfigError(f"{path}: {key} acts only with train_mode 'online_train' "
                                  f"(routine training), and train_mode is {mode!r}: remove "
                                  "it or set train_mode", path=str(path), field=key)
        return False
    bad = [k for k in ("graph", "generate") if k in cfg] or (
        [] if "etype2files" in cfg else ["etype2files"])
    if bad:
        raise ConfigError(f"{path}: train_mode 'online_train' reads each period's files named "
                          f"by etype2files from dated folders; {bad[0]} cannot be used with "
                          "it", path=str(path), field=bad[0])
    for key, why, bad_value in (
            ("warm_start_from", "each period starts from the previous period's tables",
             bool(cfg.get("warm_start_from"))),
            ("need_train", "every period trains", cfg.get("need_train", True) is False)):
        if bad_value:
            raise ConfigError(f"{path}: {key} cannot be used with train_mode 'online_train': "
                              f"{why}", path=str(path), field=key)
    for key in ("etype2files", "ntype2files"):
        if cfg.get(key):
            for files in _file_spec(cfg[key], Path(), key, path).values():
                absolute = [str(f) for f in files if f.is_absolute()]
                if absolute:
                    raise ConfigError(f"{path}: {key} names {absolute[0]}, an absolute path; "
                                      "with train_mode 'online_train' the files are read "
                                      "inside each period's folder <graph_data_local_path>/"
                                      "YYYYMMDD/HH, so name them relative to it",
                                      path=str(path), field=key)
    return True


def _present(root: Path, start: datetime, step: timedelta) -> list[datetime]:
    """The period folders under ``root`` at or after ``start`` on its ``step`` grid."""
    found = []
    for day in root.glob("[0-9]" * 8):
        for hour in day.glob("[0-9][0-9]"):
            try:
                t = datetime.strptime(f"{day.name}/{hour.name}", "%Y%m%d/%H")
            except ValueError:
                continue
            if hour.is_dir() and t >= start and (t - start) % step == timedelta(0):
                found.append(t)
    return sorted(found)


def routine_plan(cfg: dict[str, Any], base: Path, path: Any) -> RoutinePlan | None:
    """The periods a config trains, or None unless ``train_mode`` is ``online_train``.

    Raises:
        ConfigError: naming the key: a bad ``start_time`` / ``newest_time`` (not
            ``YYYYMMDD/HH``, or ``newest_time`` before ``start_time`` or off its grid), a
            bad ``time_delta`` (hours, an integer in 1..8784), routine keys without
            ``online_train``, options it cannot use, or a period folder still to train that
            is missing (named).
    """
    if not _check_keys(cfg, path):
        return None
    if "start_time" not in cfg or "time_delta" not in cfg:
        key = "start_time" if "start_time" not in cfg else "time_delta"
        raise ConfigError(f"{path}: train_mode 'online_train' needs start_time (YYYYMMDD/HH) "
                          f"and time_delta (hours); {key} is missing", path=str(path),
                          field=key)
    start = parse_time(cfg["start_time"], "start_time", path)
    delta = cfg["time_delta"]
    if isinstance(delta, bool) or not isinstance(delta, int) or not 1 <= delta <= _MAX_DELTA:
        raise ConfigError(f"{path}: time_delta must be an integer number of hours in 1.."
                          f"{_MAX_DELTA} (24: daily), got {delta!r}", path=str(path),
                          field="time_delta")
    step = timedelta(hours=delta)
    local = Path(cfg.get("graph_data_local_path", "."))
    root = local if local.is_absolute() else base / local
    out_p = Path(cfg.get("output_path", "output"))
    out = out_p if out_p.is_absolute() else base / out_p
    if cfg.get("newest_time") is not None:
        last = parse_time(cfg["newest_time"], "newest_time", path)
        if last < start or (last - start) % step:
            grid = start + step * max((last - start) // step, 0)
            raise ConfigError(f"{path}: newest_time {_label(last)} must be start_time "
                              f"{_label(start)} plus a multiple of time_delta ({delta} h), "
                              f"e.g. {_label(grid)} or {_label(grid + step)}",
                              path=str(path), field="newest_time")
    else:
        present = _present(root, start, step) if root.is_dir() else []
        if not present:
            raise ConfigError(f"{path}: train_mode 'online_train': no period folder "
                              f"YYYYMMDD/HH at or after start_time {_label(start)} (every "
                              f"{delta} h) under {root}", path=str(path), field="start_time")
        last = present[-1]
    periods = tuple(start + step * k for k in range((last - start) // step + 1))
    first = 0
    if cfg.get("resume", True):
        done = next((i for i in range(len(periods) - 1, -1, -1)
                     if _complete(out / _label(periods[i]))), -1)
        first = done + 1
    plan = RoutinePlan(root, out, periods, step, first, cfg.get("newest_time") is not None)
    for i in range(first, len(periods)):
        if not plan.data_dir(i).is_dir():
            raise ConfigError(f"{path}: the folder of period {plan.label(i)} is missing: "
                              f"{plan.data_dir(i)} (start_time {_label(start)}, time_delta "
                              f"{delta} h, last period {_label(last)})", path=str(path),
                              field="graph_data_local_path")
    return plan


def _read_marker(folder: Path) -> dict[str, Any] | None:
    """The period's marker if it and every file it lists check out, else None."""
    try:
        info = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or info.get("format") != _FORMAT:
        return None
    files = info.get("files")
    if not isinstance(files, dict):
        return None
    for name, digest in files.items():
        f = folder / name
        if not f.is_file() or file_sha256(f) != digest:
            return None
    return info


def _complete(folder: Path) -> bool:
    return _read_marker(folder) is not None


def match_ids(old: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows_new, rows_old)``: the positions in ``new`` of the IDs also in ``old``
    (unique IDs each), and where those IDs are in ``old`` (vectorised: sort + search).

    Example:
        >>> [r.tolist() for r in match_ids(np.array([7, 3, 9]), np.array([3, 5, 9, 1]))]
        [[0, 2], [1, 2]]
    """
    old, new = np.asarray(old), np.asarray(new)
    if old.dtype.kind != new.dtype.kind:  # integer IDs one period, text the next
        old, new = old.astype(str), new.astype(str)
    if not len(old) or not len(new):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(old, kind="stable")
    ranked = old[order]
    pos = np.minimum(np.searchsorted(ranked, new), len(ranked) - 1)
    hit = ranked[pos] == new
    return np.flatnonzero(hit).astype(np.int64), order[pos[hit]].astype(np.int64)


def _warm(folder: Path, ids: dict[str, np.ndarray]) -> dict[str, WarmRows]:
    """The rows of ``ids``' nodes found in the completed period ``folder``, per type."""
    info = _read_marker(folder)
    if info is None:
        raise ConfigError(f"{folder}: the previous period's dump is incomplete or changed "
                          f"({MARKER} does not match its files)", path=str(folder))
    out = {}
    for t, new in ids.items():
        if t not in info["tables"]:
            continue
        old = load_npy(folder / info["ids"][t])
        table = load_npy(folder / info["tables"][t], mmap_mode="r")
        rows, src = match_ids(old, new)
        out[t] = WarmRows(rows, np.asarray(table[src], np.float32))
        logger.info("routine training: %s: %d of %d nodes continue from %s", t, len(rows),
                    len(new), folder)
    return out


def _finish(folder: Path, res: Any, ids: dict[str, np.ndarray], cfg: dict[str, Any],
            label: str) -> None:
    """Write the period's state (IDs; id tables where the dump is not one) and then, last,
    :data:`MARKER` with the checksums of every file the next period or a rerun reads."""
    state = folder / _STATE
    state.mkdir(parents=True, exist_ok=True)
    dumped = set(dumped_types(cfg, list(res.embeddings)))
    tables, id_files = {}, {}
    for t, emb in res.embeddings.items():
        id_files[t] = f"{_STATE}/{t}.ids.npy"
        _save(folder / id_files[t], np.asarray(ids[t]) if t in ids else np.arange(len(emb)))
        if t in dumped and not res.tables:
            tables[t] = f"{t}.npy"
        else:
            tables[t] = f"{_STATE}/{t}.npy"
            _save(folder / tables[t], res.tables.get(t, res.embeddings[t]))
    names = sorted({*tables.values(), *id_files.values(), *(
        n for t in dumped for n in (f"{t}.npy", f"{t}.txt", f"{t}.safetensors", "walks.txt")
        if (folder / n).is_file())})
    write_json_atomic(folder / MARKER, {
        "format": _FORMAT, "version": 1, "period": label,
        "tables": tables, "ids": id_files,
        "files": {n: file_sha256(folder / n) for n in names}})


def _save(path: Path, arr: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)


@dataclass(frozen=True)
class RoutineResult:
    """What a routine run returns (``train_from_config`` with ``train_mode: online_train``).

    Attributes:
        periods: The periods trained by this run (``YYYYMMDD/HH``), in order.
        skipped: The periods complete before it (not trained again).
        results: One :class:`~graphshard.train.walk_embed.WalkEmbeddingResult` per period
            trained.
        note: How the run ended (the last period, and that graphshard does not wait for
            the next one).
    """

    periods: list[str]
    skipped: list[str]
    results: list[Any] = field(repr=False)
    note: str = ""

    @property
    def losses(self) -> list[float]:
        """Mean loss of every epoch of every period trained, in order."""
        return [v for r in self.results for v in r.losses]

    @property
    def step_losses(self) -> list[float]:
        return [v for r in self.results for v in r.step_losses]

    @property
    def num_pairs(self) -> list[int]:
        return [v for r in self.results for v in r.num_pairs]

    @property
    def seconds(self) -> list[float]:
        return [v for r in self.results for v in r.seconds]

    def columns(self) -> dict[str, list[Any]]:
        """Per epoch: its period, loss, pairs and seconds (the CLI's table)."""
        return {"period": [p for p, r in zip(self.periods, self.results, strict=True)
                           for _ in r.losses],
                "losses": self.losses, "num_pairs": self.num_pairs, "seconds": self.seconds}


def train_routine(plan: RoutinePlan, cfg: dict[str, Any], base: Path, path: Any,
                  train_period: Callable[[Any, dict[str, WarmRows] | None, Path, str], Any],
                  *, graph: Any = None) -> RoutineResult:
    """Train the periods of ``plan`` from ``plan.first`` on.

    Args:
        plan: From :func:`routine_plan`.
        cfg: The config (its file keys, ``infer_node_type``).
        base: The YAML's folder.
        path: The YAML (for messages).
        train_period: ``(graph, init, out_dir, label) -> WalkEmbeddingResult``: one run,
            dumped to ``out_dir`` (the config's ``_walk``).
        graph: The first period's graph when already read.

    Returns:
        RoutineResult.
    """
    trained, results = [], []
    for i in range(plan.first, len(plan.periods)):
        label, folder = plan.label(i), plan.out_dir(i)
        if graph is None or i > plan.first:
            try:
                graph = read_config_graph(cfg, base, path, folder=plan.data_dir(i))
            except GraphshardError as exc:
                raise ConfigError(f"{path}: period {label}: {exc}", path=str(path),
                                  field="etype2files") from exc
        ids = node_ids(graph) or {}
        # the previous period is complete: the last completed one, or trained just now
        init = _warm(plan.out_dir(i - 1), ids) if i > 0 else None
        (folder / MARKER).unlink(missing_ok=True)  # not complete until written again
        if (folder / _STATE).is_dir():
            shutil.rmtree(folder / _STATE)
        logger.info("routine training: period %s (%d of %d), %s", label, i + 1,
                    len(plan.periods), "warm start" if init else "cold start")
        res = train_period(graph, init, folder, label)
        _finish(folder, res, res.node_ids or ids, cfg, label)
        trained.append(label)
        results.append(res)
    last = plan.label(len(plan.periods) - 1)
    nxt = _label(plan.periods[-1] + plan.step)
    note = (f"routine training: every period up to {last} is complete" if not trained else
            f"routine training: trained {len(trained)} period(s), {trained[0]} to {last}")
    note += (f" (newest_time {last})." if plan.bounded else
             f", the newest period folder under {plan.root}; graphshard does not wait for "
             f"the next one ({nxt}) as PGLBox's resident task does: run the same command "
             "again once it is there.")
    logger.info("%s", note)
    return RoutineResult(trained, [plan.label(i) for i in range(plan.first)], results, note)
