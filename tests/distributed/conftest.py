"""Small partitioned graphs for the distributed tests, and DistGraphs over them."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

import graphshard as gs
from shop import shop_graph

BUCKET = "graphshard-test"
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture(scope="session")
def s3_endpoint():
    """``http://127.0.0.1:<port>`` of a moto S3 server with bucket :data:`BUCKET`; the
    environment points pyarrow at it (``AWS_ENDPOINT_URL`` and keys) for the session."""
    server_mod = pytest.importorskip(
        "moto.server", reason="needs moto's S3 server (pip install 'graphshard[test]')")
    import pyarrow.fs as pafs

    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    env = pytest.MonkeyPatch()
    for key, value in {**KEYS, "AWS_ENDPOINT_URL": endpoint}.items():
        env.setenv(key, value)
    pafs.S3FileSystem(endpoint_override=endpoint, allow_bucket_creation=True).create_dir(BUCKET)
    yield endpoint
    env.undo()
    server.stop()


@pytest.fixture
def s3_dir(s3_endpoint) -> str:
    """A new folder of the bucket (``s3://graphshard-test/<random>``)."""
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def s3_uri(s3_endpoint):
    """``s3_uri(folder)``: ``folder`` (``s3://bucket/...``) with the endpoint and keys in
    the URI, what a process without the environment variables opens (a Ray worker whose
    node started before the variables were set)."""

    def uri(folder: str) -> str:
        return (f"s3://testing:testing@{folder[5:]}?endpoint_override={s3_endpoint}"
                "&scheme=http&region=us-east-1")

    return uri


@dataclass
class Parted:
    config: str
    graph: gs.Graph
    nids: Any
    eids: Any
    whole: gs.Graph


def partition(g: gs.Graph, name: str, num_parts: int, out: str, **kw: Any) -> Parted:
    nids, eids = gs.partition_graph(g, name, num_parts, out, part_method="random",
                                    return_mapping=True, **kw)
    cfg = f"{out}/{name}.json"
    return Parted(cfg, g, nids, eids, gs.distributed.assemble_graph(cfg))


@pytest.fixture(scope="session")
def shop_parts(tmp_path_factory) -> dict[int, Parted]:
    g = shop_graph()
    return {k: partition(g, f"shop{k}", k, str(tmp_path_factory.mktemp(f"shop{k}")))
            for k in (1, 2, 4)}


@pytest.fixture(scope="session")
def shop_dist(ray_cluster, shop_parts):
    """DistGraphs over 1, 2 and 4 servers (all remote), closed at the end of the session."""
    graphs = {k: gs.distributed.DistGraph(p.config, colocate=())
              for k, p in shop_parts.items()}
    yield graphs
    for dg in graphs.values():
        dg.close()


@pytest.fixture(scope="session")
def make_parts():
    """``make_parts(seed, name, num_parts, out)``: a fresh partitioned shop graph."""

    def make(seed: int, name: str, num_parts: int, out: str) -> Parted:
        return partition(shop_graph(seed), name, num_parts, out)

    return make


def pytest_collection_modifyitems(session, config, items):
    """The multi-node tests run first in the session: their 3-node cluster needs a test
    process that has joined no Ray yet, and the shared ``ray_cluster`` stays up once
    started (a process joins one Ray at a time)."""
    first = [item for item in items if item.path.name == "test_multinode.py"]
    if first:
        items[:] = first + [item for item in items if item.path.name != "test_multinode.py"]
