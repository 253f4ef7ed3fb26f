"""Shared fixtures: the real graphs in ../shared/data, reached through one fixture."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of real graphs (``$GRAPHSHARD_SHARED_DATA`` or ``../shared/data``); skips if absent."""
    root = Path(os.environ.get("GRAPHSHARD_SHARED_DATA", _DEFAULT))
    if not root.is_dir():
        pytest.skip(f"shared data folder {root} is absent")
    return root


@pytest.fixture(scope="session")
def shared_file(shared_data: Path):
    """``shared_file("walshaw", "graphs", "4elt.graph")``: a path, or skip naming it."""

    def get(*parts: str) -> Path:
        path = shared_data.joinpath(*parts)
        if not path.exists():
            pytest.skip(f"shared data file {path} is absent")
        return path

    return get
