"""Helpers for the io tests: random graphs and graph comparison (importable as io_helpers)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
