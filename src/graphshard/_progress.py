"""Progress bars: one helper, off without a TTY, under ``--quiet`` or GRAPHSHARD_NO_PROGRESS=1."""

from __future__ import annotations

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
