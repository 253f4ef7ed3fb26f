"""load_hgb: HGB's ACM and DBLP (counts from ../shared/data/hgb/README.md), a tiny
hand-written dataset (single- and multi-label, folder and zip), errors naming file and line,
and seeded mutation fuzzing."""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fuzzing import mutate_json, mutate_text, run_fuzz
from graphshard.datasets import load_hgb
from graphshard.errors import FormatError, ValidationError

INFO = {"node.dat": {"node type": {"0": "movie", "1": "actor"}},
        "link.dat": {"link type": {"0": {"start": 1, "end": 0, "meaning": "actor-movie"},
                                   "1": {"start": 0, "end": 1, "meaning": "movie-actor"}}},
        "label.dat": {"node type": {"0": {"0": "drama", "1": "comedy", "2": "action"}}}}
# movies 0-4 with 2 features, actors 5-7 without; actor 7 listed before actor 5
NODES = ("0\tm0\t0\t1,0\n1\tm1\t0\t0,1\n2\tm2\t0\t0.5,0.25\n3\tm3\t0\t1,1\n4\tm4\t0\t0,0\n"
         "7\ta7\t1\n5\ta5\t1\n6\ta6\t1\n")
LINKS = "5\t0\t0\t1.0\n6\t1\t0\t1.0\n7\t3\t0\t1.0\n0\t5\t1\t1.0\n3\t7\t1\t1.0\n"
TRAIN = "0\tm0\t0\t0\n1\tm1\t0\t1\n2\tm2\t0\t2\n3\tm3\t0\t0\n"
TEST = "4\tm4\t0\t1\n"


def write(folder: Path, **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    base = {"info.dat": json.dumps(INFO), "node.dat": NODES, "link.dat": LINKS,
            "label.dat": TRAIN, "label.dat.test": TEST}
    for name, text in {**base, **files}.items():
        (folder / name).write_text(text)
    return folder


def test_acm(shared_file):
    ds = load_hgb(shared_file("hgb", "ACM.zip"))
    g = ds.graph
    assert (ds.name, ds.target, ds.num_classes, ds.multilabel) == ("ACM", "paper", 3, False)
    assert {t: g.num_nodes(t) for t in g.ntypes} == {"paper": 3025, "author": 5959,
                                                      "subject": 56, "term": 1902}
    counts = {et[1]: g.num_edges(et) for et in g.canonical_etypes}
    assert counts == {"paper2cite2paper": 5343, "paper2ref2paper": 5343,
                      "paper2author": 9949, "author2paper": 9949, "paper2subject": 3025,
                      "subject2paper": 3025, "paper2term": 255619, "term2paper": 255619}
    shapes = {t: g.nodes[t].data["feat"].shape for t in g.ntypes if "feat" in g.nodes[t].data}
    assert shapes == {"paper": (3025, 1902), "author": (5959, 1902), "subject": (56, 1902)}
    d = g.nodes["paper"].data
    assert (d["train_mask"].sum(), d["val_mask"].sum(), d["test_mask"].sum()) == (726, 181, 1059)
    assert not (d["train_mask"] & d["test_mask"]).any()
    labelled = d["train_mask"] | d["val_mask"] | d["test_mask"]
    assert np.array_equal(d["label"] >= 0, labelled) and d["label"].max() == 2
    assert ds.class_names == ("database", "wireless communication", "data mining")


def test_dblp_without_features(shared_file):
    ds = load_hgb(shared_file("hgb", "DBLP.zip"), features=["term"])
    g = ds.graph
    assert (ds.target, ds.num_classes) == ("author", 4)
    assert {t: g.num_nodes(t) for t in g.ntypes} == {"author": 4057, "paper": 14328,
                                                      "term": 7723, "venue": 20}
    assert sum(g.num_edges(et) for et in g.canonical_etypes) == 239566
    assert g.num_edges(("paper", "paper2venue", "venue")) == 14328
    assert [t for t in g.ntypes if "feat" in g.nodes[t].data] == ["term"]
    d = g.nodes["author"].data
    assert d["train_mask"].sum() + d["val_mask"].sum() == 1217 and d["test_mask"].sum() == 1420
    full = load_hgb(shared_file("hgb", "DBLP.zip"), features=False,
                    test_file="label.dat.test_full").graph.nodes["author"].data
    assert full["test_mask"].sum() == 2840 and (full["test_mask"] & d["test_mask"]).sum() == 1420


def test_tiny_folder_and_zip_agree(tmp_path):
    folder = write(tmp_path / "TINY")
    with zipfile.ZipFile(tmp_path / "TINY.zip", "w") as zf:
        for p in folder.iterdir():
            zf.write(p, f"TINY/{p.name}")
    a, b = load_hgb(folder, val_ratio=0.25, seed=1), load_hgb(tmp_path / "TINY.zip",
                                                              val_ratio=0.25, seed=1)
    for ds in (a, b):
        g = ds.graph
        assert ds.name == "TINY" and g.ntypes == ["movie", "actor"]
        assert g.nodes["movie"].data["feat"].tolist() == [[1, 0], [0, 1], [0.5, 0.25], [1, 1],
                                                          [0, 0]]
        # actors in HGB-ID order: 5 -> 0, 6 -> 1, 7 -> 2
        assert g.edges[("actor", "actor2movie", "movie")] is not None
        src, dst = g.edges(etype=("actor", "actor2movie", "movie"))
        assert src.tolist() == [0, 1, 2] and dst.tolist() == [0, 1, 3]
        d = g.nodes["movie"].data
        assert d["label"].tolist() == [0, 1, 2, 0, 1]
        assert d["val_mask"].sum() == 1 and d["train_mask"].sum() == 3
        assert d["test_mask"].tolist() == [False, False, False, False, True]
    assert np.array_equal(a.graph.nodes["movie"].data["val_mask"],
                          b.graph.nodes["movie"].data["val_mask"])
    other = load_hgb(folder, val_ratio=0.25, seed=2).graph.nodes["movie"].data["val_mask"]
    assert other.sum() == 1  # another seed, another (seeded) validation node


def test_multilabel(tmp_path):
    folder = write(tmp_path / "ML", **{"label.dat": "0\t\t0\t0,2\n1\t\t0\t1\n2\t\t0\t\n"
                                       .replace("\t\t0\t\n", "\t\t0\t2\n")})
    ds = load_hgb(folder, val_ratio=0.0)
    assert ds.multilabel and ds.num_classes == 3
    label = ds.graph.nodes["movie"].data["label"]
    assert label.dtype == np.int8 and label.tolist() == [[1, 0, 1], [0, 1, 0], [0, 0, 1],
                                                         [0, 0, 0], [0, 1, 0]]
    with pytest.raises(ValidationError, match="several classes, but multilabel=False"):
        load_hgb(folder, multilabel=False)
    assert load_hgb(write(tmp_path / "SL"), multilabel=True).graph.nodes["movie"].data[
        "label"].shape == (5, 3)


@pytest.mark.parametrize(("name", "text", "match"), [
    ("node.dat", NODES.replace("1\tm1\t0\t0,1", "1\tm1\t0"), r"node\.dat: 2 of the 5|all or"),
    ("node.dat", NODES.replace("2\tm2\t0\t0.5,0.25", "2\tm2"), r"node\.dat:3: expected 3 or 4"),
    ("node.dat", NODES.replace("0.5,0.25", "0.5"), r"node\.dat:3: 1 feature values"),
    ("node.dat", NODES.replace("0.5,0.25", "0.5,x"), r"node\.dat:3: bad feature value"),
    ("node.dat", NODES.replace("6\ta6\t1", "6\ta6\t9"), r"node\.dat:8: node type 9"),
    ("node.dat", NODES.replace("6\ta6", "5\ta6"), r"node\.dat:8: node id 5 appears more"),
    ("link.dat", LINKS.replace("6\t1\t0", "6\t1\t1"), r"link\.dat:2: link type 1 joins"),
    ("link.dat", LINKS.replace("6\t1\t0", "6\t1\t4"), r"link\.dat:2: link type 4 is not"),
    ("link.dat", LINKS.replace("7\t3", "7\tx"), r"link\.dat:3: expected 'src"),
    ("label.dat", TRAIN.replace("2\tm2\t0\t2", "6\ta6\t1\t2"), r"label\.dat:3: labels of node"),
    ("label.dat", TRAIN.replace("2\tm2\t0\t2", "2\tm2\t0\tz"), r"label\.dat:3: class 'z'"),
    ("label.dat.test", "0\tm0\t0\t1\n", r"node 0 of 'movie' is labelled twice"),
    ("info.dat", "{}", r"info\.dat: expected HGB's JSON"),
])
def test_errors_name_file_and_line(tmp_path, name, text, match):
    with pytest.raises(FormatError, match=match) as info:
        load_hgb(write(tmp_path / "BAD", **{name: text}))
    assert str(tmp_path / "BAD") in str(info.value)


def test_missing_files(tmp_path):
    with pytest.raises(FormatError, match="no such HGB file"):
        load_hgb(tmp_path / "nope.zip")
    folder = write(tmp_path / "T")
    (folder / "label.dat.test").unlink()
    with pytest.raises(FormatError, match=r"label\.dat\.test: missing"):
        load_hgb(folder)
    assert load_hgb(folder, test_file=None).graph.nodes["movie"].data["test_mask"].sum() == 0
    (tmp_path / "junk.zip").write_bytes(b"PK not really")
    with pytest.raises(FormatError, match="not a readable zip"):
        load_hgb(tmp_path / "junk.zip")


def test_fuzz_hgb(tmp_path):
    files = {"info.dat": json.dumps(INFO), "node.dat": NODES, "link.dat": LINKS,
             "label.dat": TRAIN, "label.dat.test": TEST}

    def case(rng: random.Random, folder: Path) -> Path:
        name = rng.choice(sorted(files))
        text = (json.dumps(mutate_json(rng, INFO)).encode() if name == "info.dat"
                and rng.random() < 0.5 else mutate_text(rng, files[name]))
        write(folder)
        (folder / name).write_bytes(text)
        return folder

    def check(ds) -> str | None:
        g = ds.graph
        for et in g.canonical_etypes:
            for ids, nt in zip(g.edges(etype=et), (et[0], et[2]), strict=True):
                if ids.size and (ids.min() < 0 or ids.max() >= g.num_nodes(nt)):
                    return f"{et}: an ID out of range"
        d = g.nodes[ds.target].data
        if any(len(v) != g.num_nodes(ds.target) for v in d.values()):
            return "a node column of the wrong length"
        labelled = (d["label"] >= 0) if d["label"].ndim == 1 else d["label"].any(1)
        mask = d["train_mask"] | d["val_mask"] | d["test_mask"]
        return None if ds.multilabel or np.array_equal(labelled, mask) else "labels vs masks"

    run_fuzz("hgb", case, load_hgb, tmp_path, check=check, seed=11)


def test_features_of_named_types_as_a_string(tmp_path):
    g = load_hgb(write(tmp_path / "TINY"), features="movie").graph
    assert [t for t in g.ntypes if "feat" in g.nodes[t].data] == ["movie"]


@pytest.mark.parametrize("info_names", [True, False])
def test_class_ids_are_bounded_by_the_labels(tmp_path, info_names):
    """Issue 41 item 2: one multi-label line ``1,65535`` made an N x 65536 label matrix."""
    info = json.loads(json.dumps(INFO))
    if not info_names:
        del info["label.dat"]
    folder = write(tmp_path / "d", **{"info.dat": json.dumps(info),
                                      "label.dat": TRAIN.replace("\t2\n", "\t1,65535\n")})
    with pytest.raises(FormatError, match=r"label\.dat:3: class 65535 implies 65,536 classes, "
                       r"but info\.dat names [03] and the label files hold 6 class labels; at "
                       r"most max\(named, held\) = 6") as info_err:
        load_hgb(folder)
    assert info_err.value.field == "class"


def test_special_files_are_refused(tmp_path):
    """A FIFO in the folder would block open(); /dev/zero as the zip never ends."""
    import os

    from fuzzing import call_releasing_fifos

    folder = write(tmp_path / "d")
    (folder / "link.dat").unlink()
    os.mkfifo(folder / "link.dat")
    with pytest.raises(FormatError, match=r"link\.dat: is a FIFO, not a regular file"):
        call_releasing_fifos(lambda: load_hgb(folder), [folder / "link.dat"])
    (tmp_path / "z.zip").symlink_to("/dev/zero")
    with pytest.raises(FormatError, match=r"z\.zip: is a character device, not a regular"):
        load_hgb(tmp_path / "z.zip")


def _info_with_meanings(*meanings: tuple[int, int, str]) -> str:
    info = json.loads(json.dumps(INFO))
    info["link.dat"]["link type"] = {str(k): {"start": s, "end": e, "meaning": m}
                                     for k, (s, e, m) in enumerate(meanings)}
    return json.dumps(info)


def test_arrow_meanings_become_relation_names_without_a_gt(tmp_path):
    """Issue 43: IMDB's ``movie->director`` became ``movie2>director``, against the
    documented rule (``-`` -> ``2``); the arrow is one separator."""
    info = _info_with_meanings((1, 0, "actor->movie"), (0, 1, "movie-->actor"))
    g = load_hgb(write(tmp_path / "IMDB", **{"info.dat": info})).graph
    assert sorted(g.canonical_etypes) == [("actor", "actor2movie", "movie"),
                                          ("movie", "movie2actor", "actor")]
    assert g.edges(etype="actor2movie")[1].tolist() == [0, 1, 3]


def test_link_types_becoming_one_relation_are_named(tmp_path):
    info = _info_with_meanings((1, 0, "actor-movie"), (0, 1, "movie->actor"),
                               (0, 1, "movie-actor"))
    with pytest.raises(FormatError, match=r"info\.dat: link types 1 \('movie->actor'\) and 2 "
                       r"\('movie-actor'\) both become relation \('movie', 'movie2actor', "
                       r"'actor'\)") as err:
        load_hgb(write(tmp_path / "TWO", **{"info.dat": info}))
    assert err.value.field == "link type" and err.value.value == 2
