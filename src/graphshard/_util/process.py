"""Whether a process runs on this host (for cleaning up after processes that were killed)."""

from __future__ import annotations

import os

__all__ = ["process_running"]


def process_running(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (someone else's included).

    Example:
        >>> process_running(os.getpid())
        True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a pid of another user
        return True
    return True
