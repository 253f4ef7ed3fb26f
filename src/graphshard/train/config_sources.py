"""Where a training config's graph comes from, checked before anything is loaded.

``graph:`` names a partition config (served by a DistGraph), ``generate:`` a generator spec,
``hgb:`` an HGB dataset (``task: hetero``), ``shchur:`` a gnn-benchmark ``.npz``/``.zip``
(``task: sage``, with Shchur et al.'s split) and ``etype2files`` PGL's files (``task:
walk``).  Several trainers connect to graph servers, so they need ``graph:``: a config that
asks for them with another source is refused here, before the dataset is read, with the
commands that partition it and train from the partition.

Example:
    >>> check_sources({"task": "sage", "generate": "sbm:nodes=50,edges=200",
    ...                "num_trainers": 2}, "sage.yaml", "sage")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    graphshard.errors.ConfigError: sage.yaml: num_trainers: 2 trainers need ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .config_check import as_etype

__all__ = ["SOURCES", "check_sources", "dataset_graph", "plain_graph"]

#: The keys that name a config's graph; a config names one.
SOURCES = ("graph", "generate", "etype2files", "hgb", "shchur")


def _where(cfg: dict[str, Any], key: str, base: Path) -> Path:
    p = Path(str(cfg[key]))
    return p if p.is_absolute() else base / p


def check_sources(cfg: dict[str, Any], path: Any, task: str) -> list[str]:
    """The source keys ``cfg`` gives, after checking there is at most one and that a run of
    several trainers (``num_trainers`` > 1) names a partition config.

    Raises:
        ConfigError: two sources; or several trainers without ``graph:``, giving the
            commands that partition the dataset and train from it.
    """
    sources = [k for k in SOURCES if k in cfg]
    if len(sources) > 1:
        raise ConfigError(f"{path}: name the graph once; found {sources}", path=str(path),
                          field=sources[1])
    trainers = cfg.get("num_trainers", 1)
    if task != "walk" and trainers > 1 and sources and sources[0] != "graph":
        raise _trainers_error(cfg, path, task, sources[0], int(trainers))
    return sources


def _trainers_error(cfg: dict[str, Any], path: Any, task: str, source: str,
                    trainers: int) -> ConfigError:
    """Several trainers with a graph that is not partitioned: what to run instead."""
    base = Path(path).resolve().parent
    head = (f"{path}: num_trainers: {trainers} trainers need 'graph: <partition config "
            f".json>' (each trainer connects to the graph servers), but the graph comes from "
            f"'{source}:'; ")
    if task == "link":
        types = "".join(f", {k}={as_etype(cfg[k])!r}" for k in ("etype", "reverse_etype")
                        if cfg.get(k) is not None)
        load = (f"g = graphshard.datasets.load_hgb('{_where(cfg, 'hgb', base)}').graph; "
                if source == "hgb" else "")
        return ConfigError(
            head + "partition it for link prediction first (held-out edges beside the "
            f"parts): {load}graphshard.train.partition_for_link(g, 'name', "
            f"{trainers}, '{base / 'parts'}'{types}), then set 'graph: parts/name.json' in "
            f"place of '{source}:'", path=str(path), field="num_trainers")
    if source == "generate":
        spec = str(cfg["generate"])
        command = f"graphshard partition --generate {spec}"
        name = spec.partition(":")[0]
    else:
        data = _where(cfg, source, base)
        opts = "".join(f" -O {k.partition('_')[2]}={cfg[k]}" for k in
                       ("hgb_test_file", "hgb_val_ratio", "shchur_split_seed",
                        "shchur_undirected", "shchur_largest_component") if k in cfg)
        if source == "shchur" and "shchur_split_seed" not in cfg:
            opts = " -O split_seed=0"
        command = f"graphshard partition {data}{opts}"
        name = data.name.split(".")[0]
    return ConfigError(
        head + f"partition it first, then train from the partition: {command} --parts "
        f"{trainers} --out {base / 'parts'}/, set 'graph: parts/{name}.json' in place of "
        f"'{source}:' in {Path(str(path)).name}, and run graphshard train {path} --trainers "
        f"{trainers}", path=str(path), field="num_trainers")


def plain_graph(cfg: dict[str, Any], base: Path, path: Any) -> Any:
    """``graph:`` (the partition config's path, relative to the YAML's folder) or the graph
    a ``generate:`` spec builds."""
    if "graph" in cfg:
        return _where(cfg, "graph", base)
    if "generate" in cfg:
        from ..datasets import from_spec

        return from_spec(str(cfg["generate"]))
    raise ConfigError(f"{path}: name the graph with 'graph: <partition config .json>' or "
                      "'generate: <spec>'", path=str(path), field="graph")


def dataset_graph(cfg: dict[str, Any], base: Path, kwargs: dict[str, Any]) -> Any:
    """The graph of ``hgb:`` (read by :func:`~graphshard.datasets.load_hgb`, whose labelled
    type becomes the default ``target``) or ``shchur:`` (read by
    :func:`~graphshard.datasets.load_shchur_npz` with Shchur et al.'s split drawn with
    ``shchur_split_seed``, default 0, as ``train_mask``/``val_mask``/``test_mask``)."""
    if "shchur" in cfg:
        from ..datasets import load_shchur_npz

        return load_shchur_npz(_where(cfg, "shchur", base),
                               split_seed=int(cfg.get("shchur_split_seed", 0)),
                               undirected=bool(cfg.get("shchur_undirected", False)),
                               largest_component=bool(cfg.get("shchur_largest_component",
                                                              False)))
    from ..datasets import load_hgb

    opts = {k[4:]: cfg[k] for k in ("hgb_test_file", "hgb_val_ratio") if k in cfg}
    ds = load_hgb(_where(cfg, "hgb", base), **opts)
    kwargs.setdefault("target", ds.target)
    return ds.graph
