"""The file-system layer without a server: ``file://`` URIs, local paths and refusals."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import PartitionNotFoundError, ValidationError
from graphshard.partition.config import location, read_config
from graphshard.storage import fsys


def test_file_uri_is_a_local_folder(cora, tmp_path):
    out = tmp_path / "parts"
    gs.partition_graph(cora, "cora", 2, f"file://{out}", part_method="hash")
    assert (out / "cora.json").is_file()  # written in place, nothing staged or copied
    cfg = read_config(f"file://{out}/cora.json")
    assert cfg.uri is None and cfg.path == out / "cora.json"
    assert location(cfg) == str(out / "cora.json")
    a = gs.load_partition(f"file://{out}/cora.json", 1)
    b = gs.load_partition(out / "cora.json", 1)
    np.testing.assert_array_equal(a[1]["_N/feat"], b[1]["_N/feat"])


def test_publish_folder_writes_the_config_last(tmp_path, monkeypatch):
    """Through a local pyarrow file system: the order of the writes and the marker."""
    staging = tmp_path / "stage"
    (staging / "part0").mkdir(parents=True)
    (staging / "part0" / "a.bin").write_bytes(b"abc")
    (staging / "g.json").write_text('{"node_map": {}, "graphshard": {}}')
    dest = fsys.open_location(f"file://{tmp_path}/dest")
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "old.json").write_text('{"node_map": {}, "graphshard": {}}')
    seen: list[tuple[str, list[str]]] = []
    real_upload, real_write = fsys.Location.upload, fsys.Location.write_bytes

    def upload(self, source):
        seen.append((self.name, dest.files()))
        real_upload(self, source)

    def write_bytes(self, data):
        seen.append((self.name, dest.files()))
        real_write(self, data)

    monkeypatch.setattr(fsys.Location, "upload", upload)
    monkeypatch.setattr(fsys.Location, "write_bytes", write_bytes)
    fsys.publish_folder(staging, dest, ["g.json"])
    names = [name for name, _ in seen]
    assert names == [".graphshard-incomplete", "a.bin", "g.json"]
    assert "old.json" not in seen[1][1]  # the old config went before any part file
    assert dest.files() == ["g.json", "part0/a.bin"]  # the marker is gone at the end


def test_bad_uris_are_clear_errors(tmp_path):
    with pytest.raises(ValidationError, match="ftp:// URI cannot be used here"):
        fsys.local_path("ftp://host/parts")
    with pytest.raises(ValidationError, match=r"nosuch://x/y: cannot open this URI"):
        fsys.open_location("nosuch://x/y")
    with pytest.raises(PartitionNotFoundError, match="not found"):
        fsys.open_location(f"file://{tmp_path}/none.json").read_bytes()
    with pytest.raises(PartitionNotFoundError):
        read_config(f"file://{tmp_path}/none.json")


def test_messages_never_show_keys():
    uri = "s3://AKIA:secret@bucket/p/g.json?endpoint_override=http://h:9&scheme=http"
    assert fsys.shown(uri) == "s3://bucket/p/g.json"
    loc = fsys.Location(None, "bucket/p/g.json", uri)
    assert str(loc.parent.child("part0/x")) == "s3://bucket/p/part0/x"
    assert loc.parent.child("part0/x").uri.endswith("/p/part0/x?endpoint_override=http://h:9"
                                                    "&scheme=http")


@pytest.mark.parametrize("path", ["/a/b", "/a//b/", "/a%20b/c+d", "", "/", "/a/./b",
                                  "/a/%2Fb", "/x/y.json"])
@pytest.mark.parametrize("user", ["", "key:secret@"])
def test_a_reused_object_store_file_system_reads_paths_as_pyarrow(path, user, monkeypatch):
    """An S3 file system is opened once per bucket, query and credentials, and each later
    URI's path is the one pyarrow's own ``from_uri`` gives."""
    pafs = pytest.importorskip("pyarrow.fs")
    monkeypatch.setattr(fsys, "_FILESYSTEMS", {})
    query = "?endpoint_override=http://127.0.0.1:9&scheme=http&region=us-east-1"
    first = fsys.open_location(f"s3://{user}bkt/first{query}")
    uri = f"s3://{user}bkt{path}{query}"
    loc = fsys.open_location(uri)
    assert loc.fs is first.fs  # reused
    assert loc.path == pafs.FileSystem.from_uri(uri)[1]
    other = fsys.open_location(f"s3://{user}bkt{path}?endpoint_override=http://127.0.0.1:8"
                               "&scheme=http&region=us-east-1")
    assert other.fs is not first.fs  # another endpoint: another file system
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "someone-else")
    assert fsys.open_location(uri).fs is not first.fs  # other credentials
