"""Seeded mutation fuzzing for readers (STYLE §13): every reader gets a fuzz test built on this.

A fuzz test starts from a valid input, mutates it with a seeded generator and calls the
reader on each mutant. The only allowed outcomes are a result (the reader accepted the
mutant) or a :class:`~graphshard.errors.GraphshardError` whose message names the file; a
raw exception, a case slower than :data:`CASE_SECONDS` (a hang) or a result the test's own
``check`` rejects (a silent wrong result) fails the test, listing the cases.

``GRAPHSHARD_FUZZ_CASES`` sets the number of cases (default :data:`DEFAULT_CASES`, a few
seconds a reader); ``GRAPHSHARD_FUZZ_REPORT=path`` appends one JSON line of counts per
reader, for the closing note's table.

Example (in a test):
    >>> import random
    >>> m = mutate_text(random.Random(0), "0 1\\n1 2\\n")
    >>> isinstance(m, bytes)
    True
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphshard.errors import GraphshardError

#: Cases per reader in CI; ``GRAPHSHARD_FUZZ_CASES=300`` for the issue's count.
DEFAULT_CASES = 40
#: A case that takes longer than this counts as a hang.
CASE_SECONDS = 20.0

#: Tokens that break readers: huge, negative, non-integer, empty, path-like, odd text.
INTERESTING = ["-1", "0", "1", "-0", "2147483648", "4294967296", "9223372036854775807",
               "9223372036854775808", "18446744073709551615", "99999999999999999999",
               "1e15", "1e308", "nan", "inf", "1.5", "abc", "", " ", "\x00", "\xff",
               "../../x", "/etc/passwd", "null", "true", "[]", "{}", '"', "\n", ",", "é"]
INTERESTING_JSON: list[Any] = [None, True, -1, 0, 1, 2**31, 2**63, 2**64, 10**15, 1.5,
                               float("1e308"), "", "abc", "../../x", "/dev/zero", [], {},
                               [1, 2], {"a": 1}, [[0, -1]], "nan"]


def cases() -> int:
    """Number of cases per reader: ``$GRAPHSHARD_FUZZ_CASES`` or :data:`DEFAULT_CASES`."""
    return int(os.environ.get("GRAPHSHARD_FUZZ_CASES", DEFAULT_CASES))


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Flip, drop, duplicate or insert a few bytes, or truncate."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            del buf[pos:pos + rng.randint(1, 8)]
        elif op == 2:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3:
            chunk = buf[pos:pos + rng.randint(1, 16)]
            buf[pos:pos] = chunk
        else:
            del buf[pos:]
    return bytes(buf)


def mutate_text(rng: random.Random, text: str) -> bytes:
    """Replace, drop or duplicate tokens and lines of a text file; sometimes raw bytes."""
    if rng.random() < 0.2:
        return mutate_bytes(rng, text.encode())
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            tokens = lines[i].replace("\t", " ").replace(",", " ").split(" ")
            j = rng.randrange(len(tokens))
            tokens[j] = rng.choice(INTERESTING)
            sep = "\t" if "\t" in lines[i] else ("," if "," in lines[i] else " ")
            lines[i] = sep.join(tokens)
        elif op == 1:
            del lines[i]
            lines = lines or [""]
        elif op == 2:
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i] + rng.choice([" ", ",", "\t"]) + rng.choice(INTERESTING)
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def mutate_json(rng: random.Random, obj: Any) -> Any:
    """Replace, delete or retype one value anywhere in a JSON document (a deep copy)."""
    obj = json.loads(json.dumps(obj))
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            paths.append((node, key))
            if isinstance(value, (dict, list)):
                walk(value)

    if isinstance(obj, (dict, list)):
        walk(obj)
    if not paths:
        return rng.choice(INTERESTING_JSON)
    for _ in range(rng.randint(1, 2)):
        parent, key = rng.choice(paths)
        try:
            if rng.random() < 0.2 and isinstance(parent, dict):
                del parent[key]
            else:
                parent[key] = rng.choice(INTERESTING_JSON)
        except (KeyError, IndexError):
            pass
    return obj


@dataclass
class FuzzResult:
    """Counts of outcomes and the failing cases (seed, kind, message)."""

    reader: str
    counts: Counter = field(default_factory=Counter)
    failures: list[tuple[int, str, str]] = field(default_factory=list)


def dataset_graph_problem(ds: Any) -> str | None:
    """A ``check`` for :func:`run_fuzz` of a dataset loader: what is wrong with the
    accepted dataset's graph (an edge out of range, a node column of the wrong length),
    or None."""
    g = ds.graph
    s, d = g.edges()
    if s.size and (min(s.min(), d.min()) < 0 or max(s.max(), d.max()) >= g.num_nodes()):
        return "an edge out of range"
    if any(len(v) != g.num_nodes() for v in g.ndata.values()):
        return "a node column of the wrong length"
    return None


def run_fuzz(reader: str, make_case: Callable[[random.Random, Path], Path | None],
             load: Callable[[Path], Any], tmp_path: Path, *,
             check: Callable[[Any], str | None] | None = None, seed: int = 0,
             num_cases: int | None = None) -> FuzzResult:
    """Run ``num_cases`` mutants through ``load`` and assert every outcome is allowed.

    Args:
        reader: Name of the reader, for messages and the report.
        make_case: Writes one mutant under the given folder; returns the path to load
            (``None`` skips the case, for a mutant equal to the input).
        load: Reads the path; returning normally means the mutant was accepted.
        tmp_path: Folder for the cases (one sub-folder each).
        check: Optional validation of an accepted result; a returned string is a
            silent wrong result.
        seed: Base seed; case ``i`` uses ``seed * 100003 + i``.
        num_cases: Defaults to :func:`cases`.
    """
    result = FuzzResult(reader)
    for i in range(cases() if num_cases is None else num_cases):
        rng = random.Random(seed * 100003 + i)
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        path = make_case(rng, folder)
        if path is None:
            continue
        start = time.perf_counter()
        try:
            out = load(path)
        except GraphshardError as exc:
            kind = "error"
            if str(folder) not in str(exc) and path.name not in str(exc):
                kind = "unnamed"
                result.failures.append((i, kind, f"error does not name the file: {exc}"))
        except Exception as exc:  # a raw exception: what the fuzz test looks for
            kind = "raw"
            result.failures.append((i, kind, f"{type(exc).__name__}: {exc}"[:300]))
        else:
            kind = "ok"
            problem = check(out) if check is not None else None
            if problem:
                kind = "wrong"
                result.failures.append((i, kind, problem))
        if time.perf_counter() - start > CASE_SECONDS:
            result.failures.append((i, "hang", f"took {time.perf_counter() - start:.1f} s"))
            kind = "hang"
        result.counts[kind] += 1
    report = os.environ.get("GRAPHSHARD_FUZZ_REPORT")
    if report:
        with open(report, "a") as handle:
            handle.write(json.dumps({"reader": reader, **result.counts}) + "\n")
    assert not result.failures, f"{reader}: {len(result.failures)} bad outcomes: " + "; ".join(
        f"case {i} {kind}: {msg}" for i, kind, msg in result.failures[:10])
    return result


def call_releasing_fifos(fn: Callable[[], Any], fifos: list[Path], seconds: float = 10.0
                         ) -> Any:
    """``fn()`` run in a thread; if it has not returned after ``seconds`` (a reader blocked
    in ``open()`` on one of ``fifos``), each FIFO is opened for writing and closed, which
    releases the reader, and the call fails as a hang.  A test of the special-file check
    so fails, rather than hangs, on code that opens a FIFO.  Returns what ``fn`` returned;
    raises what it raised."""
    import threading

    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(seconds)
        raise AssertionError(f"hung for {seconds} s (blocked opening a FIFO of {fifos})")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
