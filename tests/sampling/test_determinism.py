"""Same seed -> same result on 1 and 2 numba threads (draws are keyed, not sequenced)."""

from __future__ import annotations

import os
import sys

from waiting import run_while_busy

_SCRIPT = r"""
import hashlib, numpy as np, graphshard as gs
from graphshard.sampling import *
rng = np.random.default_rng(0)
n = 3000
src = rng.integers(0, n, 40000); dst = (src * 7 + rng.integers(0, 50, 40000)) % n
g = gs.graph((src, dst), num_nodes=n)
g.edata["w"] = rng.random(g.num_edges())
h = hashlib.sha256()
seeds = np.arange(0, n, 2)
for kw in ({}, {"replace": True}, {"prob": "w"}, {"prob": "w", "replace": True}):
    r = sample_neighbors(g, seeds, 5, seed=3, **kw)
    h.update(r.edges()[2].tobytes())
b = sample_blocks(g, seeds[:500], [4, 3], seed=4)
for blk in b.blocks:
    h.update(blk.src_nodes["_N"].tobytes()); h.update(blk.src[("_N", "_E", "_N")].tobytes())
w = random_walk(g, seeds, 10, walk_times=2, seed=5, restart_prob=0.05)
h.update(w.traces.tobytes())
h.update(random_walk(g, seeds, 10, prob="w", seed=5).traces.tobytes())
h.update(node2vec_walk(g, seeds, 10, p=0.5, q=2.0, seed=5).traces.tobytes())
p = skip_gram_pairs(w, 3, random_window=True, seed=6)
h.update(p.src.tobytes()); h.update(p.dst.tobytes())
h.update(negative_sample(g, 5000, distribution="degree", seed=7).tobytes())
print(h.hexdigest())
"""


def _digest(threads: int) -> str:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = run_while_busy([sys.executable, "-c", _SCRIPT], f"sampling with {threads} threads",
                         env=env, check=True)
    return out.stdout.strip()


def test_one_and_two_threads_agree():
    one, two = _digest(1), _digest(2)
    assert len(one) == 64
    assert one == two
