"""The processes of a DGL ``DistGraph`` run over a graphshard export, for
``test_dgl_interop.py::test_dgl_dist_graph_machines`` (not a test module itself; the server
role also serves ``benchmarks/bench_dist_client.py --dgl-python``, started by
tests/dgl_machines.py for both).

``python dgl_dist_roles.py server IP_CONFIG PART_CONFIG SERVER_ID NUM_CLIENTS`` runs one
DGL ``DistGraphServer`` (one per machine, i.e. per part) until its clients shut it down;
``python dgl_dist_roles.py client IP_CONFIG REQUEST.json OUT.npz`` connects a client, asks
the ``DistGraph`` what the request names and writes DGL's answers as arrays (no pickle).
DGL and torch are imported only inside the roles, so collecting this file without DGL
(doctests import every module) does nothing.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np


def serve(ip_config: str, part_config: str, server_id: int, num_clients: int) -> None:
    """One DGL graph server for part ``server_id``, as DGL's own tests start them."""
    os.environ["DGL_DIST_MODE"] = "distributed"
    from dgl.distributed import DistGraphServer

    DistGraphServer(server_id, ip_config, 1, num_clients, part_config,
                    graph_format=["csc", "coo"]).start()


def ask(ip_config: str, request: str, out: str) -> None:
    """Connect to the servers, read what ``request`` names, write DGL's answers to ``out``.

    The request holds ``graph_name``, ``ntype``/``feat`` and per-type ``nids`` to read,
    ``etype`` and per-type ``eids`` for ``find_edges``, ``seeds`` (of ``ntype``) and
    ``fanout`` for ``sample_neighbors``.
    """
    os.environ["DGL_DIST_MODE"] = "distributed"
    os.environ["DGL_NUM_SERVER"] = "1"  # servers per machine
    import dgl
    import torch

    with open(request, encoding="utf-8") as f:
        req = json.load(f)
    dgl.distributed.initialize(ip_config)
    try:
        g = dgl.distributed.DistGraph(req["graph_name"])  # book and local part: shared memory
        book = g.get_partition_book()
        nids = torch.tensor(req["nids"], dtype=torch.int64)
        homo = book.map_to_homo_nid(nids, req["ntype"])
        etype = tuple(req["etype"].split(":"))
        src, dst = g.find_edges(torch.tensor(req["eids"], dtype=torch.int64), etype=etype)
        res = {"feat": g.nodes[req["ntype"]].data[req["feat"]][nids], "homo": homo,
               "in_degrees": g.in_degrees(homo), "out_degrees": g.out_degrees(homo),
               "find_src": src, "find_dst": dst,
               "num_nodes": torch.tensor([g.num_nodes(t) for t in req["ntypes"]]),
               "num_edges": torch.tensor([g.num_edges(tuple(e.split(":")))
                                          for e in req["etypes"]])}
        seeds = torch.tensor(req["seeds"], dtype=torch.int64)
        frontier = dgl.distributed.sample_neighbors(g, {req["ntype"]: seeds}, req["fanout"])
        for et in frontier.canonical_etypes:
            s, d = frontier.edges(etype=et)
            key = ":".join(et)
            res[f"sample_src/{key}"], res[f"sample_dst/{key}"] = s, d
            res[f"sample_eid/{key}"] = frontier.edges[et].data[dgl.EID]
        # every out-edge of the seeds (fanout -1): what a part holds of its nodes' out-edges
        out_frontier = dgl.distributed.sample_neighbors(g, {req["ntype"]: seeds}, -1,
                                                        edge_dir="out")
        for et in out_frontier.canonical_etypes:
            s, _ = out_frontier.edges(etype=et)
            key = ":".join(et)
            res[f"out_src/{key}"] = s
            res[f"out_eid/{key}"] = out_frontier.edges[et].data[dgl.EID]
        arrays = {k: v.numpy() for k, v in res.items()}
        tmp = out + ".tmp"
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, out)
    finally:
        dgl.distributed.exit_client()  # also shuts the servers down (their only client)


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "server":
        serve(args[0], args[1], int(args[2]), int(args[3]))
    elif role == "client":
        ask(args[0], args[1], args[2])
    else:
        sys.exit(f"unknown role {role!r}: server or client")
