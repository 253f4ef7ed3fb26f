"""Progress bars: one helper, off without a TTY, under ``--quiet`` or GRAPHSHARD_NO_PROGRESS=1."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

_disabled_by_caller = False


def disable_progress(disabled: bool = True) -> None:
    """Turn progress bars off (or back on) for this process, as ``--quiet`` does."""
    global _disabled_by_caller
    _disabled_by_caller = disabled


def progress_enabled() -> bool:
    """True when bars should be drawn: stderr is a TTY and nothing turned them off."""
    if _disabled_by_caller or os.environ.get("GRAPHSHARD_NO_PROGRESS", "") not in ("", "0"):
        return False
    return sys.stderr.isatty()


def progress(iterable: Iterable[T], *, desc: str, total: int | None = None,
             unit: str = "it") -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar on stderr when progress is enabled.

    Example:
        >>> list(progress(range(3), desc="demo"))
        [0, 1, 2]
    """
    if not progress_enabled():
        yield from iterable
        return
    yield from tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr,
                    dynamic_ncols=True, leave=False)


class _NoBar:
    """What :func:`progress_bar` yields when bars are off: updates do nothing."""

    def update(self, n: int = 1) -> None:
        """Nothing to draw."""


@contextlib.contextmanager
def progress_bar(*, desc: str, total: int | None, unit: str = "it",
                 delay: float = 0.0) -> Iterator[tqdm | _NoBar]:
    """A bar advanced by hand (``bar.update(n)``), for work whose items finish out of the
    order they were started in; it appears only after ``delay`` seconds (short steps
    draw nothing) and is cleared at the end.  Off as :func:`progress` is.

    Example:
        >>> with progress_bar(desc="demo", total=2, unit="task") as bar:
        ...     bar.update(2)
    """
    if not progress_enabled():
        yield _NoBar()
        return
    bar = tqdm(desc=desc, total=total, unit=unit, file=sys.stderr, dynamic_ncols=True,
               leave=False, delay=delay)
    try:
        yield bar
    finally:
        bar.close()
