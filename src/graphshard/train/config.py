"""Train from a YAML config with PGL / Graph4Rec's keys (the hook for ``graphshard train``).

A walk config (``task: walk``, the default) is a Graph4Rec config: every key of PGL's
Graph4Rec config block is read, ignored with a reason or refused, as
:data:`~graphshard.train.graph4rec.G4R_KEYS` and ``docs/graph4rec.md`` list;
``etype2files`` / ``ntype2files`` / ``symmetry`` name the data files the run reads
(:func:`~graphshard.io.read_pgl`), and the dump keys its rows by the files' node IDs;
with ``train_mode: online_train`` it trains period by period over dated folders
(:mod:`~graphshard.train.routine`).  It
also reads our ``neg_distribution`` (``uniform`` / ``degree``), ``optimizer``
(``auto``, ``adagrad``, ``adam``, ``sgd``, ``pair_sgd``: word2vec's SGD after every pair,
local graphs only), ``lr``, ``lr_decay`` (``auto``, ``none`` or ``linear``: word2vec's decay
from ``lr`` to ``end_lr`` over the run's walks), ``end_lr`` (default ``lr * 1e-4``),
``random_window`` (word2vec's reduced window), ``sample`` (or ``subsample``: word2vec's
subsampling of frequent nodes, 0 = off, e.g. ``1e-4``), ``seed``, ``checkpoint_dir`` and
``resume``; bad values raise a :class:`~graphshard.errors.ValidationError` naming the key.
A key the config leaves out takes :class:`~graphshard.train.walk_options.WalkOptions`'s
default (DeepWalk's setting since issue 27, not Graph4Rec's example values: without
``sparse_type`` a local graph trains with ``pair_sgd``, a ``graph:`` with Adagrad; see
``docs/graph4rec.md``).
A GraphSAGE config (``task: sage``) reads ``fanouts``, ``hidden_size`` (or ``hidden``),
``epochs``, ``batch_size``, ``lr``, ``weight_decay``, ``feat``, ``label``, ``train_mask``,
``val_mask``, ``test_mask``, ``dropout``, ``normalize``, ``seed``, ``preset`` (a paper's
settings under the config's own keys: :mod:`~graphshard.train.presets`), ``eval_every``
(evaluate every this
many epochs), ``patience`` (stop once validation accuracy has not improved for this many
epochs; unset: never) and ``min_delta`` (the improvement that counts), ``num_trainers``
(trainer processes, DDP; needs ``graph:``), ``trainer_cpus``, ``checkpoint_dir`` (a
checkpoint after every epoch; a stopped run started again resumes from it) and ``resume``,
and may name its graph with ``shchur:`` (a gnn-benchmark ``.npz`` or ``.zip``, read by
:func:`~graphshard.datasets.load_shchur_npz` with Shchur et al.'s split drawn with
``shchur_split_seed``, default 0: 20 training and 30 validation nodes per class; with
``shchur_undirected: true`` every edge in both directions and with
``shchur_largest_component: true`` only the largest connected component, as their
standardisation).
A link-prediction config (``task: link``, :func:`~graphshard.train.link.train_link`)
reads ``fanouts``, ``hidden_size`` (or ``hidden``), ``epochs``, ``batch_size``, ``lr``,
``weight_decay``, ``feat``, ``dropout``, ``seed``, ``num_negatives`` (or PGL's ``neg_num``:
training negatives per edge), ``decoder`` (``dot`` / ``mlp``), ``exclude``, ``hits`` (the K
of Hits@K, e.g. ``[10, 50]``), ``monitor`` (``mrr``, ``auc`` or ``hits@K``), ``eval_every``,
``patience``, ``min_delta``, ``num_trainers``, ``trainer_cpus``, ``checkpoint_dir`` and
``resume``; its ``graph:`` is a partition config written by
:func:`~graphshard.train.link_files.partition_for_link` (the held-out edges are read
from beside it), and a ``generate:`` or ``hgb:`` graph is split here by ``val_fraction``,
``test_fraction``, ``eval_negatives`` (fixed negatives per held-out edge) and
``split_seed`` (default: ``seed``).  On a heterogeneous graph ``etype``
names the edge type to predict and ``reverse_etype`` its reverse (a relation name,
``src:relation:dst`` or a list of the three), with ``model``, ``heads``, ``eval_fanouts``
and ``eval_batch_size`` for its R-GCN/HGT encoder.
A heterogeneous node-classification config (``task: hetero``,
:func:`~graphshard.train.hetero.train_hetero`) reads ``target``, ``model`` (``rgcn`` /
``hgt``), ``fanouts`` (DGL order, input layer first), ``eval_fanouts``, ``num_layers``,
``hidden_size`` (or ``hidden``), ``heads``, ``feat``, ``label``, ``train_mask``,
``val_mask``, ``test_mask``, ``dropout``, ``weight_decay``, ``multilabel``, ``monitor``
(``macro_f1`` / ``micro_f1``), ``patience``, ``warmup``, ``eval_every``,
``eval_batch_size``, ``num_trainers``, ``trainer_cpus``, ``preset`` (``hgb``: HGB's settings
for the config's ``model``), and may name its graph with ``hgb:`` (an HGB
dataset's .zip or folder; ``hgb_test_file``, ``hgb_val_ratio`` pass to
:func:`~graphshard.datasets.load_hgb`; ``target`` defaults to the labelled type); it has
no checkpoints yet.
The graph is ``graph:`` (a partition config JSON, served by a DistGraph), ``generate:``
(a :func:`graphshard.datasets.from_spec` spec) or, for a walk config, ``etype2files``;
naming two is an error.  Several trainers (``num_trainers`` > 1) need ``graph:``: another
source is refused before it is read, with the commands that partition it and train from
the partition (:mod:`~graphshard.train.config_sources`).  :data:`CONFIG_KEYS` lists the
keys of each task; any other key is a ConfigError naming the closest known one (``epoch``
-> ``epochs``), in every task; relative paths are read from the YAML's folder.

Checkpoints: with ``checkpoint_dir`` (either task) a checkpoint with the model or tables,
the optimizer state, the epoch and the metrics is written after every epoch (a walk run:
every ``save_model_interval`` epochs and after the last), and the same command started
again resumes from it (``resume: false`` starts over).  A walk run also writes its tables
to ``output_path`` (``<ntype>.npy`` and ``<ntype>.txt``); ``warm_start_from`` reads such a
folder back as initial tables (no optimizer state), or with ``need_train: false`` only to
dump it again.

Unstable API (first pass of issue 7; Graph4Rec keys: issue 27).

Example:
    >>> [k for k in ("meta_path", "walk_len", "etype2files", "task_name", "output_path")
    ...  if k in CONFIG_KEYS["walk"]]
    ['meta_path', 'walk_len', 'etype2files', 'output_path']
    >>> "output_path" in CONFIG_KEYS["sage"]
    False
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "walk.yaml"
    >>> _ = p.write_text("generate: sbm:nodes=50,edges=200\\nwalk_len: 4\\nepochs: 1\\n")
    >>> read_config(p)["walk_len"]  # doctest: +SKIP
    4
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._util.optional import import_optional
from ..errors import ConfigError, GraphshardError, ValidationError
from .config_check import as_etype, check_graph, check_values
from .config_sources import check_sources, dataset_graph, plain_graph
from .graph4rec import (
    G4R_KEYS,
    SPARSE_TYPES,
    WalkDump,
    check_g4r_values,
    dump_embeddings,
    node_ids,
    read_config_graph,
    unknown_key_error,
)
from .presets import preset
from .routine import ROUTINE_KEYS, RoutinePlan, routine_plan, train_routine

__all__ = ["CONFIG_KEYS", "TASKS", "read_config", "train_from_config", "validate_config"]

logger = logging.getLogger(__name__)

#: Tasks a config can name.
TASKS = ("walk", "sage", "link", "hetero")

_COMMON = {"task", "graph", "generate", "seed", "epochs", "batch_size", "lr"}
_WALK = {"meta_path": "metapath", "walk_len": "walk_len", "walk_times": "walk_times",
         "win_size": "win_size", "neg_num": "neg_num", "embed_size": "emb_size",
         "emb_size": "emb_size", "optimizer": "optimizer",
         "excluded_train_pair": "exclude_pairs", "neg_distribution": "neg_distribution",
         "checkpoint_dir": "checkpoint_dir", "resume": "resume", "lr_decay": "lr_decay",
         "end_lr": "end_lr", "random_window": "random_window", "sample": "subsample",
         "subsample": "subsample", "sparse_type": "optimizer", "sparse_lr": "lr",
         "loss_type": "loss_type", "margin": "margin", "init_range": "init_range",
         "softsign": "softsign", "sage_mode": "sage_mode", "sage_layer_type": "sage_layer_type",
         "sage_alpha": "sage_alpha", "samples": "samples", "infer_samples": "infer_samples",
         "sage_act": "sage_act", "use_degree_norm": "use_degree_norm",
         "weighted_sample": "weighted_sample", "return_weight": "return_weight",
         "dense_lr": "dense_lr", "slot_feature_lr": "slot_feature_lr", "slots": "slots",
         "infer_batch_size": "infer_batch_size", "gcl_loss": "gcl_loss", "hcl": "hcl"}
#: Graph4Rec keys a walk config reads outside WalkOptions (files, dump, flow).
_WALK_FLOW = {"need_train", "need_inference", "warm_start_from", "output_path", "etype2files",
              "ntype2files", "symmetry", "graph_data_local_path", "infer_node_type",
              "dump_node_name", "dump_node_emb_name", "need_dump_walk", "save_model_interval",
              "model_type", "hidden_size", *ROUTINE_KEYS}
_SAGE = {"fanouts": "fanouts", "hidden_size": "hidden", "hidden": "hidden", "feat": "feat",
         "label": "label", "train_mask": "train_mask", "val_mask": "val_mask",
         "test_mask": "test_mask", "dropout": "dropout", "weight_decay": "weight_decay",
         "num_trainers": "num_trainers", "trainer_cpus": "trainer_cpus",
         "checkpoint_dir": "checkpoint_dir", "resume": "resume", "eval_every": "eval_every",
         "patience": "patience", "min_delta": "min_delta", "warmup": "warmup",
         "normalize": "normalize"}

_LINK = {"fanouts": "fanouts", "hidden_size": "hidden", "hidden": "hidden", "feat": "feat",
         "dropout": "dropout", "weight_decay": "weight_decay", "num_negatives": "num_negatives",
         "neg_num": "num_negatives", "decoder": "decoder", "exclude": "exclude",
         "hits": "hits", "monitor": "monitor", "num_trainers": "num_trainers",
         "trainer_cpus": "trainer_cpus", "checkpoint_dir": "checkpoint_dir",
         "resume": "resume", "eval_every": "eval_every", "patience": "patience",
         "min_delta": "min_delta", "warmup": "warmup", "etype": "etype",
         "reverse_etype": "reverse_etype", "model": "model", "heads": "heads",
         "eval_fanouts": "eval_fanouts", "eval_batch_size": "eval_batch_size"}
_LINK_SPLIT = {"val_fraction", "test_fraction", "eval_negatives", "split_seed"}

_HETERO = {"target": "target", "model": "model", "fanouts": "fanouts",
           "eval_fanouts": "eval_fanouts", "num_layers": "num_layers",
           "hidden_size": "hidden", "hidden": "hidden", "heads": "heads", "feat": "feat",
           "label": "label", "train_mask": "train_mask", "val_mask": "val_mask",
           "test_mask": "test_mask", "dropout": "dropout", "weight_decay": "weight_decay",
           "multilabel": "multilabel", "monitor": "monitor", "patience": "patience",
           "warmup": "warmup", "eval_every": "eval_every", "eval_batch_size": "eval_batch_size",
           "num_trainers": "num_trainers", "trainer_cpus": "trainer_cpus"}
_HGB = {"hgb", "hgb_test_file", "hgb_val_ratio"}
_SHCHUR = {"shchur", "shchur_split_seed", "shchur_undirected", "shchur_largest_component"}

#: The keys each task reads.  Any other key is a ConfigError naming the closest known key,
#: except, in a walk config, Graph4Rec's keys that graphshard ignores or refuses with a
#: reason (:data:`~graphshard.train.graph4rec.G4R_KEYS`).
CONFIG_KEYS = {"walk": tuple(sorted(_COMMON | set(_WALK) | _WALK_FLOW)),
               "sage": tuple(sorted(_COMMON | set(_SAGE) | _SHCHUR | {"preset"})),
               "link": tuple(sorted(_COMMON | set(_LINK) | _LINK_SPLIT | _HGB)),
               "hetero": tuple(sorted(_COMMON | set(_HETERO) | _HGB | {"preset"}))}
_TABLES = {"walk": _WALK, "sage": _SAGE, "link": _LINK, "hetero": _HETERO}


def read_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The YAML mapping at ``path``.

    Raises:
        ConfigError: the file is not YAML or not a mapping.
        MissingDependencyError: pyyaml is not installed.
    """
    yaml = import_optional("yaml", "YAML training configs")
    try:
        cfg = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the YAML config: {exc}", path=str(path)) from exc
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: expected a mapping of keys, got {type(cfg).__name__}",
                          path=str(path))
    return cfg


def train_from_config(path: str | os.PathLike[str], *, overrides: dict[str, Any] | None = None,
                      on_epoch: Callable[[int, dict[str, float]], None] | None = None) -> Any:
    """Run the training a YAML config describes (``graphshard train CONFIG.yaml``).

    Args:
        path: The YAML file.
        overrides: Keys that replace the YAML's (e.g. from command-line options).
        on_epoch: Called after each epoch with ``(epoch, metrics)``.

    Returns:
        A :class:`~graphshard.train.walk_embed.WalkEmbeddingResult` (``task: walk``; None
        when ``need_train`` is false), a :class:`~graphshard.train.sage.TrainResult`
        (``task: sage``), a :class:`~graphshard.train.link.LinkResult` (``task: link``)
        or a :class:`~graphshard.train.hetero.HeteroResult` (``task: hetero``).

    Raises:
        ConfigError: unknown task, a missing graph, a bad value, or an unknown key of a
            hetero config.
        MissingDependencyError: torch or pyyaml is not installed.
    """
    prep = _prepare(path, overrides)
    cfg, task, graph, kwargs = prep.cfg, prep.task, prep.graph, prep.kwargs
    try:
        if task == "hetero":
            from .hetero import train_hetero

            return train_hetero(graph, on_epoch=on_epoch, **kwargs)
        if task == "sage":
            from .sage import train_sage

            return train_sage(graph, on_epoch=on_epoch, **kwargs)
        if task == "link":
            return _link(graph, kwargs, cfg, on_epoch)
        if prep.routine is not None:
            return _routine(prep, prep.routine, path, on_epoch)
        return _walk(graph, {**kwargs, "on_epoch": on_epoch}, cfg, prep.base, prep.out)
    except TypeError as exc:
        raise ConfigError(f"{path}: {exc}", path=str(path)) from exc
    except ConfigError:
        raise
    except ValidationError as exc:  # found once training started: name the file and key
        raise _as_config_error(path, cfg, task, exc) from exc


def validate_config(path: str | os.PathLike[str], *,
                    overrides: dict[str, Any] | None = None) -> None:
    """Check a training config as :func:`train_from_config` does before it trains: keys,
    every value's type and range, the graph (built or read, not served) and the names the
    config gives against it (features, node types, metapaths, slots); nothing is trained
    or written.

    Raises:
        ConfigError: one line per problem, naming the file and the key.
        MissingDependencyError: pyyaml is not installed.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "h.yaml"
        >>> _ = p.write_text("task: sage\\ngenerate: sbm:nodes=50,edges=200\\nlr: x\\n")
        >>> validate_config(p)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        graphshard.errors.ConfigError: .../h.yaml: lr must be a number > 0, got 'x'
    """
    _prepare(path, overrides)


@dataclass(frozen=True)
class _Prepared:
    cfg: dict[str, Any]
    task: str
    base: Path
    graph: Any
    kwargs: dict[str, Any]
    out: Path | None
    routine: RoutinePlan | None = None  # train_mode: online_train


def _prepare(path: Any, overrides: dict[str, Any] | None) -> _Prepared:
    """The checked config: keys, values, graph and the names against it (no training)."""
    cfg = {**read_config(path), **(overrides or {})}
    base = Path(path).resolve().parent
    task = cfg.get("task", "walk")
    if not isinstance(task, str) or task not in TASKS:
        raise ConfigError(f"{path}: task must be one of {TASKS}, got {task!r}", path=str(path),
                          field="task")
    known = set(CONFIG_KEYS[task]) | (set(G4R_KEYS) if task == "walk" else set())
    unknown = sorted(set(cfg) - known, key=str)
    if unknown:
        raise unknown_key_error(path, str(unknown[0]), sorted(known), task)
    check_values(cfg, path, task)  # types first: the Graph4Rec rules compare values
    if task == "walk":
        check_g4r_values(cfg, path)
    table = _TABLES[task]
    kwargs = {table[k]: v for k, v in cfg.items() if k in table}
    kwargs.update({k: cfg[k] for k in ("seed", "epochs", "batch_size", "lr") if k in cfg})
    if "preset" in cfg:  # the paper's settings, under the config's own keys
        kwargs = {**preset(cfg["preset"], str(cfg.get("model", "rgcn")) if task == "hetero"
                           else task), **kwargs}
    if isinstance(kwargs.get("exclude_pairs"), str):
        kwargs["exclude_pairs"] = [p for p in kwargs["exclude_pairs"].split(";") if p]
    if "optimizer" in kwargs:
        kwargs["optimizer"] = SPARSE_TYPES.get(kwargs["optimizer"], kwargs["optimizer"])
    sources = check_sources(cfg, path, task)  # several trainers need graph: (no loading)
    plan = routine_plan(cfg, base, path) if task == "walk" else None
    if plan is not None and plan.first == len(plan.periods):  # every period is complete
        return _Prepared(cfg, task, base, None, kwargs, None, plan)
    try:
        if "etype2files" in cfg:  # routine: the first period to train
            graph = read_config_graph(cfg, base, path, folder=None if plan is None else
                                      plan.data_dir(plan.first))
            cfg = {"output_path": "output", **cfg}  # PGL's files in, PGL's dump out
        elif "hgb" in cfg or "shchur" in cfg:  # a link config has no target to default
            graph = dataset_graph(cfg, base, kwargs if task == "hetero" else {})
        else:
            graph = plain_graph(cfg, base, path)
    except ConfigError:
        raise
    except GraphshardError as exc:
        raise ConfigError(f"{path}: {sources[0] if sources else 'graph'}: {exc}",
                          path=str(path), field=sources[0] if sources else "graph") from exc
    # an hgb: dataset's labelled type is the default target (dataset_graph): check names against it
    names = check_graph({"target": kwargs["target"], **cfg} if "target" in kwargs else cfg,
                        path, task, graph)
    out = cfg.get("output_path")
    out = None if out is None else (Path(out) if Path(out).is_absolute() else base / out)
    ck = kwargs.get("checkpoint_dir")
    if ck is not None and not Path(ck).is_absolute():
        kwargs["checkpoint_dir"] = base / ck
    if task == "walk" and cfg.get("need_train", True):
        _check_walk_options(graph, names, kwargs, cfg, path)
    return _Prepared(cfg, task, base, graph, kwargs, out, plan)


def _as_config_error(path: Any, cfg: dict[str, Any], task: str,
                     exc: GraphshardError, where: str = "") -> ConfigError:
    """``exc`` (an option's error) as the config's: one line naming the file, ``where``
    (a routine period) and the key that sets the option (``sample`` for ``subsample``,
    ``sparse_type`` for ``optimizer``)."""
    field = getattr(exc, "field", None)
    key = field if field in cfg else next(
        (k for k in cfg if _TABLES[task].get(k) == field), field or "config")
    return ConfigError(f"{path}: {where}{key}: {exc}", path=str(path), field=key)


def _check_walk_options(graph: Any, names: Any, kwargs: dict[str, Any], cfg: dict[str, Any],
                        path: Any) -> None:
    """Build the run's WalkOptions for ``graph`` and resolve its metapath and slots against
    ``names`` (what :func:`check_graph` read: the store, or a partition config's types and
    features), naming the config key."""
    from .walk_embed import check_walk_options
    from .walk_options import WalkOptions

    fields = set(WalkOptions.names())
    try:
        check_walk_options(graph, {k: v for k, v in kwargs.items() if k in fields},
                           names=names)
    except GraphshardError as exc:
        raise _as_config_error(path, cfg, "walk", exc) from exc


def _link(graph: Any, kwargs: dict[str, Any], cfg: dict[str, Any],
          on_epoch: Callable[[int, dict[str, float]], None] | None) -> Any:
    from .link import train_link

    kwargs = {**kwargs, **{k: as_etype(kwargs[k]) for k in ("etype", "reverse_etype")
                           if kwargs.get(k) is not None}}
    if not isinstance(graph, (str, os.PathLike)):  # generated or a dataset: split it here
        from .link_split import split_edges

        split = {k: cfg[k] for k in ("val_fraction", "test_fraction") if k in cfg}
        types = {k: kwargs[k] for k in ("etype", "reverse_etype") if k in kwargs}
        graph = split_edges(graph, **split, **types,
                            num_negatives=int(cfg.get("eval_negatives", 100)),
                            seed=int(cfg.get("split_seed", cfg.get("seed", 0))))
    return train_link(graph, on_epoch=on_epoch, **kwargs)



def _routine(prep: _Prepared, plan: RoutinePlan, path: Any,
             on_epoch: Callable[[int, dict[str, float]], None] | None) -> Any:
    """Routine training (``train_mode: online_train``): one :func:`_walk` per period."""
    def period(graph: Any, init: Any, out: Path, label: str) -> Any:
        kwargs = {**prep.kwargs, "on_epoch": on_epoch}
        if kwargs.get("checkpoint_dir") is not None:  # one checkpoint folder per period
            kwargs["checkpoint_dir"] = Path(kwargs["checkpoint_dir"]) / label
        try:
            return _walk(graph, kwargs, prep.cfg, prep.base, out, init=init)
        except ConfigError:
            raise
        except ValidationError as exc:
            raise _as_config_error(path, prep.cfg, "walk", exc, f"period {label}: ") from exc

    return train_routine(plan, prep.cfg, prep.base, path, period, graph=prep.graph)


def _walk(graph: Any, kwargs: dict[str, Any], cfg: dict[str, Any], base: Path,
          out: Path | None, *, init: Any = None) -> Any:
    from .walk_embed import load_embeddings, train_walk_embedding
    from .walk_options import WalkOptions

    warm = cfg.get("warm_start_from")
    if warm:
        warm_dir = Path(warm) if Path(warm).is_absolute() else base / warm
        init = dict(load_embeddings(warm_dir))
    if not cfg.get("need_train", True):
        if init is None:
            raise ConfigError("need_train is false: set warm_start_from to the tables to "
                              "dump", field="warm_start_from")
        if cfg.get("need_inference", True) and out is not None:
            dump_embeddings(init, out, cfg, node_ids(graph), "config")
        return None
    names = set(WalkOptions.names())
    options = WalkOptions(**{k: v for k, v in kwargs.items() if k in names})
    rest = {k: v for k, v in kwargs.items() if k not in names}
    ids = node_ids(graph)
    if "save_model_interval" in cfg:
        rest["checkpoint_every"] = int(cfg["save_model_interval"])
        if rest.get("checkpoint_dir") is None and out is not None:
            rest["checkpoint_dir"] = out / "model"
    walks = WalkDump(ids) if cfg.get("need_dump_walk") else None
    res = train_walk_embedding(graph, options, init=init, on_walks=walks, **rest)
    if out is not None:  # without need_inference only the .npy tables (a checkpoint)
        dump_embeddings(res.embeddings, out, cfg, res.node_ids or ids, "config")
        if walks is not None:
            walks.write(out)
    return res
