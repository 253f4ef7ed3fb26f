"""PyG's (and DGL's) own scripts on PyG's in-memory data and on graphshard: accuracy and epoch time.

    .venv/bin/python benchmarks/bench_pyg_scripts.py [--seeds 5] [--epochs-scale 1.0]
        [--scripts unsup,kuzu,acm,dgl]

The training logic of each script (issue 46's compatibility suite, tests/pyg_scripts.py,
which tests/pyg/test_pyg_scripts.py checks) runs on three inputs:

  pyg     PyG's in-memory Data / HeteroData in the original IDs: Cora as PyG's own reader
          (torch_geometric.io.read_planetoid_data) returns it; ACM built from graphshard's
          HGB reader (PyG's HGBDataset wants its own download layout)
  local   graphshard.pyg.remote_backend over the graph assembled from 2 parts (label
          propagation; the partitions' IDs)
  dist    the same over a DistGraph of 2 graph servers on a local Ray (none in this process)

Scripts: unsup (examples/graph_sage_unsup.py, LinkNeighborLoader, unsupervised GraphSAGE +
a linear probe), kuzu (examples/kuzu/papers_100M/train.py on Cora typed as
('paper', 'cites', 'paper')), acm (to_hetero(GraphSAGE) on HGB ACM, with
pyg_scripts.ACM_SETTINGS: mean over edge types, lr 0.005, weight decay 5e-4), dgl (DGL's
examples/distributed/graphsage/node_classification.py recipe).  Seeds x scripts x inputs run
interleaved; each cell shows mean ± sd over the seeds of the test accuracy and of the mean
epoch time, and the epoch time over pyg's.  A seed's sampler and model seeds are the same on
every input, so local and dist see the same batches (checked: equal losses); pyg differs
only by the node numbering.  PyG's own sampler needs pyg-lib or torch-sparse: where either
is installed, pyg's loaders run PyG's own (torch.ops.pyg or torch.ops.torch_sparse, checked on
one batch before the runs; torch-sparse needs torch-scatter and both build from source with
``pip install --no-build-isolation``: benchmarks/TUNING.md); where neither is, they run
graphshard's sampler (over a Graph of PyG's edge_index).  The header names the sampler the pyg
rows used.  Before any timing, our Cora is checked equal to PyG's reader's.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/pyg_scripts.py

# epochs of a run at --epochs-scale 1 (the scripts run 50 / 1 / - / 20: shortened)
EPOCHS = {"unsup": 5, "kuzu": 10, "acm": 5, "dgl": 20}
INPUTS = ("pyg", "local", "dist")


def _cora(folder: Path) -> tuple[Any, Any]:
    """PyG's Cora (Data) and ours (a Graph), checked equal: features, labels, split, and
    the edges as a set (PyG's reader coalesces; ours drops duplicates and self loops)."""
    import torch_geometric.io as pyg_io

    from graphshard.datasets import load_planetoid
    from graphshard.io import apply_edge_policy

    theirs = pyg_io.read_planetoid_data(str(folder), "cora")
    ours = apply_edge_policy(load_planetoid(folder, name="cora", sparse_features=False).graph,
                             self_loops="drop", duplicates="drop")[0]
    n = ours.num_nodes()
    src, dst = ours.edges()
    ei = theirs.edge_index.numpy()
    same = (np.array_equal(ours.ndata["feat"], theirs.x.numpy())
            and np.array_equal(ours.ndata["label"], theirs.y.numpy())
            and all(np.array_equal(ours.ndata[k], getattr(theirs, k).numpy())
                    for k in ("train_mask", "val_mask", "test_mask"))
            and np.array_equal(np.sort(src * n + dst), np.sort(ei[0] * n + ei[1])))
    if not same:
        raise SystemExit("graphshard's Cora differs from PyG's reader's")
    return theirs, ours


def _typed(g: Any) -> Any:
    """A homogeneous graph as the Kùzu example's ('paper', 'cites', 'paper')."""
    import graphshard as gs

    src, dst = g.edges()
    typed = gs.heterograph({("paper", "cites", "paper"): (src, dst)}, {"paper": g.num_nodes()})
    for k, v in g.ndata.items():
        typed.nodes["paper"].data[k] = v
    return typed


def _graph_of(data: Any) -> Any:
    """A graphshard Graph of PyG's Data (same IDs and edge order), for our sampler."""
    import graphshard as gs

    g = gs.graph((data.edge_index[0].numpy(), data.edge_index[1].numpy()),
                 num_nodes=data.num_nodes)
    g.ndata["feat"] = data.x.numpy()
    g.ndata["label"] = data.y.numpy()
    for k in ("train_mask", "val_mask", "test_mask"):
        g.ndata[k] = getattr(data, k).numpy()
    return g


def _pyg_sampler(data: Any) -> tuple[bool, str]:
    """Whether PyG's loaders can sample ``data`` themselves (pyg-lib or torch-sparse), and
    the sampler's name for the header; checked on one batch of a NeighborLoader built without
    a ``neighbor_sampler`` (PyG then builds its own)."""
    import torch_geometric.typing as pyg_typing
    from torch_geometric.loader import NeighborLoader
    from torch_geometric.sampler import NeighborSampler as PygNeighborSampler

    if pyg_typing.WITH_PYG_LIB:
        import pyg_lib

        name = f"PyG's own (pyg-lib {pyg_lib.__version__})"
    elif pyg_typing.WITH_TORCH_SPARSE:
        import torch_scatter
        import torch_sparse

        name = (f"PyG's own (torch-sparse {torch_sparse.__version__}, torch-scatter "
                f"{torch_scatter.__version__}; pyg-lib absent)")
    else:
        return False, "graphshard's (pyg-lib and torch-sparse absent)"
    loader = NeighborLoader(data, [2, 2], batch_size=4)
    batch = next(iter(loader))
    if type(loader.node_sampler) is not PygNeighborSampler or batch.batch_size != 4:
        raise SystemExit(f"PyG's own NeighborLoader did not sample: {loader.node_sampler}")
    return True, name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs-scale", type=float, default=1.0,
                    help=f"epochs per run: this times {EPOCHS} (at least 1)")
    ap.add_argument("--scripts", default=",".join(EPOCHS), help="comma-separated subset")
    ap.add_argument("--out", default=None, help="partition folder (default: a temp folder)")
    args = ap.parse_args()
    scripts = [s for s in args.scripts.split(",") if s]
    if unknown := sorted(set(scripts) - set(EPOCHS)):
        ap.error(f"unknown scripts {unknown}; valid: {sorted(EPOCHS)}")

    import ray
    import torch
    import torch_geometric

    import graphshard as gs
    import pyg_scripts as S
    from _shared import shared_file
    from graphshard.datasets import load_hgb
    from graphshard.pyg import metadata
    from graphshard.runtime.ray import init_ray  # a local Ray on loopback only

    warnings.filterwarnings("ignore", category=UserWarning)  # pyg-lib absent; FX tracing
    out = Path(args.out or tempfile.mkdtemp(prefix="bench_pyg_scripts_"))
    t0 = time.perf_counter()
    pyg_cora, cora = _cora(shared_file("planetoid", "ind.cora.graph").parent)
    own_sampler, sampler_name = _pyg_sampler(pyg_cora)
    print(f"pyg rows' sampler: {sampler_name}")
    graphs = {"cora": cora, "papers": _typed(cora)}
    if "acm" in scripts:
        graphs["acm"] = load_hgb(shared_file("hgb", "ACM.zip"), features=["paper"]).graph
    configs, wholes = {}, {}
    for name, g in graphs.items():
        if not (out / name / f"{name}.json").exists():
            gs.partition_graph(g, name, 2, str(out / name), part_method="lp")
        configs[name] = str(out / name / f"{name}.json")
        wholes[name] = gs.distributed.assemble_graph(configs[name])
    init_ray(ray, num_cpus=2, include_dashboard=False, log_to_driver=False)
    dists = {name: gs.distributed.DistGraph(cfg, colocate=(), timeout=120.0)
             for name, cfg in configs.items()}
    print(f"prepared (readers, partitions, Ray, servers) in {time.perf_counter() - t0:.0f} s")

    ref = _graph_of(pyg_cora)  # PyG's Cora as a Graph: our sampler for the pyg input
    acm = graphs.get("acm")
    # per script: graph name, the pyg input (data, sampler store, split), extra keywords
    ref_typed = _typed(ref)
    mem_store: Any = None if own_sampler else ref
    pyg_inputs = {
        "unsup": (pyg_cora, mem_store, S.split_of(ref)),
        "dgl": (pyg_cora, mem_store, S.split_of(ref)),
        "kuzu": (S.in_memory(ref_typed), None if own_sampler else ref_typed, S.split_of(ref)),
    }
    graph_of = {"unsup": "cora", "dgl": "cora", "kuzu": "papers", "acm": "acm"}
    extra: dict[str, dict[str, Any]] = {"unsup": {}, "dgl": {"num_classes": 7},
                                        "kuzu": {"num_classes": 7}}
    if acm is not None:
        pyg_inputs["acm"] = (S.in_memory(acm), None if own_sampler else acm,
                             S.split_of(acm, "paper"))
        extra["acm"] = {"metadata": metadata(acm), "num_classes": 3, "fanout": 5,
                        "num_nodes": {nt: acm.num_nodes(nt) for nt in acm.ntypes}}
    run_fn = {"unsup": S.sage_unsup, "kuzu": S.kuzu_sage, "acm": S.acm_to_hetero,
              "dgl": S.dgl_node_classification}

    def inputs(script: str) -> dict[str, tuple[Any, Any, Any]]:
        name = graph_of[script]
        whole, dg = wholes[name], dists[name]
        nt = "paper" if script in ("kuzu", "acm") else None
        split = S.split_of(whole, nt)
        return {"pyg": pyg_inputs[script], "local": (S.backend(whole), whole, split),
                "dist": (S.backend(dg), dg, split)}

    prepared = {s: inputs(s) for s in scripts}
    epochs = {s: max(1, round(EPOCHS[s] * args.epochs_scale)) for s in scripts}
    for s in scripts:  # warm-up, untimed: numba's and torch's first calls, Ray's workers
        for data, store, split in prepared[s].values():
            run_fn[s](data, store, split, seed=0, epochs=1, **extra[s])

    acc: dict[tuple[str, str], list[float]] = {}
    sec: dict[tuple[str, str], list[float]] = {}
    t1 = time.perf_counter()
    for seed in range(args.seeds):
        for s in scripts:
            losses = {}
            for kind in INPUTS:
                data, store, split = prepared[s][kind]
                r = run_fn[s](data, store, split, seed=seed, epochs=epochs[s], **extra[s])
                acc.setdefault((s, kind), []).append(r.test_acc)
                sec.setdefault((s, kind), []).append(float(np.mean(r.epoch_s)))
                losses[kind] = r.losses
            if not np.allclose(losses["local"], losses["dist"], rtol=1e-4):
                raise SystemExit(f"{s} seed {seed}: local and dist losses differ "
                                 f"({losses['local']} vs {losses['dist']})")
    print(f"python {platform.python_version()}, torch {torch.__version__}, torch_geometric "
          f"{torch_geometric.__version__}, ray {ray.__version__}, torch threads "
          f"{torch.get_num_threads()}, loadavg {tuple(round(x, 1) for x in os.getloadavg())}")
    print(f"{args.seeds} seeds interleaved in {time.perf_counter() - t1:.0f} s; epochs "
          f"{epochs}; pyg rows' sampler: {sampler_name}")
    print(f"{'script':7} {'input':6} {'test acc':>15} {'acc - pyg':>10} {'epoch s':>15} "
          f"{'time / pyg':>10}")
    for s in scripts:
        base_acc, base_sec = np.mean(acc[s, "pyg"]), np.mean(sec[s, "pyg"])
        for kind in INPUTS:
            a, t = np.array(acc[s, kind]), np.array(sec[s, kind])
            print(f"{s:7} {kind:6} {a.mean():>7.3f} ± {a.std(ddof=1) if len(a) > 1 else 0:.3f} "
                  f"{a.mean() - base_acc:>+10.3f} {t.mean():>7.3f} ± "
                  f"{t.std(ddof=1) if len(t) > 1 else 0:.3f} {t.mean() / base_sec:>9.2f}x")
    for dg in dists.values():
        dg.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
