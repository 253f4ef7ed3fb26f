"""Readers vs raw pyarrow, and Euler JSON vs a json.loads-per-line loop.

    python benchmarks/bench_io.py                       # 10M edges, Euler on 1M edges
    python benchmarks/bench_io.py --edges 1000000 --euler-edges 200000   # quick run

Prints one row per reader: our seconds, the peer's seconds and peer/ours (>= 1 means we are
faster; targets: >= 0.8 against raw pyarrow, >= 3 against the json.loads loop).  Each
figure is the best of ``--repeat`` interleaved runs; outputs are compared before a ratio is
printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

import graphshard as gs
from graphshard.io import read_chunked, read_edgelist, read_euler, write_chunked, write_euler


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        out = None  # free the previous result first: fresh pages cost both sides the same
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def raw_chunks(files: list[Path], reader: Callable[[Path], pa.Table]) -> list[pa.Table]:
    return [reader(f) for f in files]


def json_loop(files: list[Path]) -> dict[str, object]:
    """The baseline: json.loads per line, Python lists, then the same flat arrays."""
    nid, ntype, nw, e_src, e_dst, e_type, e_w = [], [], [], [], [], [], []
    nfeat: dict[tuple[str, str], tuple[list, list]] = {}
    efeat: dict[tuple[str, str], tuple[list, list]] = {}

    def feats(obj: dict, store: dict) -> None:
        for kind in ("uint64", "float", "binary"):
            for slot, v in obj.get(f"{kind}_feature", {}).items():
                vals, lens = store.setdefault((kind, slot), ([], []))
                if kind == "binary":
                    v = list(v.encode())
                vals.extend(v)
                lens.append(len(v))

    for f in files:
        with open(f, "rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                b = json.loads(line)
                nid.append(b["node_id"])
                ntype.append(b["node_type"])
                nw.append(b["node_weight"])
                feats(b, nfeat)
                for e in b.get("edge", []):
                    e_src.append(e["src_id"])
                    e_dst.append(e["dst_id"])
                    e_type.append(e["edge_type"])
                    e_w.append(e["weight"])
                    feats(e, efeat)
    out: dict[str, object] = {
        "node_id": np.array(nid, np.uint64), "node_type": np.array(ntype, np.int64),
        "weight": np.array(nw, np.float32), "src": np.array(e_src, np.uint64),
        "dst": np.array(e_dst, np.uint64), "etype": np.array(e_type, np.int64),
        "eweight": np.array(e_w, np.float32)}
    for side, store in (("n", nfeat), ("e", efeat)):
        for (kind, slot), (vals, lens) in store.items():
            dtype = {"uint64": np.uint64, "float": np.float32, "binary": np.uint8}[kind]
            offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
            out[f"{side}/{kind}_{slot}"] = gs.Ragged(np.array(vals, dtype), offsets)
    return out


def make_graph(num_edges: int, num_nodes: int, seed: int) -> gs.Graph:
    rng = np.random.default_rng(seed)
    return gs.graph((rng.integers(0, num_nodes, num_edges), rng.integers(0, num_nodes, num_edges)),
                    num_nodes=num_nodes)


def make_euler_graph(num_edges: int, seed: int) -> gs.Graph:
    rng = np.random.default_rng(seed)
    nu, ni = max(num_edges // 20, 2), max(num_edges // 20, 2)
    g = gs.heterograph({("user", "click", "item"): (rng.integers(0, nu, num_edges // 2),
                                                    rng.integers(0, ni, num_edges // 2)),
                        ("item", "by", "user"): (rng.integers(0, ni, num_edges // 2),
                                                 rng.integers(0, nu, num_edges // 2))},
                       num_nodes_dict={"user": nu, "item": ni})
    for t, n in (("user", nu), ("item", ni)):
        g.nodes[t].data["weight"] = rng.random(n).astype(np.float32)
        g.nodes[t].data["x"] = rng.standard_normal((n, 4)).astype(np.float32)
        lens = rng.integers(0, 5, n)
        off = np.concatenate([[0], np.cumsum(lens)])
        g.nodes[t].data["tags"] = gs.Ragged(rng.integers(0, 10**6, off[-1]).astype(np.uint64), off)
        g.nodes[t].data["name"] = gs.Ragged.from_rows([f"n{i}" for i in range(n)])
    for et in g.canonical_etypes:
        m = g.num_edges(et)
        g.edges[et].data["weight"] = rng.random(m).astype(np.float32)
        g.edges[et].data["t"] = rng.standard_normal((m, 1)).astype(np.float32)
    return g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--euler-edges", type=int, default=1_000_000)
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="work folder (default: a temp folder)")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the files already in --dir (same sizes) instead of writing them")
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="bench_io_"))
    work.mkdir(parents=True, exist_ok=True)
    nodes = max(args.edges // 10, 2)
    reuse = args.reuse and (work / "euler" / "meta.json").is_file()
    if not reuse:
        g = make_graph(args.edges, nodes, 0)
        s, d = g.edges()
        table = pa.table({"src": s, "dst": d})
        pacsv.write_csv(table, work / "edges.csv")
        pq.write_table(table, work / "edges.parquet")
        for fmt in ("csv", "parquet"):
            write_chunked(g, work / f"chunked_{fmt}", args.chunks, fmt=fmt)
    t = time.perf_counter()
    eg = make_euler_graph(args.euler_edges, 1)
    if not reuse:
        write_euler(eg, work / "euler", num_partitions=2)
    euler_write = time.perf_counter() - t
    # warm caches and imports once
    read_edgelist(work / "edges.csv")
    rows = []

    def row(name: str, ours: Callable, peer: Callable, check: Callable, peer_name: str,
            target: float) -> None:
        t_ours = t_peer = float("inf")
        for _ in range(args.repeat):  # interleaved, so load from other processes hits both
            t, out_ours = best(ours, 1)
            t_ours = min(t_ours, t)
            t, out_peer = best(peer, 1)
            t_peer = min(t_peer, t)
        check(out_ours, out_peer)
        rows.append((name, t_ours, peer_name, t_peer, t_peer / t_ours, target))

    def same_edges(ours: gs.Graph, raw) -> None:
        tabs = raw if isinstance(raw, list) else [raw]
        src = np.concatenate([t.column(0).to_numpy() for t in tabs])
        assert np.array_equal(ours.edges()[0], src), "outputs differ"

    row("edgelist CSV", lambda: read_edgelist(work / "edges.csv"),
        lambda: pacsv.read_csv(work / "edges.csv"), same_edges, "pyarrow.csv.read_csv", 0.8)
    row("edgelist Parquet", lambda: read_edgelist(work / "edges.parquet"),
        lambda: pq.read_table(work / "edges.parquet"), same_edges,
        "pyarrow.parquet.read_table", 0.8)
    csv_files = sorted((work / "chunked_csv" / "edges").iterdir())
    opts = (pacsv.ReadOptions(autogenerate_column_names=True), pacsv.ParseOptions(delimiter=" "))
    row("chunked (csv)", lambda: read_chunked(work / "chunked_csv"),
        lambda: raw_chunks(csv_files, lambda f: pacsv.read_csv(f, read_options=opts[0],
                                                                parse_options=opts[1])),
        same_edges, "read_csv per chunk", 0.8)
    pq_files = sorted((work / "chunked_parquet" / "edges").iterdir())
    row("chunked (parquet)", lambda: read_chunked(work / "chunked_parquet"),
        lambda: raw_chunks(pq_files, pq.read_table), same_edges, "read_table per chunk", 0.8)
    efiles = sorted((work / "euler").glob("graph_*.json"))

    def same_euler(ours: gs.Graph, raw: dict) -> None:
        assert ours.num_edges() == len(raw["src"]) and ours.num_nodes() == len(raw["node_id"])
        ids = np.sort(np.concatenate([ours.nodes[t].data["node_id"] for t in ours.ntypes]))
        assert np.array_equal(ids, np.sort(raw["node_id"])), "outputs differ"

    row("Euler JSON lines", lambda: read_euler(work / "euler"), lambda: json_loop(efiles),
        same_euler, "json.loads loop", 3.0)
    mb = sum(f.stat().st_size for f in efiles) / 1e6
    print(f"graphshard {gs.__version__} | pyarrow {pa.__version__} | numpy {np.__version__} | "
          f"python {platform.python_version()} | pyarrow threads {pa.cpu_count()} | "
          f"cpus {os.cpu_count()} | loadavg {os.getloadavg()[0]:.2f}")
    print(f"graph: {args.edges:,} edges, {nodes:,} nodes, {args.chunks} chunks; Euler: "
          f"{eg.num_edges():,} edges, {eg.num_nodes():,} nodes, {mb:.0f} MB JSON "
          f"(write_euler {euler_write:.1f}s{', reused' if reuse else ''}); best of {args.repeat}")
    print(f"{'reader':<20}{'ours s':>9}  {'peer':<28}{'peer s':>9}{'peer/ours':>11}"
          f"{'target':>8}")
    for name, to, pn, tp, ratio, target in rows:
        flag = "ok" if ratio >= target else "BELOW"
        print(f"{name:<20}{to:>9.3f}  {pn:<28}{tp:>9.3f}{ratio:>10.2f}x{target:>7.1f}x {flag}")


if __name__ == "__main__":
    main()
