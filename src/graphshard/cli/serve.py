"""``graphshard serve``: one graph server per partition on Ray."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from ..errors import GraphshardError
from ..storage import fsys
from ._common import console

__all__ = ["serve"]


@click.command()
@click.argument("config")
@click.option("--address", metavar="ADDR", envvar="RAY_ADDRESS", show_envvar=True,
              help="Ray cluster to run on (e.g. auto, HEAD_IP:6379 or ray://head:10001; "
                   "default: a local Ray started here, listening on 127.0.0.1 only).")
@click.option("--placement", default="spread", show_default=True, metavar="RULE",
              help="Where the servers run: spread (one per node while nodes last), pack "
                   "(all on this command's node), or P=NODE,... pins partition P to a node "
                   "(a node ID, or its first 8+ hex digits, or a node's IP; partitions not "
                   "named are spread). A server whose node is lost is restarted on "
                   "another node.")
@click.option("--detach", is_flag=True,
              help="Leave the servers running after this command exits (needs --address).")
@click.option("--stop", is_flag=True, help="Stop the running servers of CONFIG instead.")
@click.option("--for", "duration", type=click.FloatRange(min=0),
              metavar="SECONDS",
              help="Serve for this long, then stop (default: until Ctrl-C).")
@click.option("--max-restarts", type=click.IntRange(min=0), default=3, show_default=True,
              help="Times Ray restarts a dead server.")
@click.option("--verify/--no-verify", default=True, show_default=True,
              help="Check each part file's SHA-256 when its server loads it (a damaged "
                   "file is refused at start instead of served).")
def serve(config: str, address: str | None, placement: str, detach: bool, stop: bool,
          duration: float | None, max_restarts: int, verify: bool) -> None:
    """Start one graph server per partition on Ray and print where they run.

    CONFIG is the partition config JSON, a path or an s3://, gs://, hdfs:// URI (each
    server then copies its part to its node's scratch folder once and checks it).
    The table shows each partition's Ray node (ID and IP) and process. It also prints the
    line that connects a trainer from another process, e.g.
    dg = graphshard.distributed.DistGraph('/abs/parts/rmat.json', address='127.0.0.1:PORT').
    Without --address (or RAY_ADDRESS) the servers run on a Ray started here, listening
    on 127.0.0.1: connect from this machine while the command runs. With --address,
    connect from any machine of the cluster (the config at the same path there); every
    node that may run a server must see the partition folder at the same path.

    \b
    Example:
      graphshard serve parts/rmat.json --for 60
      graphshard serve parts/rmat.json --address auto --placement spread --detach
    """
    import time

    from .. import distributed as dist
    from ..distributed.placement import parse_placement

    if stop:
        stopped = dist.shutdown(config, address=address)
        console.print(f"stopped {stopped} graph server(s) of {fsys.shown(config)}" if stopped
                      else f"no graph servers of {fsys.shown(config)} are running")
        return
    if detach and not address:
        raise click.UsageError("--detach needs --address: a local Ray stops with this command")
    try:
        rule = parse_placement(placement)
    except GraphshardError as exc:
        raise click.BadParameter(str(exc), param_hint="--placement") from exc
    handle = dist.serve(config, address=address, placement=rule, detached=detach,
                        max_restarts=max_restarts, verify=verify)
    table = Table("part", "actor", "node", "ip", "pid",
                  title=f"serving {fsys.shown(handle.config)}",
                  title_justify="left")
    for pl, name in zip(handle.places, handle.names, strict=True):
        table.add_row(str(pl.part_id), name, pl.node_id[:12], pl.node_ip, str(pl.pid))
    console.print(table)
    where = ("from any machine of the cluster (the config at this path there)" if address
             else "from another process on this machine, while this command runs")
    # plain echo, not rich: the line must not wrap, it is meant to be copied
    click.echo(f"address: {handle.address}")
    click.echo(f"connect {where}:\n  import graphshard\n  {handle.connect_code()}")
    sys.stdout.flush()
    if detach:
        return
    try:
        if duration is None:
            click.echo("serving; Ctrl-C stops the servers", err=True)
            while True:
                time.sleep(3600)
        time.sleep(duration)
    except KeyboardInterrupt:
        pass
    finally:
        handle.shutdown()
