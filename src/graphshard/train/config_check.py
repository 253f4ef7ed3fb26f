"""Validate a training config before any work (``graphshard train``): every value's type
and range, and the names it gives (features, node and edge types) against the graph it
trains on (a partition config's types and features are read from its files, unserved).
All problems are gathered and raised as one :class:`~graphshard.errors.ConfigError`, one
line per problem naming the key.

Example:
    >>> check_values({"task": "sage", "lr": "x", "fanouts": "abc"}, "sage.yaml", "sage")
    Traceback (most recent call last):
        ...
    graphshard.errors.ConfigError: sage.yaml: 2 bad values:
    sage.yaml: fanouts must be a non-empty list of integers >= 1, got 'abc'
    sage.yaml: lr must be a number > 0, got 'x'
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, GraphshardError
from ..storage.files import check_regular_file
from .presets import PRESETS

__all__ = ["PartitionSchema", "as_etype", "check_graph", "check_values", "raise_problems"]

_BIG = 2**63 - 1
# Upper bounds far beyond any run here and far below a MemoryError or an int64 overflow in
# the arrays they size (widths, batches, walks)
_WIDTH = 2**16
_BATCH = 2**24
_EPOCHS = 10**6

Check = Callable[[Any], "str | None"]


def _int(lo: int = 1, hi: int = _BIG) -> Check:
    def check(v: Any) -> str | None:
        if (isinstance(v, bool) or not isinstance(v, numbers.Integral)
                or not lo <= int(v) <= hi):
            top = "" if hi == _BIG else f" and <= {hi}"
            return f"must be an integer >= {lo}{top}, got {v!r}"
        return None
    return check


def _num(lo: float, hi: float = math.inf, *, lo_open: bool = False,
         hi_open: bool = False) -> Check:
    def check(v: Any) -> str | None:
        x = float(v) if not isinstance(v, bool) and isinstance(v, numbers.Real) else math.nan
        ok = (math.isfinite(x) and (x > lo if lo_open else x >= lo)
              and (x < hi if hi_open else x <= hi))
        if ok:
            return None
        if hi == math.inf:
            return f"must be a number {'>' if lo_open else '>='} {lo:g}, got {v!r}"
        return (f"must be a number in {'(' if lo_open else '['}{lo:g}, {hi:g}"
                f"{')' if hi_open else ']'}, got {v!r}")
    return check


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else f"must be true or false, got {v!r}"


def _str(v: Any) -> str | None:
    return None if isinstance(v, str) and v else f"must be a non-empty string, got {v!r}"


def _strs(v: Any) -> str | None:
    ok = isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
    return None if ok else f"must be a string or a list of strings, got {v!r}"


def _choice(*valid: str) -> Check:
    def check(v: Any) -> str | None:
        return None if isinstance(v, str) and v in valid else (
            f"must be one of {list(valid)}, got {v!r}")
    return check


def _ints(lo: int = 1, *, all_ok: bool = False) -> Check:
    def check(v: Any) -> str | None:
        ok = (isinstance(v, list) and v and all(
            not isinstance(x, bool) and isinstance(x, numbers.Integral)
            and (lo <= int(x) <= 2**31 - 1 or (all_ok and x == -1)) for x in v))
        return None if ok else (f"must be a non-empty list of integers >= {lo}"
                                f"{' or -1 (all)' if all_ok else ''}, got {v!r}")
    return check


def _gcl(v: Any) -> str | None:
    off = v is None or v is False or v == ""
    return None if off or v == "simgcl_loss" else (
        f"must be 'simgcl_loss' or off (unset, '' or false), got {v!r}")


def _opt(check: Check) -> Check:
    def opt(v: Any) -> str | None:
        return None if v is None else check(v)
    return opt


def _etype(v: Any) -> str | None:
    ok = (isinstance(v, str) and v and len(v.split(":")) in (1, 3) and all(v.split(":"))) or (
        isinstance(v, list) and len(v) == 3 and all(isinstance(x, str) and x for x in v))
    return None if ok else ("must name an edge type: 'relation', 'src:relation:dst' or "
                            f"[src, relation, dst], got {v!r}")


def as_etype(v: str | list[str]) -> str | tuple[str, ...]:
    """A config's edge type (checked by the ``etype`` rule) as the stores take it.

    Example:
        >>> as_etype("paper:cites:paper"), as_etype(["u", "buys", "i"]), as_etype("buys")
        (('paper', 'cites', 'paper'), ('u', 'buys', 'i'), 'buys')
    """
    if isinstance(v, list):
        return tuple(v)
    return tuple(v.split(":")) if ":" in v else v


_RATE = _num(0.0, lo_open=True)
_SEED = _int(0)
_COMMON: dict[str, Check] = {
    "graph": _str, "generate": _str, "seed": _SEED, "epochs": _int(1, _EPOCHS),
    "batch_size": _int(1, _BATCH), "lr": _RATE, "checkpoint_dir": _str, "resume": _bool,
    "num_trainers": _int(1, 1024), "trainer_cpus": _num(0.0, 1024.0, lo_open=True),
    "feat": _str, "label": _str, "train_mask": _str, "val_mask": _opt(_str),
    "test_mask": _opt(_str), "dropout": _num(0.0, 1.0, hi_open=True),
    "weight_decay": _num(0.0, 1.0), "hidden_size": _int(1, _WIDTH), "hidden": _int(1, _WIDTH),
    "eval_every": _int(1, _EPOCHS), "patience": _opt(_int(1, _EPOCHS)), "min_delta": _num(0.0),
    "warmup": _int(0, _EPOCHS)}
_SAGE = {**_COMMON, "fanouts": _ints(1), "shchur": _str, "shchur_split_seed": _SEED,
         "shchur_undirected": _bool, "shchur_largest_component": _bool,
         "normalize": _bool, "preset": _choice(*(n for n in PRESETS if "sage" in PRESETS[n]))}
_LINK = {**_COMMON, "fanouts": _ints(1), "num_negatives": _int(1, 10**4),
         "neg_num": _int(1, 10**4), "decoder": _choice("dot", "mlp"),
         "exclude": _choice("auto", "self", "reverse", "none"), "hits": _ints(1),
         "monitor": _str, "val_fraction": _num(0.0, 1.0, hi_open=True),
         "test_fraction": _num(0.0, 1.0, hi_open=True), "eval_negatives": _int(1, 10**4),
         "split_seed": _SEED, "etype": _etype, "reverse_etype": _opt(_etype),
         "model": _choice("rgcn", "hgt"), "heads": _int(1, 1024),
         "eval_fanouts": _opt(_ints(1)), "eval_batch_size": _int(1, _BATCH), "hgb": _str,
         "hgb_test_file": _str, "hgb_val_ratio": _num(0.0, 1.0, lo_open=True, hi_open=True)}
#: Link keys that only a heterogeneous graph reads (its R-GCN/HGT encoder, per-type pairs).
_HETERO_LINK = ("reverse_etype", "model", "heads", "eval_fanouts", "eval_batch_size")
_HETERO = {**_COMMON, "target": _str, "model": _choice("rgcn", "hgt"),
           "fanouts": _ints(1, all_ok=True), "eval_fanouts": _opt(_ints(1, all_ok=True)),
           "num_layers": _opt(_int(1, 64)), "heads": _int(1, 1024),
           "multilabel": _opt(_bool), "monitor": _choice("macro_f1", "micro_f1"),
           "eval_batch_size": _int(1, _BATCH), "hgb": _str, "hgb_test_file": _str,
           "hgb_val_ratio": _num(0.0, 1.0, lo_open=True, hi_open=True),
           "preset": _choice(*(n for n in PRESETS if {"rgcn", "hgt"} <= set(PRESETS[n])))}
_WALK = {k: _COMMON[k] for k in ("graph", "generate", "seed", "epochs", "batch_size",
                                 "checkpoint_dir", "resume", "hidden_size")}
_WALK.update({
    "lr": _opt(_RATE), "sparse_lr": _RATE, "meta_path": _opt(_strs), "walk_len": _int(1, 10**4),
    "walk_times": _int(1, 10**5), "win_size": _int(1, 10**3), "neg_num": _int(1, 10**4),
    "embed_size": _int(1, _WIDTH), "emb_size": _int(1, _WIDTH), "optimizer": _str,
    "sparse_type": _str, "excluded_train_pair": _strs,
    "neg_distribution": _choice("uniform", "degree"), "lr_decay": _str,
    "end_lr": _opt(_num(0.0)), "random_window": _bool,
    "sample": _num(0.0, 1.0, hi_open=True), "subsample": _num(0.0, 1.0, hi_open=True),
    "loss_type": _str, "margin": _RATE, "init_range": _opt(_RATE), "softsign": _bool,
    "sage_mode": _bool, "sage_layer_type": _str, "sage_alpha": _num(0.0, 1.0),
    "samples": _ints(1), "infer_samples": _ints(1), "sage_act": _str,
    "use_degree_norm": _bool, "weighted_sample": _bool, "return_weight": _bool,
    "dense_lr": _RATE, "slot_feature_lr": _RATE, "slots": _strs,
    "infer_batch_size": _int(1, _BATCH), "gcl_loss": _gcl,
    "hcl": _bool, "need_train": _bool, "need_inference": _bool,
    "need_dump_walk": _bool, "symmetry": _bool, "save_model_interval": _int(1, _EPOCHS),
    "output_path": _str, "warm_start_from": _str, "graph_data_local_path": _str})
_SPECS = {"walk": _WALK, "sage": _SAGE, "link": _LINK, "hetero": _HETERO}


def raise_problems(path: Any, problems: list[tuple[str, str]]) -> None:
    """Raise one ConfigError listing ``problems`` (``(key, text)``), field = the first key."""
    if not problems:
        return
    lines = [f"{path}: {key} {text}" for key, text in problems]
    head = lines[0] if len(lines) == 1 else f"{path}: {len(lines)} bad values:\n" + "\n".join(
        lines)
    raise ConfigError(head, path=str(path), field=problems[0][0])


def check_values(cfg: dict[str, Any], path: Any, task: str) -> None:
    """Check the type and range of every value ``cfg`` gives (task ``task``), before any
    graph is built; keys without a rule here are checked where they are read.

    Raises:
        ConfigError: one line per bad value, naming the key.
    """
    spec = _SPECS[task]
    problems = [(key, text) for key in sorted(cfg) if key in spec
                for text in [spec[key](cfg[key])] if text is not None]
    if task == "link" and not problems:
        v, t = cfg.get("val_fraction", 0.05), cfg.get("test_fraction", 0.1)
        if v + t >= 1:
            problems.append(("test_fraction", f"plus val_fraction must be < 1, got {v} + {t}"))
        from .link_trainer import link_metric_names

        names = link_metric_names(cfg.get("hits", (10, 50)))
        if cfg.get("monitor", "mrr") not in names:
            problems.append(("monitor", f"must be one of {list(names)}, got "
                                        f"{cfg['monitor']!r}"))
    if task in ("link", "hetero") and not problems:
        _check_model_widths(cfg, task, problems)
    raise_problems(path, problems)


def _check_model_widths(cfg: dict[str, Any], task: str,
                        problems: list[tuple[str, str]]) -> None:
    """Per-layer lists as long as the model is deep; HGT's heads divide its width."""
    fan = cfg.get("fanouts", [10, 10])
    layers = cfg.get("num_layers") if task == "hetero" else None
    for key in ("fanouts", "eval_fanouts"):
        if cfg.get(key) is not None and len(cfg[key]) != (layers or len(fan)):
            problems.append((key, f"has {len(cfg[key])} entries, but the model has "
                                  f"{layers or len(fan)} layers"))
    hidden, heads = cfg.get("hidden", cfg.get("hidden_size", 64)), cfg.get("heads", 4)
    if cfg.get("model", "rgcn") == "hgt" and hidden % heads:
        problems.append(("heads", f"must divide hidden_size ({hidden}) for HGT, got "
                                  f"{heads}"))


def _check_link_types(cfg: dict[str, Any], st: Any, homo: bool, where: str,
                      etypes: list[str], problems: list[tuple[str, str]]) -> None:
    """A heterogeneous link config names the edge type it predicts (and its reverse) among
    the graph's; a homogeneous one gives none of the heterogeneous encoder's keys."""
    if homo:
        extra = [k for k in _HETERO_LINK if k in cfg]
        if extra:
            problems.append((extra[0], f"is read on a heterogeneous graph only (with "
                                       f"etype); {where} has one node and one edge type"))
        return
    if "etype" not in cfg:
        problems.append(("etype", f"must name the edge type to predict: {where} has edge "
                                  f"types {etypes}"))
        return
    for key in ("etype", "reverse_etype"):
        if cfg.get(key) is None:
            continue
        try:
            st.to_canonical_etype(as_etype(cfg[key]))
        except (GraphshardError, KeyError, ValueError):
            problems.append((key, f"names no edge type of {where} (or more than one): got "
                                  f"{cfg[key]!r}; its edge types are {etypes}"))


class PartitionSchema:
    """The types and node-feature names of a partition config, read from its JSON and its
    parts' feature-file headers (memory-mapped, not hashed: the servers verify the files
    when they load them), so a config's names are checked before any server starts.

    It has what the name checks read of a store: ``ntypes``, ``canonical_etypes``,
    ``to_canonical_etype`` and ``feature_schema`` (its values: the row shape, or None, and
    the dtype).
    """

    def __init__(self, config: Path, path: Any) -> None:
        from ..partition import load_partition_feats, read_config
        from ..types import GraphTypes

        try:
            check_regular_file(config, field="graph")
            part = read_config(config)
            self._types = GraphTypes(part.ntypes, part.canonical_etypes())
            node: dict[str, Any] = {}
            for i in range(part.num_parts):
                for key, col in load_partition_feats(part, i, verify=False)[0].items():
                    shape = getattr(col, "shape", None)
                    node.setdefault(key, (None if shape is None else tuple(shape[1:]),
                                          str(getattr(col, "dtype", ""))))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            why = str(exc) if isinstance(exc, GraphshardError) else (
                f"{config}: not a readable partition config ({exc})")
            raise ConfigError(f"{path}: graph: {why}", path=str(path), field="graph") from exc
        self._node = node

    @property
    def ntypes(self) -> list[str]:
        return self._types.ntypes

    @property
    def canonical_etypes(self) -> list[Any]:
        return self._types.canonical_etypes

    def to_canonical_etype(self, etype: Any) -> Any:
        return self._types.to_canonical_etype(etype)

    def feature_schema(self, kind: str) -> dict[str, Any]:
        return dict(self._node) if kind == "node" else {}


def check_graph(cfg: dict[str, Any], path: Any, task: str, graph: Any) -> Any:
    """Check the names ``cfg`` gives (task, node types, features) against ``graph``: a
    Graph, or the path of a partition config, whose types and feature names are read from
    its files (:class:`PartitionSchema`) without serving it.

    Returns:
        What the names were checked against (a store, or a :class:`PartitionSchema`), for
        the walk options' metapath and slots
        (:func:`~graphshard.train.walk_embed.check_walk_options`).

    Raises:
        ConfigError: one line per problem, naming the key.
    """
    from ..store import as_store

    if isinstance(graph, (str, os.PathLike)):
        st: Any = PartitionSchema(Path(graph), path)
        where = f"the graph {Path(graph).name}"
    else:
        st = as_store(graph)
        where = f"the {'generated ' if 'generate' in cfg else ''}graph"
    ntypes, etypes = list(st.ntypes), [":".join(e) for e in st.canonical_etypes]
    read = getattr(st, "feature_schema", None)
    schema = read("node") if read is not None else None
    problems: list[tuple[str, str]] = []
    homo = len(ntypes) == 1 and len(etypes) == 1
    if task == "hetero" and homo:
        key = "generate" if "generate" in cfg else "graph"
        problems.append((key, "makes a graph with one node and one edge type; task 'hetero' "
                              "needs a heterograph (graph: its partition config, or hgb:); "
                              "task 'sage' trains on this one"))
    elif task == "sage" and not homo:
        problems.append(("task", f"{task!r} needs one node and one edge type; {where} has "
                                 f"node types {ntypes} and edge types {etypes}"))
    elif task == "link":
        _check_link_types(cfg, st, homo, where, etypes, problems)
    target = ntypes[0] if len(ntypes) == 1 else cfg.get("target")
    if task == "hetero" and target is not None and target not in ntypes:
        problems.append(("target", f"must be a node type of {where} {ntypes}, got "
                                   f"{target!r}"))
        target = None
    if task == "link" and not homo:  # features are per type there (learned where absent)
        target = None
    if schema is not None and target is not None and not problems:
        names = [k for k in ("label", "train_mask", "val_mask", "test_mask")
                 if task in ("sage", "hetero")] + (["feat"] if task != "hetero" else [])
        defaults = {"feat": "feat", "label": "label", "train_mask": "train_mask"}
        for key in names:
            name = cfg.get(key, defaults.get(key))
            if name is not None and f"{target}/{name}" not in schema:
                have = sorted(k.split("/", 1)[1] for k in schema if k.startswith(f"{target}/"))
                problems.append((key, f"names no node feature of {target!r}: got {name!r}; "
                                      f"its features are {have}"))
    raise_problems(path, problems)
    return st
