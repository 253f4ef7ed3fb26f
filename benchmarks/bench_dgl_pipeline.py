"""DGL's own distributed partitioning pipeline beside ours, on the same chunked graph.

One command (DGL's ``tools/`` folder from dmlc/dgl at the tag of the installed DGL, and a
Python that imports that DGL)::

    python benchmarks/bench_dgl_pipeline.py --dgl-tools /tmp/dgl-tools \\
        --dgl-python /tmp/venv-dgl/bin/python [--world-sizes 1,2] [--reps 1]

Skips with a message (exit 0) when the tools folder or the DGL Python is absent.  In one
pass, one run at a time (reps interleaved: DGL, ours, DGL, ours, ...):

1. checks the chunked input (default: the one ``bench_pipeline.py`` writes) against what
   DGL's tools accept, prints every incompatibility found, and writes a DGL-readable copy
   (``num_nodes_per_type`` / ``num_edges_per_type`` added, numpy edge chunks rewritten as
   Parquet, the fastest edge format DGL's dispatch reads; the copy's time is not counted);
2. step 1: DGL ``partition_algo/random_partition.py`` (unchanged; its global NumPy RNG
   seeded with ``--seed`` first) and ``graphshard assign --method random``;
3. step 2: DGL ``distpartitioning/data_proc_pipeline.py`` with world size 1 and 2 on
   localhost (each rank started as ``dispatch_data.py``/``distgraphlaunch.py`` would start
   it over ssh, with the same environment variables: ``RANK``, ``MASTER_ADDR``, ...; no
   sshd runs here), and ``graphshard dispatch`` on DGL's assignment of the DGL-readable
   copy (same input, same assignment) and on our own assignment of the original input (our
   normal path); every run saves orig node and edge IDs;
4. unless ``--no-probe``, runs DGL's tools on the original input and prints the exact
   errors they raise;
5. prints seconds, edges/s and peak RSS (sum over the process tree, sampled every 0.2 s;
   medians over ``--reps``) side by side with DGL/ours ratios; then, unless
   ``--no-check``, checks our partitions of DGL's assignment against DGL's: the shared
   JSON config keys, and per part the inner nodes, inner edges, halo nodes and local edges
   compared through the orig ID maps (DGL orders nodes inside a part differently), the
   owner of every node against the assignment and every edge's endpoints against the input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pipeline import write_rmat_chunks

DGL_EDGE_FORMATS = ("csv", "parquet")  # what DGL 2.1's dataset_utils.get_dataset reads
CONFIG_KEYS = ("graph_name", "num_parts", "halo_hops", "num_nodes", "num_edges", "ntypes",
               "etypes", "node_map", "edge_map")

# Runs under the DGL Python: dumps one DGL partition folder to .npz files for the check.
DGL_DUMP = r"""
import sys, numpy as np, dgl
from dgl.data.utils import load_tensors
out, parts, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
for p in range(k):
    g = dgl.load_graphs(f"{parts}/part{p}/graph.dgl")[0][0]
    s, d = g.edges()
    arrays = {"nid": g.ndata["_ID"].numpy(), "inner": g.ndata["inner_node"].numpy() != 0,
              "eid": g.edata["_ID"].numpy(), "inner_edge": g.edata["inner_edge"].numpy() != 0,
              "src": s.numpy(), "dst": d.numpy()}
    for kind in ("orig_nids", "orig_eids"):
        for name, t in load_tensors(f"{parts}/part{p}/{kind}.dgl").items():
            arrays[f"{kind}::{name}"] = t.numpy()
    np.savez(f"{out}/part{p}.npz", **arrays)
"""


@dataclass(frozen=True)
class Run:
    """One measured command: wall seconds, peak RSS (MiB), exit code, last error line."""

    name: str
    seconds: float
    peak_total_mb: float
    peak_process_mb: float
    returncode: int
    error: str
    log: Path
    note: str = ""


def free_port() -> int:
    """A free TCP port on localhost for one gloo rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_measured(name: str, cmd: list[str], log: Path, *, env: dict[str, str] | None = None,
                 timeout: float = 1800.0) -> Run:
    """Run ``cmd`` in its own session; sample RSS of it and all its descendants every 0.2 s."""
    start = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, **(env or {})}, start_new_session=True)
    root = psutil.Process(proc.pid)
    peak_one, peak_sum, stop = [0.0], [0.0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            with contextlib.suppress(psutil.Error):
                rss = []
                for p in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        rss.append(p.memory_info().rss)
                peak_sum[0] = max(peak_sum[0], sum(rss))
                peak_one[0] = max(peak_one[0], *rss, 0)
            time.sleep(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # only the session this run started
        code = proc.wait()
    seconds = time.perf_counter() - start
    stop.set()
    thread.join()
    error = ""
    if code:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
        error = lines[-1].strip() if lines else f"exit code {code}"
    return Run(name, seconds, peak_sum[0] / 2**20, peak_one[0] / 2**20, code, error, log)


def dgl_incompatibilities(meta: dict[str, Any]) -> list[str]:
    """What in a chunked ``metadata.json`` DGL 2.1's tools reject (read from their source)."""
    found = []
    if "num_nodes_per_type" not in meta:
        found.append("metadata.json has no 'num_nodes_per_type' (per-type totals): DGL's "
                     "random_partition.py and data_shuffle.py index it directly")
    for et, spec in meta["edges"].items():
        fmt = spec["format"]["name"]
        if fmt not in DGL_EDGE_FORMATS:
            found.append(f"edges[{et!r}] are in format {fmt!r}: DGL's dispatch reads edge "
                         f"chunks only as {' or '.join(DGL_EDGE_FORMATS)} (its docs list "
                         "numpy for every chunk file)")
    return found


def dgl_compatible_copy(graph: Path, out: Path) -> tuple[Path, float]:
    """Copy of the chunked graph that DGL's tools read: totals added, edges as Parquet."""
    meta = json.loads((graph / "metadata.json").read_text())
    start = time.perf_counter()
    if (out / "metadata.json").exists():
        return out, 0.0
    (out / "edges").mkdir(parents=True, exist_ok=True)
    meta["num_nodes_per_type"] = [int(sum(c)) for c in meta["num_nodes_per_chunk"]]
    meta["num_edges_per_type"] = [int(sum(c)) for c in meta["num_edges_per_chunk"]]
    for ei, (et, spec) in enumerate(meta["edges"].items()):
        if spec["format"]["name"] in DGL_EDGE_FORMATS:
            spec["data"] = [str(graph / f) for f in spec["data"]]
            continue
        files = []
        for ci, f in enumerate(spec["data"]):
            arr = np.load(graph / f, mmap_mode="r")
            name = f"edges/{ei}-{ci}.parquet"
            pq.write_table(pa.table({"src": np.ascontiguousarray(arr[:, 0]),
                                     "dst": np.ascontiguousarray(arr[:, 1])}), out / name)
            files.append(name)
        meta["edges"][et] = {"format": {"name": "parquet"}, "data": files}
    for kind in ("node_data", "edge_data"):
        for feats in meta.get(kind, {}).values():
            for spec in feats.values():
                spec["data"] = [str(graph / f) for f in spec["data"]]
    (out / "metadata.json").write_text(json.dumps(meta))
    return out, time.perf_counter() - start


def dgl_env(tools: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment of a DGL tools process."""
    return {"DGLBACKEND": "pytorch", "PYTHONPATH": str(tools), **(extra or {})}


def dgl_assign_cmd(py: str, tools: Path, graph: Path, out: Path, k: int, seed: int
                   ) -> list[str]:
    """DGL's random_partition.py, unchanged, with NumPy's global RNG seeded first."""
    script = tools / "partition_algo" / "random_partition.py"
    argv = [str(script), "--in_dir", str(graph), "--out_dir", str(out),
            "--num_partitions", str(k)]
    code = (f"import runpy, sys, numpy; numpy.random.seed({seed}); sys.argv = {argv!r}; "
            f"sys.path.insert(0, {str(script.parent)!r}); "  # as `python script.py` does
            f"runpy.run_path({str(script)!r}, run_name='__main__')")
    return [py, "-c", code]


def dgl_dispatch_cmd(py: str, tools: Path, graph: Path, assign: Path, out: Path, k: int,
                     world: int, timeout: int) -> list[str]:
    """All ranks of DGL's data_proc_pipeline.py on localhost under one shell.

    ``distgraphlaunch.py`` runs each rank over ssh as ``(export DGL_IP_CONFIG=...
    DGL_NUM_SERVER=1 PYTHONPATH=... RANK=r MASTER_ADDR=... MASTER_PORT=...; python
    data_proc_pipeline.py ...)``; this runs the same command lines without the ssh hop.
    """
    ip_config = out.parent / f"ip_config-{world}.txt"
    ip_config.write_text("127.0.0.1\n" * world)
    port = free_port()
    args = [py, str(tools / "distpartitioning" / "data_proc_pipeline.py"),
            "--world-size", str(world), "--partitions-dir", str(assign),
            "--input-dir", str(graph), "--graph-name", json.loads(
                (graph / "metadata.json").read_text())["graph_name"],
            "--schema", "metadata.json", "--num-parts", str(k), "--output", str(out),
            "--process-group-timeout", str(timeout), "--log-level", "INFO",
            "--save-orig-nids", "--save-orig-eids"]
    lines = []
    for rank in range(world):
        env = dgl_env(tools, {"DGL_IP_CONFIG": str(ip_config), "DGL_NUM_SERVER": "1",
                              "RANK": str(rank), "MASTER_ADDR": "127.0.0.1",
                              "MASTER_PORT": str(port)})
        pairs = " ".join(f"{key}={shlex.quote(v)}" for key, v in env.items())
        lines.append(f"env {pairs} {shlex.join(args)} & p{rank}=$!")
    waits = "; ".join(f"wait $p{r} || rc=1" for r in range(world))
    return ["bash", "-c", "rc=0; " + "; ".join(lines) + f"; {waits}; exit $rc"]


def dump_dgl_parts(py: str, tools: Path, parts: Path, out: Path, k: int) -> None:
    """Dump DGL's partitions to ``out/part<i>.npz`` with the DGL Python (for the check)."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([py, "-c", DGL_DUMP, str(out), str(parts), str(k)], check=True,
                   env={**os.environ, **dgl_env(tools)}, capture_output=True)


def _part_arrays(ours_cfg: Path, cfg: dict[str, Any], dump: Path, p: int
                 ) -> dict[str, dict[str, np.ndarray]]:
    """One part of both outputs as plain arrays: orig IDs, local _ID, inner flags, edges."""
    from safetensors.numpy import load_file

    import graphshard as gs

    (ntype,), (etype,) = list(cfg["ntypes"]), list(cfg["etypes"])
    g = gs.load_partition(ours_cfg, p)[0]
    ids = load_file(str(ours_cfg.parent / cfg[f"part-{p}"]["orig_ids"]))
    src, dst = g.edges()
    d = np.load(dump / f"part{p}.npz")
    return {
        "ours": {"orig_n": ids[f"node/{ntype}"], "orig_e": ids[f"edge/{etype}"],
                 "nid": np.asarray(g.ndata["_ID"]), "inner": np.asarray(g.ndata["inner_node"]),
                 "eid": np.asarray(g.edata["_ID"]), "src": src, "dst": dst},
        "DGL": {"orig_n": d[f"orig_nids::{ntype}"], "orig_e": d[f"orig_eids::{etype}"],
                "nid": d["nid"], "inner": d["inner"], "eid": d["eid"], "src": d["src"],
                "dst": d["dst"]}}


def _edge_table(a: dict[str, np.ndarray], node_s2o: np.ndarray, edge_s2o: np.ndarray
                ) -> np.ndarray:
    """Rows (orig edge ID, orig src, orig dst) of a part's local edges, sorted."""
    table = np.stack([edge_s2o[a["eid"]], node_s2o[a["nid"][a["src"]]],
                      node_s2o[a["nid"][a["dst"]]]], axis=1)
    return table[np.argsort(table[:, 0], kind="stable")]


def _input_edges(graph: Path, etype: str) -> tuple[np.ndarray, np.ndarray]:
    """All edges of one type of the chunked input, in original edge ID order."""
    from graphshard.io.chunked import iter_edge_chunks, load_chunked_meta

    chunks = list(iter_edge_chunks(load_chunked_meta(graph), etype))
    return np.concatenate([c.src for c in chunks]), np.concatenate([c.dst for c in chunks])


def compare_with_dgl(ours_cfg: Path, dgl_dir: Path, dump: Path, assignment: np.ndarray,
                     graph: Path) -> tuple[list[str], list[str]]:
    """Our partitions vs DGL's for the same assignment (homogeneous graphs).

    Shuffled IDs are compared through the orig ID maps, since DGL's pipeline orders the
    nodes and edges inside a part differently from ours (which keeps original-ID order).
    Checks the config keys both formats share, and per part: inner nodes, inner edges, halo
    nodes and every local edge (orig edge ID, orig src, orig dst), plus the owner of every
    node against the assignment and every edge's endpoints against the input.  Returns
    (differences, notes); no differences = the same partitions up to the order in a part.
    """
    cfg = json.loads(ours_cfg.read_text())
    theirs = json.loads((dgl_dir / "metadata.json").read_text())
    diffs = [f"config {key}: ours {cfg.get(key)!r} vs DGL {theirs.get(key)!r}"
             for key in CONFIG_KEYS if cfg.get(key) != theirs.get(key)]
    parts = [_part_arrays(ours_cfg, cfg, dump, p) for p in range(int(cfg["num_parts"]))]
    who = ("ours", "DGL")
    # part p owns shuffled IDs node_map[p]: the parts' maps concatenated = shuffled -> orig
    n_s2o = {w: np.concatenate([x[w]["orig_n"] for x in parts]) for w in who}
    e_s2o = {w: np.concatenate([x[w]["orig_e"] for x in parts]) for w in who}
    src, dst = _input_edges(graph, next(iter(cfg["etypes"])))
    notes = []
    for p, x in enumerate(parts):
        o, t = x["ours"], x["DGL"]
        if not np.array_equal(o["orig_n"], t["orig_n"]):
            notes.append(f"part {p}: DGL orders the inner nodes differently")
        if not np.array_equal(o["orig_e"], t["orig_e"]):
            notes.append(f"part {p}: DGL orders the inner edges differently")
        tables = {w: _edge_table(x[w], n_s2o[w], e_s2o[w]) for w in who}
        checks = {
            "inner nodes": (np.sort(o["orig_n"]), np.sort(t["orig_n"])),
            "inner edges": (np.sort(o["orig_e"]), np.sort(t["orig_e"])),
            "halo nodes": (np.sort(n_s2o["ours"][o["nid"][~o["inner"]]]),
                           np.sort(n_s2o["DGL"][t["nid"][~t["inner"]]])),
            "local edges (orig eid, src, dst)": (tables["ours"], tables["DGL"])}
        for what, (a, b) in checks.items():
            if a.shape != b.shape or not np.array_equal(a, b):
                diffs.append(f"part {p}: {what} differ (ours {a.shape}, DGL {b.shape})")
        for w in who:
            tab = tables[w]
            bad = np.flatnonzero((src[tab[:, 0]] != tab[:, 1]) | (dst[tab[:, 0]] != tab[:, 2]))
            if len(bad):
                diffs.append(f"{w} part {p}: {len(bad)} edges whose endpoints are not the "
                             f"input's (first: orig edge {tab[bad[0], 0]})")
    for w in who:
        owner = np.full(len(assignment), -1, dtype=np.int64)
        for p, x in enumerate(parts):
            owner[x[w]["orig_n"]] = p
        bad = np.flatnonzero(owner != assignment)
        if len(bad):
            diffs.append(f"{w}: {len(bad)} nodes not in the part the assignment gives "
                         f"(first: node {bad[0]})")
    return diffs, notes


def ours_cmds(gs_py: str, graph: Path, assign: Path, parts: Path, k: int, seed: int,
              budget: str, engine: str) -> tuple[list[str], list[str]]:
    """``graphshard assign --method random`` and ``graphshard dispatch`` command lines."""
    cli = [gs_py, "-m", "graphshard.cli", "-q"]
    return ([*cli, "assign", str(graph), "-k", str(k), "-m", "random", "--seed", str(seed),
             "--out", str(assign), "--engine", engine],
            [*cli, "dispatch", str(graph), str(assign), "--out", str(parts),
             "--memory-budget", budget, "--save-orig-nids", "--save-orig-eids",
             "--engine", engine])


def probe_original(a: argparse.Namespace, graph: Path, assign: Path) -> list[str]:
    """Run DGL's tools on the original input; return the exact errors they raise."""
    errors = []
    work = a.workdir / "probe"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(parents=True)
    r = run_measured("probe assign", dgl_assign_cmd(a.dgl_python, a.dgl_tools, graph,
                                                     work / "assign", a.parts, a.seed),
                     work / "assign.log", env=dgl_env(a.dgl_tools), timeout=a.timeout)
    errors.append(f"random_partition.py on {graph}: "
                  + (f"FAILS: {r.error}" if r.returncode else "ok"))
    meta = json.loads((graph / "metadata.json").read_text())
    if "num_nodes_per_type" not in meta:  # isolate the edge-format problem
        meta["num_nodes_per_type"] = [int(sum(c)) for c in meta["num_nodes_per_chunk"]]
        meta["num_edges_per_type"] = [int(sum(c)) for c in meta["num_edges_per_chunk"]]
        for spec in meta["edges"].values():
            spec["data"] = [str(graph / f) for f in spec["data"]]
        graph = work / "with-totals"
        graph.mkdir()
        (graph / "metadata.json").write_text(json.dumps(meta))
    r = run_measured("probe dispatch", dgl_dispatch_cmd(
        a.dgl_python, a.dgl_tools, graph, assign, work / "parts", a.parts, 1, a.timeout),
        work / "dispatch.log", timeout=a.timeout)
    errors.append(f"data_proc_pipeline.py on {graph} (totals added, edges as given): "
                  + (f"FAILS: {r.error}" if r.returncode else "ok"))
    return errors


def one_pass(a: argparse.Namespace, graph: Path, dgl_graph: Path) -> list[Run]:
    """DGL and ours, interleaved, one run at a time; outputs removed before each run."""
    w = a.workdir
    gs_assign, gs_dispatch = ours_cmds(sys.executable, graph, w / "assign-ours",
                                       w / "parts-ours", a.parts, a.seed, a.budget, a.engine)
    _, gs_dispatch_dgl = ours_cmds(sys.executable, dgl_graph, w / "assign-dgl",
                                   w / "parts-ours-dgl-assign", a.parts, a.seed, a.budget,
                                   a.engine)
    steps: list[tuple[str, list[str], dict[str, str] | None, Path]] = [
        ("DGL random_partition.py", dgl_assign_cmd(a.dgl_python, a.dgl_tools, dgl_graph,
                                                   w / "assign-dgl", a.parts, a.seed),
         dgl_env(a.dgl_tools), w / "assign-dgl"),
        ("ours assign -m random", gs_assign, None, w / "assign-ours")]
    for i, world in enumerate(a.world_sizes):
        out = w / f"parts-dgl-ws{world}"
        steps.append((f"DGL dispatch ws={world}", dgl_dispatch_cmd(
            a.dgl_python, a.dgl_tools, dgl_graph, w / "assign-dgl", out, a.parts, world,
            a.timeout), None, out))
        if i == 0:
            steps.append(("ours dispatch, DGL assign", gs_dispatch_dgl, None,
                          w / "parts-ours-dgl-assign"))
    steps.append(("ours dispatch, own assign", gs_dispatch, None, w / "parts-ours"))
    runs = []
    for name, cmd, env, out in steps:
        subprocess.run(["rm", "-rf", str(out)], check=True)
        log = w / "logs" / (name.replace(" ", "_").replace(",", "").replace("=", "") + ".log")
        r = run_measured(name, cmd, log, env=env, timeout=a.timeout)
        if r.returncode and name.startswith("DGL dispatch"):
            r = _crash_after_done(r, out, int(name.split("=")[1]))
        print(f"  {name:28} {r.seconds:7.1f} s  peak sum {r.peak_total_mb:7,.0f} MiB"
              + (f"  FAILED: {r.error}" if r.returncode else f"  {r.note}"), file=sys.stderr)
        runs.append(r)
    return runs


def _crash_after_done(r: Run, out: Path, world: int) -> Run:
    """A DGL run whose ranks all logged completion and wrote the config, then crashed at exit.

    Seen here with world size 2: a rank prints "Done with Distributed data processing
    pipeline processing", then the process aborts ("terminate called without an active
    exception", gloo torn down at interpreter exit).  The partitions are complete, so the
    run counts, with a note.
    """
    done = r.log.read_text(errors="replace").count(
        "Done with Distributed data processing pipeline processing")
    if done == world and (out / "metadata.json").is_file():
        return replace(r, returncode=0, note=f"exit code {r.returncode} after all {world} "
                       f"ranks finished (output complete): {r.error[:60]}...")
    return r


def summarise(all_runs: list[list[Run]]) -> dict[str, Run]:
    """Median seconds and peaks per step over the reps (failed runs kept as failed)."""
    out = {}
    for i, first in enumerate(all_runs[0]):
        reps = [runs[i] for runs in all_runs]
        ok = [r for r in reps if r.returncode == 0]
        if not ok:
            out[first.name] = first
            continue
        med = Run(first.name, statistics.median(r.seconds for r in ok),
                  statistics.median(r.peak_total_mb for r in ok),
                  statistics.median(r.peak_process_mb for r in ok), 0, "", first.log,
                  "; ".join(sorted({r.note for r in ok if r.note})))
        out[first.name] = med
    return out


def print_table(res: dict[str, Run], edges: int, inputs: dict[str, str]) -> None:
    """Figures side by side, then DGL/ours ratios."""
    print(f"\n{'step':30} {'input':8} {'seconds':>8} {'edges/s':>11} {'peak sum MiB':>13} "
          f"{'peak 1 proc':>12}")
    for name, r in res.items():
        if r.returncode:
            print(f"{name:30} {inputs[name]:8} FAILED: {r.error}")
            continue
        print(f"{name:30} {inputs[name]:8} {r.seconds:8.1f} {edges / r.seconds:11,.0f} "
              f"{r.peak_total_mb:13,.0f} {r.peak_process_mb:12,.0f}"
              + (f"  (note: {r.note})" if r.note else ""))
    pairs = [("step 1 (assign)", ["DGL random_partition.py"], ["ours assign -m random"])]
    pairs += [(f"step 2, same input+assignment, DGL ws={n.split('=')[1]}", [n],
               ["ours dispatch, DGL assign"]) for n in res if n.startswith("DGL dispatch")]
    first_ws = next((n for n in res if n.startswith("DGL dispatch")), None)
    if first_ws:
        pairs.append((f"end to end (DGL {first_ws.split()[-1]} vs ours numpy)",
                      ["DGL random_partition.py", first_ws],
                      ["ours assign -m random", "ours dispatch, own assign"]))
    print(f"\n{'DGL / ours':48} {'time (= our edges/s / DGL)':>27} {'peak sum RSS':>13}")
    for label, dgl, ours in pairs:
        runs = [res[n] for n in dgl + ours]
        if any(r.returncode for r in runs):
            print(f"{label:48} {'n/a (a run failed)':>27}")
            continue
        t_d, t_o = (sum(res[n].seconds for n in x) for x in (dgl, ours))
        m_d, m_o = (max(res[n].peak_total_mb for n in x) for x in (dgl, ours))
        print(f"{label:48} {t_d / t_o:27.2f}x {m_d / m_o:12.2f}x")


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dgl-tools", type=Path, default=Path("/tmp/dgl-tools"),
                    help="DGL's tools/ folder (git archive of dmlc/dgl at the DGL tag)")
    ap.add_argument("--dgl-python", default="/tmp/venv-dgl/bin/python",
                    help="a Python that imports dgl (2.1) with torch, pyarrow, pydantic")
    ap.add_argument("--graph", type=Path, default=None,
                    help="chunked input (default: bench_pipeline.py's R-MAT of --nodes/"
                         "--edges/--chunks, written if missing)")
    ap.add_argument("--nodes", type=int, default=1 << 20)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--world-sizes", default="1,2",
                    help="DGL dispatch world sizes (each must divide --parts)")
    ap.add_argument("--reps", type=int, default=1, help="interleaved repetitions (median)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", default="1.5G", help="our dispatch --memory-budget")
    ap.add_argument("--engine", choices=["ray", "local"], default="ray",
                    help="our assign/dispatch engine")
    ap.add_argument("--no-probe", action="store_true",
                    help="skip running DGL's tools on the original input")
    ap.add_argument("--no-check", action="store_true",
                    help="skip comparing our partitions with DGL's")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/graphshard-dgl-bench"))
    ap.add_argument("--jsonl", type=Path, default=None, help="append raw runs here")
    a = ap.parse_args()
    a.world_sizes = [int(x) for x in a.world_sizes.split(",") if x]
    bad = [w for w in a.world_sizes if w < 1 or a.parts % w]
    if bad:
        ap.error(f"--world-sizes: {bad} do not divide --parts {a.parts}")
    return a


def missing_peer(a: argparse.Namespace) -> str:
    """Why DGL's pipeline cannot run here ('' when it can)."""
    need = [a.dgl_tools / "partition_algo" / "random_partition.py",
            a.dgl_tools / "distpartitioning" / "data_proc_pipeline.py"]
    absent = [str(p) for p in need if not p.is_file()]
    if absent:
        return f"DGL tools not found: {', '.join(absent)} (see --dgl-tools)"
    if not Path(a.dgl_python).is_file():
        return f"DGL Python not found: {a.dgl_python} (see --dgl-python)"
    probe = subprocess.run([a.dgl_python, "-c", "import dgl, torch, pyarrow, pydantic; "
                            "print(dgl.__version__, torch.__version__)"],
                           capture_output=True, text=True, env={**os.environ, **dgl_env(
                               a.dgl_tools)})
    if probe.returncode:
        return f"{a.dgl_python} cannot import dgl/torch/pyarrow/pydantic: " + (
            probe.stderr.strip().splitlines() or ["?"])[-1]
    print(f"DGL {probe.stdout.split()[0]}, torch {probe.stdout.split()[1]} "
          f"({a.dgl_python}); tools: {a.dgl_tools}")
    return ""


def main() -> None:
    a = parse_args()
    why = missing_peer(a)
    if why:
        print(f"SKIP: {why}")
        return
    graph = a.graph or Path("/tmp/graphshard-pipeline-bench") / (
        f"rmat-{a.nodes}-{a.edges}-{a.chunks}")
    if a.graph is None:
        write_rmat_chunks(graph, a.nodes, a.edges, a.chunks, a.seed)
    meta = json.loads((graph / "metadata.json").read_text())
    edges = sum(sum(c) for c in meta["num_edges_per_chunk"])
    (a.workdir / "logs").mkdir(parents=True, exist_ok=True)
    print(f"input {graph}: {sum(sum(c) for c in meta['num_nodes_per_chunk']):,} nodes, "
          f"{edges:,} edges, {len(meta['num_edges_per_chunk'][0])} chunks; {a.parts} parts")
    found = dgl_incompatibilities(meta)
    for f in found:
        print(f"INCOMPATIBLE with DGL 2.1 tools: {f}")
    dgl_graph, conv = (dgl_compatible_copy(graph, a.workdir / "dgl-input") if found
                       else (graph, 0.0))
    if found:
        print(f"DGL-readable copy: {dgl_graph} ({conv:.1f} s to write, not counted)")
    all_runs = []
    for rep in range(a.reps):
        print(f"pass {rep + 1}/{a.reps} (loadavg {psutil.getloadavg()[0]:.2f})", file=sys.stderr)
        all_runs.append(one_pass(a, graph, dgl_graph))
        if a.jsonl:
            with a.jsonl.open("a") as fh:
                for r in all_runs[-1]:
                    fh.write(json.dumps({**r.__dict__, "log": str(r.log), "rep": rep,
                                         "edges": edges, "loadavg": psutil.getloadavg()[0]})
                             + "\n")
    if found and not a.no_probe:
        for line in probe_original(a, graph, a.workdir / "assign-dgl"):
            print(f"probe: {line}")
    inputs = {r.name: "parquet" if found and "DGL" in r.name else "as given"
              for r in all_runs[0]}
    print_table(summarise(all_runs), edges, inputs)
    print(f"loadavg after: {psutil.getloadavg()[0]:.2f}")
    if not a.no_check:
        check(a, all_runs[-1], graph)


def check(a: argparse.Namespace, runs: list[Run], graph: Path) -> None:
    """Our partitions of DGL's assignment against each DGL output of the last pass."""
    ours_cfg = next(iter((a.workdir / "parts-ours-dgl-assign").glob("*.json")), None)
    txt = sorted((a.workdir / "assign-dgl").glob("*.txt"))
    if ours_cfg is None or len(txt) != 1:
        print("check: skipped (our run failed, or the graph has several node types)")
        return
    assignment = np.array(txt[0].read_text().split(), dtype=np.int64)
    for r in runs:
        if not r.name.startswith("DGL dispatch") or r.returncode:
            continue
        world = r.name.split("=")[1]
        dgl_dir, dump = a.workdir / f"parts-dgl-ws{world}", a.workdir / f"dump-ws{world}"
        dump_dgl_parts(a.dgl_python, a.dgl_tools, dgl_dir, dump, a.parts)
        diffs, notes = compare_with_dgl(ours_cfg, dgl_dir, dump, assignment, graph)
        print(f"check ours vs DGL ws={world} (same assignment): " + (
            "same config maps; in every part the same inner nodes, inner edges, halo nodes "
            "and local edges; owners = assignment; endpoints = input" if not diffs
            else f"{len(diffs)} differences:\n  " + "\n  ".join(diffs)))
        if notes:
            print(f"  order: {len(notes)} notes, e.g. {notes[0]} (shuffled IDs inside a "
                  "part are not comparable one to one)")
        ours = json.loads(ours_cfg.read_text())
        theirs = json.loads((dgl_dir / "metadata.json").read_text())
        other = sorted(k for k in set(ours) | set(theirs) if k not in CONFIG_KEYS
                       and not k.startswith("part-") and ours.get(k) != theirs.get(k))
        print("  other config keys that differ: " + ", ".join(
            f"{k} (ours {ours.get(k)!r}, DGL {theirs.get(k)!r})" for k in other
            if k != "graphshard") + f"; file names: ours {ours_cfg.name}, DGL metadata.json")

if __name__ == "__main__":
    main()
