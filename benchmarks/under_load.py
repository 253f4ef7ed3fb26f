"""Run a command while busy processes load the machine; report its time and the load.

Issue 40: on a shared or busy machine nothing may depend on a fixed deadline being
enough.  This script starts ``--busy N`` processes that spin on the CPU, runs the command
(default: the distributed and training tests, as the README's test command runs them),
samples the load average while it runs, stops the spinners (its own children only), and
prints the command's exit status, wall time and load.  It exits with the command's status.

One command each::

    python benchmarks/under_load.py                       # tests/distributed + tests/train, 8 busy
    python benchmarks/under_load.py --busy 8 -- bash .ci/run        # the README's test command
    python benchmarks/under_load.py --busy 0 -- python -m pytest -q -n 2   # the idle baseline

The spinners run at the same priority as the command (``--nice`` lowers theirs).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time

DEFAULT_COMMAND = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                   "tests/distributed", "tests/train"]


def _spin(nice: int) -> None:
    """Keep one CPU busy until killed."""
    if nice:
        os.nice(nice)
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def _sample_load(stop: threading.Event, samples: list[float], every: float) -> None:
    while not stop.wait(every):
        samples.append(os.getloadavg()[0])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--busy", type=int, default=8, help="spinning processes (default 8)")
    p.add_argument("--nice", type=int, default=0, help="niceness added to the spinners")
    p.add_argument("--every", type=float, default=5.0, help="seconds between load samples")
    p.add_argument("command", nargs="*", help="the command (after --); default: "
                   + " ".join(DEFAULT_COMMAND[2:]))
    args = p.parse_args(argv)
    command = args.command or DEFAULT_COMMAND
    ctx = mp.get_context("spawn")
    spinners = [ctx.Process(target=_spin, args=(args.nice,), daemon=True)
                for _ in range(max(0, args.busy))]
    for s in spinners:
        s.start()
    samples: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_load, args=(stop, samples, args.every),
                               daemon=True)
    sampler.start()
    clock = time.perf_counter()
    try:
        status = subprocess.call(command)
    finally:
        seconds = time.perf_counter() - clock
        stop.set()
        for s in spinners:  # our own children, by handle: never by name
            s.kill()
        for s in spinners:
            s.join()
    samples = samples or [os.getloadavg()[0]]
    print(f"under_load: {' '.join(command)}\n"
          f"under_load: busy processes {args.busy} (nice +{args.nice}), cores "
          f"{os.cpu_count()}, exit status {status}, {seconds:.0f} s, load average (1 min) "
          f"mean {sum(samples) / len(samples):.1f}, max {max(samples):.1f} "
          f"({len(samples)} samples)", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
