"""Shared fixtures: the real graphs in ../shared/data, reached through one fixture."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red CI must be reproducible); locally hypothesis
# keeps exploring new examples and remembers failures in .hypothesis/.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# test helpers shared by several folders (fuzzing.py) import by module name
sys.path.insert(0, str(Path(__file__).parent))

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# modules this process's collection skipped whole (pytest.importorskip at import)
_SKIPPED_MODULES: set[str] = set()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped and report.nodeid.endswith(".py"):
        _SKIPPED_MODULES.add(report.nodeid)


@pytest.fixture
def collected_files(request: pytest.FixtureRequest) -> set[str]:
    """Files (rootdir-relative) that this process's own collection yielded an item from, or
    skipped whole at import: under ``pytest -n 2`` every worker collects every test."""
    return {item.nodeid.split("::", 1)[0] for item in request.session.items} | _SKIPPED_MODULES


def pytest_configure(config: pytest.Config) -> None:
    """Before any test process starts a Ray: the Ray token this machine's clusters use.

    A new local ``ray.init()`` turns token authentication on and writes
    ``~/.ray/auth_token`` when there is none. Under ``pytest -n 2`` one worker's Ray could
    write it while the other had just started the 3-node cluster of test_multinode without
    a token; that worker's driver then joined with the token and Ray cancelled every actor.
    The controller (no ``workerinput``) makes the token first, as Ray itself would, so every
    process of the session decides the same way.
    """
    if hasattr(config, "workerinput") or os.environ.get("RAY_AUTH_MODE"):
        return
    try:
        from ray._private.authentication import authentication_token_setup as auth
    except Exception:  # no ray, or a Ray without token authentication
        return
    if not auth.AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True):
        auth.generate_and_save_token()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Real graphs: ``$GRAPHSHARD_SHARED_DATA`` or ``../shared/data``; skips if absent."""
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


@pytest.fixture(scope="session")
def cora(shared_file):
    """Cora (gnn-benchmark npz): 2708 nodes, directed citation entries, features, labels."""
    import numpy as np
    import scipy.sparse as sp

    import graphshard as gs

    z = np.load(shared_file("planetoid", "npz_shchur", "cora.npz"), allow_pickle=False)
    adj = sp.csr_matrix((z["adj_data"], z["adj_indices"], z["adj_indptr"]),
                        shape=tuple(z["adj_shape"])).tocoo()
    feat = sp.csr_matrix((z["attr_data"], z["attr_indices"], z["attr_indptr"]),
                         shape=tuple(z["attr_shape"])).toarray().astype(np.float32)
    g = gs.graph((adj.row, adj.col), num_nodes=adj.shape[0])
    g.ndata["feat"] = feat
    g.ndata["label"] = z["labels"].astype(np.int64)
    g.edata["weight"] = adj.data.astype(np.float32)
    return g


@pytest.fixture(scope="session")
def acm(shared_file):
    """HGB ACM as a heterograph (:func:`graphshard.datasets.load_hgb`): 4 node types, 8 link
    types, paper features (the only ones read), labels and HGB's masks on paper."""
    from graphshard.datasets import load_hgb

    return load_hgb(shared_file("hgb", "ACM.zip"), features=["paper"]).graph


@pytest.fixture(scope="session")
def ray_cluster():
    """One local 2-CPU Ray for the whole session (started on first use)."""
    ray = pytest.importorskip("ray", reason="needs ray (pip install 'graphshard[ray]')")
    started = not ray.is_initialized()
    if started:
        from graphshard.runtime.ray import init_ray  # a local Ray on loopback only

        init_ray(ray, num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
