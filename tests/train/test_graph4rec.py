"""Graph4Rec's config (seed 004) through ``graphshard train``: the seed's own block on PGL's
toy files, the files' node IDs in the dump, PGL metapath names, the losses, the sparse
optimizers, sage_mode, slot features and weighted sampling."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("yaml", reason="needs pyyaml")
import torch
from click.testing import CliRunner

from graphshard.cli import cli
from graphshard.io.pgl import read_pgl
from graphshard.sampling import parse_metapath
from graphshard.store import as_store
from graphshard.train import train_from_config, train_walk_embedding, validate_config
from graphshard.train.graph4rec import G4R_KEYS
from graphshard.train.kernels import adam_rows, pair_loss_grads

SEED_YAML = Path(__file__).parent / "data" / "graph4rec_seed.yaml"
TOY = ("format-pgl-graph4rec-toy",)


def _file_ids(path: Path, ntype: str) -> list[int]:
    return sorted({int(line.split("\t")[1]) for line in path.read_text().splitlines()
                   if line.split("\t")[0] == ntype})


def _toy_config(tmp_path: Path, shared: Path, text: str) -> Path:
    cfg = tmp_path / "g4r.yaml"
    cfg.write_text(text.replace("{toy}", str(shared)))
    return cfg


def _seed_config(tmp_path: Path, toy: Path, days: list[str], newest: str | None) -> Path:
    """The seed's block with its routine training over ``days`` (dated folders holding PGL's
    toy files) and, when given, another ``newest_time``."""
    for day in days:
        (tmp_path / "data" / day).mkdir(parents=True)
        for name in ("u2click2i.txt", "u2buy2i.txt", "node_types.txt"):
            (tmp_path / "data" / day / name).symlink_to(toy / name)
    text = SEED_YAML.read_text() + f"graph_data_local_path: {tmp_path / 'data'}\n"
    if newest is not None:
        text = text.replace("newest_time: 20230904/00", f"newest_time: {newest}")
    cfg = tmp_path / "g4r.yaml"
    cfg.write_text(text)
    return cfg


def test_seed_config_runs_and_dumps_the_files_node_ids(tmp_path, shared_file, caplog):
    """The seed's routine training (daily from 20230814/00) over two days of toy data, with
    its sage_mode, gcl_loss: simgcl_loss and hcl: True."""
    toy = shared_file(*TOY)
    days = ["20230814/00", "20230815/00"]
    cfg = _seed_config(tmp_path, toy, days, newest="20230815/00")
    result = CliRunner().invoke(cli, ["train", str(cfg)])
    assert result.exit_code == 0, result.output
    # the seed's 3 epochs per period, counted from 0 as everywhere
    assert result.output.count("epoch 2: loss") == 2 and "epoch 3: loss" not in result.output
    assert "trained 2 period(s), 20230814/00 to 20230815/00 (newest_time" in result.output
    # the PS keys and auto_shard are ignored with their reason; nothing else is
    assert "'gpups_memory_allocated_rate'" in caplog.text and "GPU parameter server" in caplog.text
    assert "'auto_shard'" in caplog.text and "graphshard partition" in caplog.text
    for key in ("'sage_mode'", "'train_mode'", "'gcl_loss'", "'hcl'", "'newest_time'"):
        assert key not in caplog.text
    for day in days:
        out = tmp_path / "output" / day
        for t in ("u", "i"):
            lines = (out / f"{t}.txt").read_text().splitlines()
            ids = [int(line.split("\t")[0]) for line in lines]
            assert ids == _file_ids(toy / "node_types.txt", t)  # 1001..., not 0..143
            emb = np.load(out / f"{t}.npy")
            assert emb.shape == (len(ids), 100) and np.isfinite(emb).all()
            np.testing.assert_allclose([float(v) for v in lines[0].split("\t")[1].split()],
                                       emb[0], rtol=1e-5, atol=1e-6)
            tensors, _ = gs.storage.tensorfile.load_tensors(out / f"{t}.safetensors")
            assert tensors["src_node___id"].tolist() == ids
            np.testing.assert_array_equal(tensors["src_node___emb"], emb)
        assert (out / "model").is_dir()  # save_model_interval: the last epoch is saved
    # the second day went on from the first: not the same tables
    assert not np.allclose(np.load(tmp_path / "output" / days[0] / "u.npy"),
                           np.load(tmp_path / "output" / days[1] / "u.npy"))


def test_the_seed_block_as_written_names_its_first_missing_day(tmp_path, shared_file):
    """newest_time 20230904/00 asks for 22 daily folders; with two, the third is named."""
    cfg = _seed_config(tmp_path, shared_file(*TOY), ["20230814/00", "20230815/00"], None)
    with pytest.raises(gs.errors.ConfigError, match=r"folder of period 20230816/00 is missing"):
        validate_config(cfg)


def test_the_seed_block_keys_are_all_in_the_table():
    keys = [line.split(":")[0].strip() for line in SEED_YAML.read_text().splitlines()
            if line and not line.startswith("#")]
    assert len(keys) == 56
    assert [k for k in keys if k not in G4R_KEYS] == []
    assert {k for k in keys if G4R_KEYS[k][0] == "ignored"} >= {
        "gpups_memory_allocated_rate", "train_storage_mode", "auto_shard", "num_part"}
    assert {k for k in keys if G4R_KEYS[k][0] == "used"} >= {
        "gcl_loss", "hcl", "train_mode", "start_time", "time_delta", "newest_time"}
    assert G4R_KEYS["hadoop_shard"][0] == "refused"


def test_docs_table_lists_every_key():
    """docs/graph4rec.md's key table says for every key what G4R_KEYS (and the warning) says."""
    doc = (Path(__file__).parents[2] / "docs" / "graph4rec.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (?:yes|) \| (\w+) \| (.*) \|$", doc, re.MULTILINE)
    assert {k: (status, why) for k, status, why in rows} == G4R_KEYS


FLOW = """\
etype2files: "u2click2i:u2click2i_with_weight.txt,u2buy2i:u2buy2i_with_weight.txt"
ntype2files: "u:node_types_with_features.txt,i:node_types_with_features.txt"
graph_data_local_path: {toy}
symmetry: True
meta_path: "u2click2i-i2click2u"
excluded_train_pair: "u2u;i2i"
infer_node_type: "u"
walk_len: 6
walk_times: 2
win_size: 2
neg_num: 3
emb_size: 8
epochs: 2
batch_size: 1024
sample: 0
need_dump_walk: True
output_path: out
"""


def test_config_flow_keys(tmp_path, shared_file):
    toy = shared_file(*TOY)
    cfg = _toy_config(tmp_path, toy, FLOW)
    res = train_from_config(cfg)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["u.npy", "u.txt", "walks.txt"]
    assert res.embeddings["i"].shape == (155, 8)
    walks = [line.split() for line in (out / "walks.txt").read_text().splitlines()]
    u_ids = set(map(str, _file_ids(toy / "node_types.txt", "u")))
    i_ids = set(map(str, _file_ids(toy / "node_types.txt", "i")))
    assert len(walks) == 2 * 2 * 144  # 2 epochs x walk_times x users
    assert all(w[0] in u_ids and all(x in i_ids for x in w[1::2]) for w in walks)
    # excluded_train_pair "u2u;i2i": only user-item pairs, so fewer than with every pair
    full = train_from_config(_toy_config(tmp_path, toy, FLOW.replace(
        'excluded_train_pair: "u2u;i2i"', 'excluded_train_pair: ""')))
    assert 0 < res.num_pairs[0] < full.num_pairs[0]
    # need_inference false: the tables only
    cfg.write_text(cfg.read_text().replace("output_path: out", "output_path: o2\n"
                                           "need_inference: false\nneed_dump_walk: false"))
    train_from_config(cfg)
    assert sorted(p.name for p in (tmp_path / "o2").iterdir()) == ["u.npy"]


@pytest.mark.parametrize("extra", [
    "loss_type: hinge\nmargin: 1.0\n",
    "loss_type: nce\nsparse_type: shared_adam\nsparse_lr: 0.01\n",
    "sage_mode: true\nsage_layer_type: LightGCN\nuse_degree_norm: true\nsamples: [3, 2]\n"
    "infer_samples: [4, 4]\n",
    "sage_mode: true\nsage_layer_type: GraphSAGE\nsage_act: tanh\nweighted_sample: true\n"
    "return_weight: true\nsamples: [2]\ninfer_samples: [3]\ndense_lr: 0.01\n",
    "slots: ['1', '2']\nsoftsign: true\nslot_feature_lr: 0.05\ninit_range: 0.1\n",
])
def test_model_options_learn(tmp_path, shared_file, extra):
    toy = shared_file(*TOY)
    cfg = _toy_config(tmp_path, toy, FLOW.replace("need_dump_walk: True\n", "")
                      .replace("epochs: 2", "epochs: 3") + extra)
    res = train_from_config(cfg)
    assert res.losses[-1] < res.losses[0] and np.isfinite(res.losses).all()
    assert res.embeddings["u"].shape == (144, 8)
    assert np.isfinite(res.embeddings["u"]).all()


def test_metapath_names_resolve_against_the_graph():
    g = gs.heterograph({("user", "click", "item"): ([0], [0]),
                        ("item", "click", "user"): ([0], [0]),
                        ("user", "buy", "item"): ([0], [0])})
    st = as_store(g)
    assert parse_metapath(st, "u2click2i-i2click2u", 5) == [("user", "click", "item"),
                                                           ("item", "click", "user")]
    assert parse_metapath(st, "i2u-u2buy2i", 3)[1] == ("user", "buy", "item")
    with pytest.raises(gs.ValidationError, match=r"'u2i' is ambiguous: it matches \[\('user', "
                       r"'click', 'item'\), \('user', 'buy', 'item'\)\]"):
        parse_metapath(st, "u2i-i2u", 5)
    with pytest.raises(gs.ValidationError, match="unknown edge type 'u2view2i': read as PGL's "
                       "'u' -> 'i' by relation 'view', it matches none"):
        parse_metapath(st, "u2view2i-i2u", 5)


def test_pgl_metapaths_on_pgl_files(shared_file):
    g = read_pgl({"u2click2i": shared_file(*TOY, "u2click2i.txt"),
                  "u2buy2i": shared_file(*TOY, "u2buy2i.txt")}, symmetry=True)
    res = train_walk_embedding(g, metapath="u2click2i-i2click2u;i2buy2u-u2buy2i", walk_len=4,
                               walk_times=1, win_size=1, neg_num=1, emb_size=4, seed=0)
    assert res.num_pairs[0] > 0 and set(res.embeddings) == {"u", "i"}


@pytest.mark.parametrize(("loss_type", "kind"), [("sigmoid", 0), ("hinge", 1), ("nce", 2)])
def test_pair_loss_kernel_matches_torch(loss_type, kind):
    rng = np.random.default_rng(0)
    u = rng.normal(size=(9, 5)).astype(np.float32)
    src, dst = np.array([0, 1, 2, 0]), np.array([3, 4, 5, 6])
    neg = rng.integers(0, 9, size=(4, 3))
    grad = np.zeros_like(u)
    loss = pair_loss_grads(u, src, dst, neg, kind, np.float32(1.5), grad)
    t = torch.from_numpy(u).requires_grad_(True)
    pos = (t[src] * t[dst]).sum(-1, keepdim=True)
    ng = torch.einsum("bd,bkd->bk", t[src], t[torch.from_numpy(neg)])
    f = torch.nn.functional
    ref = {"sigmoid": (f.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
                       + f.binary_cross_entropy_with_logits(ng, torch.zeros_like(ng))) / 2,
           "hinge": torch.relu(1.5 - pos + ng).mean(),
           "nce": f.cross_entropy(torch.cat([pos, ng], 1), torch.zeros(4, dtype=torch.long))
           }[loss_type]
    ref.backward()
    assert loss == pytest.approx(float(ref.detach()), rel=1e-5)
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_sparse_adam_rows_equal_torch_adam_on_touched_rows():
    rng = np.random.default_rng(1)
    w0 = rng.normal(size=(6, 3)).astype(np.float32)
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    ids = np.array([1, 4])
    ref = torch.from_numpy(w0[ids].copy()).requires_grad_(True)
    opt = torch.optim.Adam([ref], lr=0.05)
    for step in range(1, 4):
        g = rng.normal(size=(2, 3)).astype(np.float32)
        adam_rows(w, m, v, ids, g, np.float32(0.05), np.float32(0.9), np.float32(0.999),
                  np.float32(1e-8), np.float32(step))
        opt.zero_grad()
        ref.grad = torch.from_numpy(g)
        opt.step()
    np.testing.assert_allclose(w[ids], ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w[[0, 2, 3, 5]], w0[[0, 2, 3, 5]])  # lazy: untouched rows


def test_weighted_sample_never_takes_a_zero_weight_edge():
    g = gs.graph(([0, 0, 1, 2, 3, 3], [1, 2, 3, 3, 0, 2]))
    g.edges["_E"].data["weight"] = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 0.0], np.float32)
    seen: list[np.ndarray] = []
    train_walk_embedding(g, walk_len=6, walk_times=20, win_size=1, neg_num=1, emb_size=4,
                         seed=0, weighted_sample=True, sage_mode=True, samples=[1], subsample=0,
                         infer_samples=[1], on_walks=lambda e, w: seen.append(w.traces))
    traces = np.concatenate(seen)
    steps = {(a, b) for row in traces.tolist() for a, b in itertools.pairwise(row)}
    assert (0, 2) not in steps and (3, 2) not in steps and (0, 1) in steps
    # unweighted, the zero-weight edges are walked
    seen.clear()
    train_walk_embedding(g, walk_len=6, walk_times=20, win_size=1, neg_num=1, emb_size=4,
                         seed=0, subsample=0, on_walks=lambda e, w: seen.append(w.traces))
    steps = {(a, b) for row in np.concatenate(seen).tolist()
             for a, b in itertools.pairwise(row)}
    assert (0, 2) in steps


def test_partitioned_graph_keeps_the_files_node_ids(tmp_path, shared_file):
    """Partitions carry read_pgl's node_id feature in their reshuffled order, so a run on
    them (here the assembled partitions; a DistGraph serves the same rows) knows the files'
    ID of every table row."""
    g = read_pgl({"u2click2i": shared_file(*TOY, "u2click2i.txt")}, symmetry=True)
    gs.partition_graph(g, "toy", 2, str(tmp_path), part_method="random")
    whole = gs.distributed.assemble_graph(tmp_path / "toy.json")
    res = train_walk_embedding(whole, metapath="u2click2i-i2click2u", walk_len=4,
                               walk_times=1, win_size=1, neg_num=1, emb_size=4, seed=0)
    for t in ("u", "i"):
        ids = res.node_ids[t]
        np.testing.assert_array_equal(ids, np.asarray(whole.nodes[t].data["node_id"]))
        assert sorted(ids.tolist()) == np.asarray(g.nodes[t].data["node_id"]).tolist()
        assert ids.tolist() != sorted(ids.tolist())  # reshuffled rows, mapped back by node_id


def test_adam_model_run_resumes_from_its_checkpoint(tmp_path):
    """Lazy Adam's moments and step count are checkpointed with the tables: a stopped
    hinge-loss run resumes as the uninterrupted one."""
    g = gs.datasets.from_spec("sbm:nodes=100,edges=500,blocks=2")
    kw = dict(walk_len=5, walk_times=1, win_size=2, neg_num=2, emb_size=4, epochs=2, seed=0,
              optimizer="adam", loss_type="hinge")
    full = train_walk_embedding(g, **kw)
    first = train_walk_embedding(g, **{**kw, "epochs": 1}, checkpoint_dir=tmp_path)
    rest = train_walk_embedding(g, **kw, checkpoint_dir=tmp_path)
    assert rest.step_losses[:len(first.step_losses)] == first.step_losses
    assert rest.step_losses == full.step_losses
    np.testing.assert_array_equal(rest.embeddings["_N"], full.embeddings["_N"])


@pytest.mark.parametrize("layer", ["GraphSAGE", "LightGCN"])
def test_sage_mode_embeddings_do_not_depend_on_the_inference_batch(sbm_graph, layer):
    """Issue 44 item 3: inference runs layer-wise over the whole graph, each node's
    neighbours keyed by the seed and the node, so infer_batch_size changes nothing (it
    changed the dumped embeddings by up to 0.10 when each batch sampled its own subgraph)."""
    kw = dict(walk_len=4, walk_times=1, win_size=2, neg_num=2, emb_size=8, epochs=1, seed=2,
              sage_mode=True, sage_layer_type=layer, samples=[3, 2], infer_samples=[4, 3])
    runs = [train_walk_embedding(sbm_graph, **kw, infer_batch_size=b) for b in (7, 64, 100000)]
    for other in runs[1:]:
        assert other.step_losses == runs[0].step_losses
        np.testing.assert_array_equal(other.embeddings["_N"], runs[0].embeddings["_N"])
    assert np.isfinite(runs[0].embeddings["_N"]).all()
    assert np.abs(runs[0].embeddings["_N"]).sum() > 0
