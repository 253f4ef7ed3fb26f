"""Write graphs in the shared harness's ``.npz`` layout (undirected, src < dst, unique).

    python benchmarks/make_npz.py sbm --nodes 1000000 --edges 10000000 -o /tmp/graphs/sbm-1m.npz
    python benchmarks/make_npz.py metis ../shared/data/walshaw/graphs/wave.graph.bz2 -o wave.npz
"""

from __future__ import annotations

import argparse

import numpy as np

import graphshard as gs


def undirected_unique(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge once as ``(min, max)``, sorted, no self loops."""
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keep = lo != hi
    key = np.unique(lo[keep] * np.int64(n) + hi[keep])
    return key // n, key % n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["sbm", "metis"])
    ap.add_argument("path", nargs="?")
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    if a.kind == "sbm":
        g = gs.datasets.sbm(a.nodes, a.edges, num_blocks=64, p_in=0.7, num_features=0,
                            seed=a.seed)
    else:
        g = gs.io.read_metis(a.path)
    src, dst = undirected_unique(*g.edges(), g.num_nodes())
    np.savez(a.out, src=src, dst=dst, num_nodes=g.num_nodes(), kind=a.kind, seed=a.seed,
             params=str(vars(a)))
    print(f"{a.out}: {g.num_nodes():,} nodes, {len(src):,} undirected edges")


if __name__ == "__main__":
    main()
