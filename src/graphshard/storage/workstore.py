"""Where the dispatch's work pieces live: a local folder, or a URI that every node reaches.

A dispatch task writes its piece (an edge or feature chunk routed by part, a block of the
node-ID map) as a local file and :meth:`WorkStore.finish` records it; a task that needs
a piece asks :meth:`WorkStore.fetch` for a local path.

- **Local work folder** (a plain path): the identity.  :meth:`~WorkStore.path` is the file
  in the work folder, :meth:`~WorkStore.finish` writes the done-marker beside it
  (:mod:`graphshard.storage.pieces`) and :meth:`~WorkStore.fetch` returns the path:
  nothing is copied, as before this layer existed.  Every worker must see the folder
  (one node, or a shared file system).
- **Remote work folder** (``s3://``, ``gs://``, ``hdfs://``: ``<out>/.graphshard-work``
  when the output is a URI): :meth:`~WorkStore.path` is a file of this process's
  node-local cache for the run (:func:`graphshard.storage.fsys.cache_folder`);
  :meth:`~WorkStore.finish` uploads the files, then writes the done-marker (size and
  SHA-256 of each file) last, so a piece never looks finished before it is;
  :meth:`~WorkStore.fetch` copies a piece into the cache once per process, checked against
  its marker's size and SHA-256, and :meth:`~WorkStore.release` drops a copy a task no
  longer needs.  No worker needs to see another's disk.  The dispatch writes a routed
  piece there as one file per part (:meth:`graphshard.pipeline.plan.Plan.edge_rels`),
  so that a part task copies only its own rows.

Resume is the same on both: :meth:`~WorkStore.finished` returns the summary of a piece
whose marker has the task's key and whose files match it (the remote check compares
sizes; the SHA-256 is checked when a consumer fetches the piece).

Example:
    >>> import tempfile, numpy as np
    >>> store = WorkStore(tempfile.mkdtemp())
    >>> np.save(store.path("edges/a.npy"), np.arange(3))
    >>> store.finish(["edges/a.npy"], "key-1", {"rows": 3})
    {'rows': 3}
    >>> store.finished(["edges/a.npy"], "key-1"), store.finished(["edges/a.npy"], "other")
    ({'rows': 3}, None)
    >>> store.fetch("edges/a.npy") == store.path("edges/a.npy")  # local: no copy
    True
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PartitionNotFoundError
from . import fsys
from .files import file_sha256, write_json_atomic
from .pieces import finish_piece, finished_summary, remove_work

__all__ = ["WorkStore"]

_runs_lock = threading.Lock()
_runs: dict[str, Path] = {}  # remote work root -> this process's cache of its current run


@dataclass(frozen=True)
class WorkStore:
    """The work folder of one dispatch run (small: sent to every task).

    Attributes:
        root: A local folder, or the URI of a remote one.
        run: Names this run's node-local copies (a new run of the same work folder in a
            long-lived worker process drops the copies of the previous one).
    """

    root: str
    run: str = ""

    @property
    def remote(self) -> bool:
        """The work folder is a URI (pieces are copied to and from it)."""
        return fsys.is_remote(self.root)

    def _cache(self) -> Path:
        """This process's node-local copy folder of the run (created)."""
        folder = fsys.cache_folder(f"work:{self.root}:{self.run}")
        with _runs_lock:
            old = _runs.get(self.root)
            if old != folder:
                if old is not None:  # an earlier run of this work folder: its copies go
                    shutil.rmtree(old, ignore_errors=True)
                _runs[self.root] = folder
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def path(self, rel: str) -> Path:
        """The local file of piece ``rel`` (``/``-separated, inside the work folder): where
        a task writes it, or where :meth:`fetch` puts it (its folder is created)."""
        base = Path(self.root) if not self.remote else self._cache()
        file = base / rel  # rel: one of the dispatch's own piece names
        file.parent.mkdir(parents=True, exist_ok=True)
        return file

    def _loc(self, rel: str) -> fsys.Location:
        return fsys.open_location(self.root).child(rel)

    def _marker(self, rel: str) -> dict[str, Any] | None:
        try:
            info = json.loads(self._loc(rel + ".done.json").read_bytes())
        except (PartitionNotFoundError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def finished(self, rels: list[str], key: str) -> Any | None:
        """The summary recorded for the piece ``rels`` (its first file names the marker)
        when the marker has ``key`` and every file matches it; else None."""
        if not self.remote:
            return finished_summary([self.path(r) for r in rels], key)
        info = self._marker(rels[0])
        if info is None or info.get("key") != key:
            return None
        for rel in rels:
            rec = info.get("files", {}).get(rel.rsplit("/", 1)[-1])
            if rec is None or self._loc(rel).size() != rec.get("bytes"):
                return None
        return info.get("summary")

    def finish(self, rels: list[str], key: str, summary: Any,
               digests: dict[str, str] | None = None, *, keep_local: bool = False) -> Any:
        """Record the piece ``rels`` (written at :meth:`path`) as finished, marker last;
        returns ``summary``.  ``digests``: SHA-256s computed while writing (others are
        hashed here).  Remote: the files are uploaded first, and their local copies
        removed unless ``keep_local`` (this process reads them again)."""
        digests = digests or {}
        if not self.remote:
            return finish_piece([self.path(r) for r in rels], key, summary,
                                {self.path(r): d for r, d in digests.items()})
        records = {}
        for rel in rels:
            file = self.path(rel)
            records[rel.rsplit("/", 1)[-1]] = {"bytes": file.stat().st_size,
                                               "sha256": digests.get(rel) or file_sha256(file)}
        if len(rels) == 1:
            self._loc(rels[0]).upload(self.path(rels[0]))
        else:  # a file per part: several requests in flight (object stores' latency)
            with ThreadPoolExecutor(min(8, len(rels))) as pool:
                list(pool.map(lambda rel: self._loc(rel).upload(self.path(rel)), rels))
        doc = {"key": key, "files": records, "summary": summary}
        self._loc(rels[0] + ".done.json").write_bytes(
            (json.dumps(doc, indent=2) + "\n").encode())
        if not keep_local:
            for rel in rels:
                self.path(rel).unlink(missing_ok=True)
        return summary

    def fetch(self, rel: str, marker: str | None = None) -> Path:
        """A local path of the finished piece file ``rel``: the file itself when the work
        folder is local; else this process's copy, downloaded once and checked against the
        size and SHA-256 that the marker of ``marker`` (default: ``rel``) records.

        Raises:
            PartitionNotFoundError: the piece has no marker (it was never finished).
            FormatError: the file differs from its marker.
        """
        file = self.path(rel)
        if not self.remote or file.is_file():
            return file
        info = self._marker(marker or rel)
        rec = (info or {}).get("files", {}).get(rel.rsplit("/", 1)[-1])
        if rec is None:
            raise PartitionNotFoundError(f"{self._loc(rel)}: work piece has no done-marker",
                                         path=str(self._loc(rel)))
        fsys.download_verified(self._loc(rel), file, int(rec["bytes"]), str(rec["sha256"]))
        return file

    def write_marker(self, rel: str, doc: dict[str, Any]) -> None:
        """Write the done-marker ``<rel>.done.json`` alone (for files that live elsewhere,
        such as a remote output's part files); atomically."""
        data = (json.dumps(doc, indent=2) + "\n").encode()
        if self.remote:
            self._loc(rel + ".done.json").write_bytes(data)
        else:
            write_json_atomic(self.path(rel + ".done.json"), doc)

    def read_marker(self, rel: str) -> dict[str, Any] | None:
        """The done-marker of ``rel`` (None when absent or unreadable)."""
        if self.remote:
            return self._marker(rel)
        try:
            info = json.loads(self.path(rel + ".done.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def release(self, rel: str) -> None:
        """Drop this process's copy of ``rel`` (remote work folders; a local one keeps its
        files): what a task does with the pieces only it reads."""
        if self.remote:
            self.path(rel).unlink(missing_ok=True)

    def remove(self) -> None:
        """Delete the work folder after a finished run, done-markers first (so that it
        never looks finished), and this process's copies."""
        if not self.remote:
            remove_work(self.root)
            return
        loc = fsys.open_location(self.root)
        for rel in loc.files():
            if rel.endswith(".done.json"):
                loc.child(rel).delete()
        if loc.files():
            loc._call("delete", loc.fs.delete_dir, loc.path)  # the rest, in batches
        with _runs_lock:
            old = _runs.pop(self.root, None)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def new_run_id(*parts: Any) -> str:
    """A short name for one run (what :attr:`WorkStore.run` takes)."""
    import uuid

    return hashlib.sha256(json.dumps([uuid.uuid4().hex, *map(str, parts)]).encode()
                          ).hexdigest()[:12]

