"""Resumable work: each finished piece of a pipeline step leaves a verified marker.

A piece is one task's output file(s) under the work folder.  When the task finishes it
writes ``<name>.done.json`` (atomically, last) with the size and SHA-256 of its files and
the summary it returned.  Running the same step again skips every piece whose marker is
present and whose files still match; anything else is computed again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .files import file_sha256, write_json_atomic

__all__ = ["finish_piece", "finished_summary"]


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".done.json")


def finished_summary(files: list[Path], key: str) -> Any | None:
    """The stored summary if every file matches its marker, else None.

    ``key`` names the task's inputs (so a marker from other inputs never counts).
    """
    marker = _marker(files[0])
    if not marker.is_file():
        return None
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if info.get("key") != key:
        return None
    for file in files:
        rec = info.get("files", {}).get(file.name)
        if rec is None or not file.is_file() or file.stat().st_size != rec["bytes"] \
                or file_sha256(file) != rec["sha256"]:
            return None
    return info.get("summary")


def finish_piece(files: list[Path], key: str, summary: Any,
                 digests: dict[Path, str] | None = None) -> Any:
    """Record that ``files`` are complete (marker written last); returns ``summary``.

    ``digests`` gives SHA-256s computed while writing; other files are hashed here.
    """
    digests = digests or {}
    records = {f.name: {"bytes": f.stat().st_size,
                        "sha256": digests.get(f) or file_sha256(f)} for f in files}
    write_json_atomic(_marker(files[0]), {"key": key, "files": records, "summary": summary})
    return summary


def remove_work(folder: str | os.PathLike[str]) -> None:
    """Delete a finished run's work folder (markers first, so it never looks finished)."""
    root = Path(folder)
    if not root.exists():
        return
    for marker in root.rglob("*.done.json"):
        marker.unlink()
    for file in sorted(root.rglob("*"), reverse=True):
        if file.is_dir():
            file.rmdir()
        else:
            file.unlink()
    root.rmdir()
