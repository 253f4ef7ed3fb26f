"""End-to-end ``partition_graph`` on a harness graph, as an ``--external`` peer.

Run through the shared harness so that DGL 2.1's ``partition_graph`` and pymetis run on the
same graph in the same pass, each in its own process, timed and measured alike::

    bash benchmarks/run_partition_vs_dgl.sh            # graphs + peers + table

Called by the harness as::

    python benchmarks/bench_partition_graph.py {npz} {k} {parts} {workdir} [method [budget]]

(``budget``: ``auto``'s ``time_budget``, a multiple of METIS k-way's CPU time.)

It builds the same graph DGL's peer builds (both directions of every undirected edge),
runs ``graphshard.partition_graph`` end to end (assignment, reshuffle, halo, features,
files), saves the assignment in original IDs for the harness to score, and prints the
harness's ``@@RESULT@@`` line.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

import graphshard as gs


def main(argv: list[str]) -> None:
    npz, k, parts_path, workdir = argv[:4]
    method = argv[4] if len(argv) > 4 else gs.partition.DEFAULT_METHOD
    budget = float(argv[5]) if len(argv) > 5 else None
    z = np.load(npz)
    src, dst, n = z["src"].astype(np.int64), z["dst"].astype(np.int64), int(z["num_nodes"])
    t0 = time.perf_counter()
    g = gs.graph((np.concatenate([src, dst]), np.concatenate([dst, src])), num_nodes=n)
    del src, dst
    t1 = time.perf_counter()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = Path(workdir) / f"graphshard-{method}{'' if budget is None else f'-{budget:g}'}"
    result = gs.partition.build_partitions(g, "bench", int(k), out, part_method=method,
                                           time_budget=budget)
    t2 = time.perf_counter()
    np.save(parts_path, result.parts)
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print("@@RESULT@@ " + json.dumps({
        "prep_s": round(t1 - t0, 3), "part_s": round(t2 - t1, 3), "rss_base_mb": base,
        "out_mb": round(size / 2**20, 1), "method": result.report.method,
        "time_budget": budget, "phases": result.report.seconds,
        "peak_rss_self_mb": _vm_hwm_mb(), "version": gs.__version__}), flush=True)


def _vm_hwm_mb() -> float:
    """This process's own peak RSS (VmHWM).  The harness reports ``ru_maxrss``, which Linux
    carries over ``exec`` from the forked parent, so a peer that peaks below the harness
    driver shows the driver's figure there."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


if __name__ == "__main__":
    main(sys.argv[1:])
