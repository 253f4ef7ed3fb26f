"""The two-terminal flow: `graphshard serve CONFIG` in one process prints how to connect, and
a second process connects with exactly the printed lines (two real processes, one Ray)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import graphshard as gs
from waiting import wait_while_busy

# the client: runs the lines `serve` printed, then asks the servers something
_CLIENT = textwrap.dedent("""
    import json, sys
    exec(sys.argv[1])  # the connect lines, as printed by `graphshard serve`
    out = {"owns_servers": dg.handle is not None,
           "deg": graphshard.sampling.degrees(dg, [0, 1, 2, 633, 2707]).tolist(),
           "feat": dg.nodes["_N"].data["feat"][[5, 2000]].sum(axis=1).tolist()}
    print(json.dumps(out))
""")


def _lines(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


def test_serve_in_one_process_connect_from_another(cora, tmp_path):
    pytest.importorskip("ray", reason="needs ray (pip install 'graphshard[ray]')")
    gs.partition_graph(cora, "cora", 2, tmp_path, part_method="random")
    cfg = str(tmp_path / "cora.json")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    # as in a terminal, Ctrl-C raises KeyboardInterrupt in serve: a run started in the
    # background (nohup, `&`, some CI runners) ignores SIGINT, and a child inherits that, so
    # serve then slept out its whole --for 300 (the suite's 300 s stall)
    server = subprocess.Popen(
        [sys.executable, "-c", "import signal, sys; signal.signal(signal.SIGINT, "
         "signal.default_int_handler); from graphshard.cli import main; "
         "sys.exit(main(sys.argv[1:]))", "serve", cfg, "--for", "300"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        q: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(server.stdout, q), daemon=True).start()
        printed: list[str] = []

        def connect_line_printed() -> bool:
            while not q.empty():
                line = q.get()
                assert line is not None, "serve exited early: " + "".join(printed) + \
                    server.stderr.read()[-3000:]
                printed.append(line)
            return any("DistGraph(" in line for line in printed)

        # as long as serve (and the Ray it starts) keeps working: no fixed deadline
        wait_while_busy(server.pid, connect_line_printed, "serve printing how to connect")
        out = "".join(printed)
        address = next(x.split(": ", 1)[1].strip() for x in printed if x.startswith("address:"))
        host, port = address.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0  # a local Ray: loopback only
        assert "from another process on this machine" in out
        connect = textwrap.dedent("".join(printed[-2:]))  # "import graphshard" + "dg = ..."
        assert connect == (f"import graphshard\ndg = graphshard.distributed.DistGraph({cfg!r}, "
                           f"address={address!r})\n")
        client = subprocess.Popen([sys.executable, "-c", _CLIENT, connect],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        outputs: list[str] = []
        reader = threading.Thread(target=lambda: outputs.extend(client.communicate()),
                                  daemon=True)
        reader.start()
        wait_while_busy(client.pid, lambda: not reader.is_alive(), "the connecting client")
        assert client.returncode == 0, outputs[1][-3000:]
        got = json.loads(outputs[0].strip().splitlines()[-1])
        assert got["owns_servers"] is False  # it joined the running servers
        whole = gs.distributed.assemble_graph(cfg)  # the same partitions, read here without Ray
        assert got["deg"] == gs.sampling.degrees(whole, [0, 1, 2, 633, 2707]).tolist()
        feat = whole.nodes["_N"].data["feat"][[5, 2000]].sum(axis=1)
        np.testing.assert_allclose(got["feat"], feat, rtol=1e-6)
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C: serve stops its servers and exits
        try:
            wait_while_busy(server.pid, lambda: server.poll() is not None,
                            "serve stopping after Ctrl-C")
        finally:
            if server.poll() is None:
                server.kill()
    assert server.returncode == 0
