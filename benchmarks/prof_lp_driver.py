"""Where lp's driver holds memory: tracemalloc's peak in each phase of ``graphshard assign -m lp``.

    python benchmarks/prof_lp_driver.py CHUNKED OUT [--parts 16] [--engine ray] [--src SRC]

Runs the command in this process with each phase of :func:`graphshard.partition.lp.lp_assign`
wrapped (the first pass over the edge chunks, level 0's shards, clustering, contraction,
thinning, the coarsest graph's gather, refinement) and prints, per phase, the peak of the
memory numpy and Python allocated (tracemalloc) and what was held when it started, then the
driver's VmHWM (the peak resident set, tracing's own overhead included).  ``--src`` imports
graphshard from another checkout's ``src`` (an older commit), to compare two versions on the
same input one after the other.  Make the input with ``graphshard chunk --generate
rmat:scale=23 --chunks 16 --out CHUNKED``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
import tracemalloc
from typing import Any

PHASES = {"level0_degrees": "level-0 degrees (first pass)",
          "level0_from_chunks": "level-0 shards", "coarsen": "clustering",
          "contract_level": "contraction", "thin_level": "thinning",
          "gather": "gather of the coarsest", "_refine": "refinement"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chunked")
    ap.add_argument("out")
    ap.add_argument("--parts", type=int, default=16)
    ap.add_argument("--engine", default="ray", choices=["ray", "local"])
    ap.add_argument("--src", help="import graphshard from this src folder")
    args = ap.parse_args()
    if args.src:
        sys.path.insert(0, args.src)
    tracemalloc.start()
    import graphshard
    from graphshard.cli import main as cli
    from graphshard.partition.lp import driver

    peaks: dict[str, list[float]] = {}

    def wrap(name: str) -> None:
        real = getattr(driver, name)

        @functools.wraps(real)
        def run(*a: Any, **k: Any) -> Any:
            held, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()  # phases run one at a time (the first pass alone too)
            t = time.perf_counter()
            out = real(*a, **k)
            _, peak = tracemalloc.get_traced_memory()
            p = peaks.setdefault(PHASES[name], [0, 0, 0.0])
            p[0], p[1] = max(p[0], peak), max(p[1], held)
            p[2] += time.perf_counter() - t
            return out
        setattr(driver, name, run)

    for name in PHASES:
        wrap(name)
    t = time.perf_counter()
    try:
        cli(["-q", "assign", args.chunked, "-k", str(args.parts), "-m", "lp", "--engine",
             args.engine, "--out", args.out])
    except SystemExit as exc:
        if exc.code:
            raise
    with open("/proc/self/status") as status:
        hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    print(f"graphshard from {graphshard.__file__}; {time.perf_counter() - t:.1f} s; "
          f"driver VmHWM {hwm / 1024:.0f} MiB")
    print("| phase | peak traced MiB | held at its start MiB | seconds |")
    print("|---|---:|---:|---:|")
    for phase, (peak, held, seconds) in peaks.items():
        print(f"| {phase} | {peak / 2**20:.0f} | {held / 2**20:.0f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
