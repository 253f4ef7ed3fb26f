"""Graph4Rec's configuration keys (PaddlePaddle PGL) as ``graphshard train`` reads them.

A walk config (``task: walk``) is a Graph4Rec config: :data:`G4R_KEYS` maps every key
of Graph4Rec's config block (seed 004) to what graphshard does with it (``"used"``,
``"ignored"`` with a WARNING, or ``"refused"``: a ConfigError) and why.  A key in no
table is an error naming the closest known key (:func:`unknown_key_error`).  The graph
comes from the files the config names (:func:`read_config_graph`: ``etype2files``,
``ntype2files``, ``symmetry``, ``graph_data_local_path``) and the dump
(:func:`dump_embeddings`) keys every row by the node ID of those files.

Unstable API (issue 27).

Example:
    >>> G4R_KEYS["gpups_memory_allocated_rate"][0], G4R_KEYS["sage_mode"][0]
    ('ignored', 'used')
    >>> str(unknown_key_error("cfg.yaml", "epoch", ["epochs", "lr"], "walk"))
    "cfg.yaml: unknown key 'epoch' for task 'walk'; did you mean 'epochs'?"
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..storage.files import atomic_write
from ..storage.tensorfile import save_tensors

__all__ = ["G4R_KEYS", "SPARSE_TYPES", "WalkDump", "check_g4r_values", "dump_embeddings",
           "dumped_types", "node_ids", "read_config_graph", "unknown_key_error"]

logger = logging.getLogger(__name__)

#: Graph4Rec's ``sparse_type`` values and the optimizer of our tables they select.
SPARSE_TYPES = {"adagrad": "adagrad", "adagrad_v2": "adagrad", "shared_adam": "adam",
                "adam": "adam", "sgd": "sgd"}

_PS = "only means something on PGL's GPU parameter server (memory, passes, SSD tiers)"
_SHARD = ("PGL splits its input files into num_part part files for its graph servers; "
          "graphshard reads the files directly (the same graph), so this has no effect; to "
          "partition a graph for distributed training use graphshard partition --parts N")

#: ``{key: (status, what graphshard does)}``; status is ``"used"``, ``"ignored"`` (a
#: WARNING names the key and the reason) or ``"refused"`` (ConfigError when set).
G4R_KEYS: dict[str, tuple[str, str]] = {
    # data
    "etype2files": ("used", "edge files per edge type, read by graphshard.io.read_pgl; paths "
                    "relative to graph_data_local_path or the YAML's folder"),
    "ntype2files": ("used", "node files per node type (read_pgl); slot features come from "
                    "them"),
    "graph_data_local_path": ("used", "folder the etype2files / ntype2files paths are read "
                              "from (default: the YAML's folder)"),
    "graph_data_hdfs_path": ("refused", "HDFS input: copy the files locally and set "
                             "graph_data_local_path"),
    "symmetry": ("used", "adds every edge reversed, typed by PGL's inverse name "
                 "(u2click2i -> i2click2u)"),
    "excluded_train_pair": ("used", "node-type pairs ('u2u;i2i') not trained"),
    "infer_node_type": ("used", "node types dumped ('u;i'); default all"),
    "hadoop_shard": ("refused", "HDFS sharding of the input: use graphshard partition / chunk "
                     "(refused when true)"),
    "auto_shard": ("ignored", _SHARD),
    "num_part": ("ignored", _SHARD),
    # walks
    "meta_path": ("used", "PGL metapaths, ';'-separated; names resolved against the graph "
                  "(exact relation, or src2rel2dst / src2dst by node-type prefix)"),
    "win_size": ("used", "skip-gram half window; default 10, shrunk at random per centre "
                 "(random_window; the seed: 2)"),
    "neg_num": ("used", "negatives per pair, of the context's node type; default 5 (as the "
                "seed), drawn by degree ** 0.75 (neg_distribution)"),
    "walk_len": ("used", "nodes per walk; default 40 (the seed: 8)"),
    "walk_times": ("used", "walks per start node and epoch; default 80 (the seed: 10)"),
    # model
    "model_type": ("used", "accepted: WalkBasedModel, SageModel, GNNModel (one trainer; "
                   "sage_mode selects the encoder); other values refused"),
    "emb_size": ("used", "embedding width (also embed_size); default 128 (the seed: 100)"),
    "embed_size": ("used", "alias of emb_size"),
    "hidden_size": ("used", "must equal emb_size (Graph4Rec's rule); refused otherwise"),
    "sparse_type": ("used", "optimizer of the sparse tables: adagrad / adagrad_v2 -> Adagrad, "
                    "shared_adam / adam -> lazy Adam with one step count per table, sgd; unset "
                    "(the seed: adagrad_v2): word2vec's pair_sgd on a local graph with the "
                    "sigmoid loss and no model option, Adagrad otherwise (optimizer: auto)"),
    "sparse_lr": ("used", "rate of the sparse id tables (alias of lr); unset: 0.025 with "
                  "pair_sgd, decaying linearly, 0.1 otherwise (the seed: 0.1)"),
    "dense_lr": ("used", "Adam rate of GraphSAGE's dense layers"),
    "slot_feature_lr": ("used", "rate of the slot-feature tables"),
    "init_range": ("used", "tables start uniform in [-init_range, init_range]; unset (the "
                   "seed: 0.1): in [-0.5, 0.5) / sqrt(emb_size), word2vec's"),
    "loss_type": ("used", "sigmoid, hinge (with margin) or nce"),
    "margin": ("used", "margin of the hinge loss"),
    "softsign": ("used", "softsign on each node's input (id row + pooled slots)"),
    "gcl_loss": ("used", "simgcl_loss: SimGCL's contrastive loss (two views of the batch's "
                 "node representations with noise of norm 0.1, InfoNCE at temperature 0.2 "
                 "against neg_num shuffled nodes, weight 0.2) added to the pair loss; unset "
                 "or '': off"),
    "hcl": ("used", "Graph4Rec's hierarchical contrastive loss: each sampled neighbour edge's "
            "input embeddings (dot product x 5) against neg_num shuffled nodes, added with "
            "weight 1; needs sage_mode"),
    "sage_mode": ("used", "encode nodes with GNN layers over sampled neighbours; default "
                  "false (the seed: True)"),
    "sage_layer_type": ("used", "LightGCN or GraphSAGE"),
    "sage_alpha": ("used", "residual: alpha * input + (1 - alpha) * layer output"),
    "samples": ("used", "neighbours per hop in training"),
    "infer_samples": ("used", "neighbours per hop in inference"),
    "sage_act": ("used", "activation of GraphSAGE layers"),
    "use_degree_norm": ("used", "LightGCN sums scaled by 1/sqrt(deg(src) deg(dst)); default "
                        "false (the seed: True)"),
    "weighted_sample": ("used", "walks and neighbour sampling by the edge weight (the third "
                        "column of the edge files); default false (the seed: True)"),
    "return_weight": ("used", "sage layers scale neighbours by their edge weight"),
    "slots": ("used", "node features used as slot features (default: none); '1' matches "
              "read_pgl's feature 's_1'"),
    # flow
    "need_train": ("used", "false: dump warm_start_from's tables without training"),
    "need_inference": ("used", "false: write only the .npy tables, no text dump"),
    "dump_node_name": ("used", "name of the ID tensor in <ntype>.safetensors"),
    "dump_node_emb_name": ("used", "name of the embedding tensor in <ntype>.safetensors"),
    "need_dump_walk": ("used", "write the walks (file node IDs) to output_path/walks.txt"),
    "epochs": ("used", "passes; default 1 (the seed: 3)"),
    "batch_size": ("used", "pairs per step; default 512 (the seed: 50000)"),
    "infer_batch_size": ("used", "nodes per inference batch of slots; sage_mode infers "
                                  "layer-wise over the whole graph"),
    "save_model_interval": ("used", "checkpoint every N epochs and after the last, in "
                            "checkpoint_dir or output_path/model"),
    "output_path": ("used", "dump folder (default output/ beside the YAML when the config "
                    "names its files)"),
    "warm_start_from": ("used", "start from (or with need_train false, dump) saved tables"),
    "task_name": ("ignored", "a label of PGL's job scripts"),
    "chunk_num": ("ignored", _PS),
    "debug_mode": ("ignored", "PGL's GPU engine debug switch; use GRAPHSHARD_DEBUG=1 / -v"),
    "gpups_memory_allocated_rate": ("ignored", _PS),
    "train_storage_mode": ("ignored", _PS),
    "save_cache_frequency": ("ignored", _PS),
    "mem_cache_passid_num": ("ignored", _PS),
    "save_binary_mode": ("ignored", _PS),
    "need_shrink": ("ignored", _PS),
    "jupyter": ("ignored", "PGL notebook switch"),
    "version": ("ignored", "a label of PGL's config"),
    "train_mode": ("used", "online_train: routine training, one run per dated folder "
                   "graph_data_local_path/YYYYMMDD/HH, each starting from the previous "
                   "period's tables by node ID, dumped to output_path/YYYYMMDD/HH; other "
                   "values: one run"),
    "start_time": ("used", "the first period, YYYYMMDD/HH (online_train)"),
    "time_delta": ("used", "hours from one period to the next (online_train; 24: daily)"),
    "newest_time": ("used", "the last period trained, YYYYMMDD/HH, on the start_time + k * "
                    "time_delta grid (PGL writes it as its next period to load); unset: the "
                    "newest folder present, and the run ends there (no waiting)"),
}

_MODEL_TYPES = ("WalkBasedModel", "SageModel", "GNNModel")


def unknown_key_error(path: Any, key: str, known: Iterable[str], task: str) -> ConfigError:
    """A ConfigError for ``key``, naming the closest of ``known`` (difflib)."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = (f"; did you mean {close[0]!r}?" if close else
            "; docs/graph4rec.md lists the keys" if task == "walk" else
            f"; it reads {sorted(known)}")
    return ConfigError(f"{path}: unknown key {key!r} for task {task!r}{hint}", path=str(path),
                       field=key)


def check_g4r_values(cfg: dict[str, Any], path: Any) -> None:
    """Refuse the values graphshard cannot honour (refused keys set, unknown
    ``model_type`` / ``sparse_type``, ``hidden_size`` != ``emb_size``) and warn once about
    every ignored key with its reason."""
    for key, (status, why) in G4R_KEYS.items():
        if key in cfg and status == "refused" and cfg[key]:
            raise ConfigError(f"{path}: {key} is not supported: {why}", path=str(path),
                              field=key)
    if "model_type" in cfg and not (isinstance(cfg["model_type"], str)
                                    and cfg["model_type"] in _MODEL_TYPES):
        raise ConfigError(f"{path}: model_type must be one of {_MODEL_TYPES}, got "
                          f"{cfg['model_type']!r}", path=str(path), field="model_type")
    if "sparse_type" in cfg and not (isinstance(cfg["sparse_type"], str)
                                     and cfg["sparse_type"] in SPARSE_TYPES):
        raise ConfigError(f"{path}: sparse_type must be one of {sorted(SPARSE_TYPES)}, got "
                          f"{cfg['sparse_type']!r}", path=str(path), field="sparse_type")
    for a, b in (("lr", "sparse_lr"), ("emb_size", "embed_size")):
        if a in cfg and b in cfg and cfg[a] != cfg[b]:
            raise ConfigError(f"{path}: {a} ({cfg[a]}) and {b} ({cfg[b]}) name the same "
                              "setting; keep one", path=str(path), field=b)
    emb = cfg.get("emb_size", cfg.get("embed_size"))
    if "hidden_size" in cfg and emb is not None and int(cfg["hidden_size"]) != int(emb):
        raise ConfigError(f"{path}: hidden_size {cfg['hidden_size']} must equal emb_size "
                          f"{emb} (Graph4Rec's rule)", path=str(path), field="hidden_size")
    by_reason: dict[str, list[str]] = {}
    for k in cfg:
        if G4R_KEYS.get(k, ("",))[0] == "ignored":
            by_reason.setdefault(G4R_KEYS[k][1], []).append(k)
    if by_reason:
        logger.warning("%s: ignoring keys %s", path, "; ".join(
            f"{keys} ({why})" for why, keys in by_reason.items()))


def _file_spec(spec: Any, base: Path, key: str, path: Any) -> dict[str, list[Path]]:
    """``"type:file,type:file"`` (or a mapping) with every file read from ``base``."""
    if isinstance(spec, str):
        pairs = [item.split(":", 1) for item in spec.split(",") if item.strip()]
        if not pairs or not all(len(p) == 2 and p[0].strip() and p[1].strip()
                                for p in pairs):
            raise ConfigError(f"{path}: {key} must read 'type:file,type:file', got {spec!r}",
                              path=str(path), field=key)
        items: list[tuple[str, Any]] = [(k.strip(), v.strip()) for k, v in pairs]
    elif isinstance(spec, dict):
        items = [(str(k), v) for k, v in spec.items()]
    else:
        raise ConfigError(f"{path}: {key} must be 'type:file,...' or a mapping, got "
                          f"{type(spec).__name__}", path=str(path), field=key)
    out: dict[str, list[Path]] = {}
    for k, v in items:
        for f in ([v] if isinstance(v, (str, os.PathLike)) else list(v)):
            p = Path(f)
            out.setdefault(k, []).append(p if p.is_absolute() else base / p)
    return out


def read_config_graph(cfg: dict[str, Any], base: Path, path: Any, *,
                      folder: Path | None = None) -> Any:
    """The graph a Graph4Rec config names: ``etype2files`` (and ``ntype2files``) read
    from ``graph_data_local_path`` (relative to ``base``, the YAML's folder), or from
    ``folder`` (a routine period's), with ``symmetry``; node IDs of the files kept as node
    feature ``node_id``."""
    from ..io.pgl import read_pgl

    local = Path(cfg.get("graph_data_local_path", "."))
    root = folder if folder is not None else local if local.is_absolute() else base / local
    edges = _file_spec(cfg["etype2files"], root, "etype2files", path)
    nodes = (_file_spec(cfg["ntype2files"], root, "ntype2files", path)
             if cfg.get("ntype2files") else None)
    return read_pgl(edges, nodes, symmetry=bool(cfg.get("symmetry", False)))


def node_ids(graph: Any) -> dict[str, np.ndarray] | None:
    """The files' node IDs per node type (node feature ``node_id``), or None."""
    if not hasattr(graph, "nodes"):
        return None
    out = {t: np.asarray(graph.nodes[t].data["node_id"]) for t in graph.ntypes
           if "node_id" in graph.nodes[t].data}
    return out or None


def dumped_types(cfg: dict[str, Any], ntypes: list[str]) -> list[str]:
    """The node types a dump writes: ``infer_node_type`` (``"u;i"``), default all."""
    keep = cfg.get("infer_node_type") or ""
    return [t.strip() for t in str(keep).split(";") if t.strip()] or list(ntypes)


def dump_embeddings(embeddings: dict[str, np.ndarray], out: Path, cfg: dict[str, Any],
                    ids: dict[str, np.ndarray] | None, path: Any) -> None:
    """Write the tables of the ``infer_node_type`` types as :func:`save_embeddings` does
    (rows keyed by ``ids``, the files' node IDs), plus with ``dump_node_name`` /
    ``dump_node_emb_name`` a ``<ntype>.safetensors`` holding both under those names."""
    from .walk_embed import save_embeddings

    types = dumped_types(cfg, list(embeddings))
    missing = [t for t in types if t not in embeddings]
    if missing:
        raise ConfigError(f"{path}: infer_node_type names {missing}, not node types of the "
                          f"graph {sorted(embeddings)}", path=str(path), field="infer_node_type")
    chosen = {t: embeddings[t] for t in types}
    save_embeddings(chosen, out, ids=ids, text=bool(cfg.get("need_inference", True)))
    names = (cfg.get("dump_node_name"), cfg.get("dump_node_emb_name"))
    if not all(names) or not cfg.get("need_inference", True):
        return
    for t, emb in chosen.items():
        nid = np.arange(len(emb)) if ids is None or t not in ids else ids[t]
        tensors = {str(names[1]): np.ascontiguousarray(emb, np.float32)}
        if np.issubdtype(np.asarray(nid).dtype, np.integer):
            tensors[str(names[0])] = np.ascontiguousarray(nid)
        else:  # text IDs: the .txt dump holds them
            logger.warning("%s: node IDs of %r are text; %s.safetensors holds only %s", path,
                           t, t, names[1])
        save_tensors(out / f"{t}.safetensors", tensors, {"format": "graphshard-embedding"})


class WalkDump:
    """``need_dump_walk``: collects every walk, in the files' node IDs, and writes them to
    ``walks.txt`` (one walk per line, space-separated, padding dropped) atomically."""

    def __init__(self, ids: dict[str, np.ndarray] | None) -> None:
        self.ids = ids
        self.lines: list[str] = []

    def __call__(self, epoch: int, walks: Any) -> None:
        cols = []
        for a, t in enumerate(walks.node_types()):
            col = walks.traces[:, a]
            mapped = (np.asarray(self.ids[t])[np.maximum(col, 0)]
                      if self.ids is not None and t in self.ids else col)
            cols.append([str(v) if c >= 0 else "" for v, c in zip(mapped.tolist(), col.tolist(),
                                                                  strict=True)])
        for row in zip(*cols, strict=True):
            self.lines.append(" ".join(v for v in row if v))

    def write(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        with atomic_write(out / "walks.txt", "w") as fh:
            fh.write("\n".join(self.lines) + ("\n" if self.lines else ""))
