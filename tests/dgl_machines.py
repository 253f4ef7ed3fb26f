"""DGL's distributed stack on loopback, each DGL "machine" in a /dev/shm of its own: the
launcher of ``partition/test_dgl_interop.py::test_dgl_dist_graph_machines`` and of
``benchmarks/bench_dist_client.py --dgl-python`` (which puts tests/ on its path, as
bench_pyg_scripts.py does for pyg_scripts.py), so both start DGL's servers the same way.

Machine ``m`` runs the ``DistGraphServer`` of part ``m`` (``partition/dgl_dist_roles.py
server``); machine 0 also runs the one client, a command the caller gives.  Standard library
only: DGL itself runs in the child processes, under whichever Python is given.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

__all__ = ["OWN_SHM", "ROLES", "own_shm_works", "run_machines", "write_ip_config"]

#: A command prefix giving the command a /dev/shm of its own, i.e. a machine of its own as
#: far as DGL can tell.  DGL's servers put each feature into POSIX shared memory named by
#: the feature alone (``node~paper~feat-kvdata-``), with no part or machine in the name: two
#: DGL servers of one graph on one host open the same segment, the later one truncates and
#: overwrites the earlier one's rows, the client on machine 0 reads part 1's rows as its
#: own, and a server whose segment shrank dies of SIGBUS on its next read while the client
#: waits for its answer forever (the 2-server run that hung).
OWN_SHM = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
           'mount -t tmpfs tmpfs /dev/shm && exec "$0" "$@"']
#: the server (and test client) roles
ROLES = str(Path(__file__).parent / "partition" / "dgl_dist_roles.py")


def own_shm_works() -> bool:
    """Whether ``OWN_SHM`` runs here (``unshare`` present, user namespaces allowed)."""
    try:
        return subprocess.run([*OWN_SHM, "true"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def write_ip_config(folder: Path, num_parts: int) -> Path:
    """``folder/ip_config.txt``: one loopback machine per part, each on a free port."""
    ip_config = Path(folder) / "ip_config.txt"
    ip_config.write_text("".join(f"127.0.0.1 {p}\n" for p in _free_ports(num_parts)))
    return ip_config


def run_machines(ip_config: Path, part_config: Path, client: list[str], *,
                 python: str = sys.executable, timeout: float = 300,
                 env: dict[str, str] | None = None) -> tuple[int | None, dict[int, str]]:
    """Run one DGL server per line of ``ip_config`` (machine ``m`` serves part ``m`` of
    ``part_config``) and ``client`` on machine 0, sharing server 0's /dev/shm.

    Waits for the client (``timeout`` seconds), then for the servers, which exit when their
    only client does; every process group is killed at the end, whatever happened.  Returns
    the client's exit status (None: timed out) and the tail of each machine's log
    (``machine<m>.log`` beside ``ip_config``).
    """
    folder = Path(ip_config).parent
    num_parts = len(Path(ip_config).read_text().splitlines())
    env = {**(os.environ if env is None else env), "DGLBACKEND": "pytorch",
           "OMP_NUM_THREADS": "1"}
    procs = []
    try:
        for m in range(num_parts):
            server = [python, ROLES, "server", str(ip_config), str(part_config), str(m), "1"]
            if m == 0:  # the client shares machine 0 (and its shared memory) with server 0
                script = f"{shlex.join(server)} & exec {shlex.join(client)}"
                cmd = [*OWN_SHM[:-1], OWN_SHM[-1].replace('exec "$0" "$@"', script)]
            else:
                cmd = [*OWN_SHM, *server]
            log = open(folder / f"machine{m}.log", "wb")  # noqa: SIM115 (closed below)
            procs.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                           env=env, start_new_session=True), log))
        rc: int | None
        try:
            rc = procs[0][0].wait(timeout=timeout)  # the client's shell: ends with the client
            for p, _ in procs[1:]:
                p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            rc = None
    finally:
        for p, log in procs:  # a group outlives its leader: server 0 after a failed client
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            log.close()
    logs = {m: (folder / f"machine{m}.log").read_text(errors="replace")[-3000:]
            for m in range(num_parts)}
    return rc, logs
