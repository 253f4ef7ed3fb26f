"""Where graph servers run: the placement rules of :func:`graphshard.distributed.serve`.

Three rules, one per partition server:

- ``"spread"`` (default): partition ``p`` on the ``p % n``-th of the ``n`` live nodes that
  have CPUs (all live nodes if none has), ordered by IP and node ID: one server per node
  while nodes last.  (Ray's own ``SPREAD`` strategy is best effort: on a 3-node test
  cluster it put 0-CPU servers side by side.)
- ``"pack"``: every server on the node of the process that calls ``serve`` (for a
  ``ray://`` client: the node of the cluster's client server, usually the head).
- pinned: ``{part_id: node}``, ``node`` a Ray node ID (or a unique prefix of at least 8
  hex digits, as ``graphshard serve`` prints them) or the IP of exactly one live node;
  partitions not named are spread.  The CLI spells it ``0=NODE,1=NODE``.

Every rule asks Ray for a *soft* node affinity: while the node lives, the server runs
there; when the node is lost, Ray restarts the server on a surviving node (which must see the
partition folder at the same path).

Example:
    >>> parse_placement("spread"), parse_placement("0=10.0.0.5, 2=4f1c0a9e")
    ('spread', {0: '10.0.0.5', 2: '4f1c0a9e'})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ValidationError

__all__ = ["MIN_CPUS", "RULES", "Placement", "parse_placement", "resolve_pins",
           "scheduling_strategies", "spread_pins"]

#: The named rules (a mapping of partition to node is the third kind).
RULES = ("spread", "pack")

#: CPUs a server asks for at least: Ray honours a soft node affinity only for an actor that
#: asks for some resource (on Ray 2.60 a 0-CPU server pinned to a node landed on any node)
MIN_CPUS = 0.001

#: ``"spread"``, ``"pack"``, or ``{part_id: node ID, ID prefix or IP}``.
Placement = str | Mapping[int, str]

_MIN_PREFIX = 8  # hex digits of a node-ID prefix (graphshard serve prints 12)


def parse_placement(text: str) -> Placement:
    """The placement a ``--placement`` value names: a rule, or ``P=NODE`` pairs.

    Raises:
        ValidationError: neither a rule nor ``P=NODE`` pairs with integer ``P``.

    Example:
        >>> parse_placement("pack")
        'pack'
        >>> parse_placement("1=a")
        {1: 'a'}
        >>> try:
        ...     parse_placement("west")
        ... except ValidationError as exc:
        ...     print(exc)
        --placement: 'west' is not spread, pack or P=NODE,... pairs (e.g. 0=10.0.0.5,1=4f1c0a9e)
    """
    value = text.strip()
    if value in RULES:
        return value
    pins: dict[int, str] = {}
    for item in value.split(","):
        part, sep, node = item.partition("=")
        if not sep or not part.strip().isdigit() or not node.strip():
            raise ValidationError(f"--placement: {text!r} is not {', '.join(RULES[:-1])}, "
                                  f"{RULES[-1]} or P=NODE,... pairs (e.g. "
                                  "0=10.0.0.5,1=4f1c0a9e)", field="placement", value=text)
        pins[int(part)] = node.strip()
    return pins


def resolve_pins(pins: Mapping[int, str], nodes: Sequence[Mapping[str, Any]],
                 num_parts: int) -> dict[int, str]:
    """Node ID of every pinned partition.

    Args:
        pins: ``{part_id: node ID, ID prefix (8+ hex digits) or IP}``.
        nodes: Ray's ``ray.nodes()`` (``NodeID``, ``NodeManagerAddress``, ``Alive``).
        num_parts: Partitions of the graph.

    Raises:
        ValidationError: a partition out of range, or a node that matches no live node or
            several (the message lists the live ones).

    Example:
        >>> nodes = [{"NodeID": "aa11" * 7, "NodeManagerAddress": "10.0.0.1", "Alive": True},
        ...          {"NodeID": "bb22" * 7, "NodeManagerAddress": "10.0.0.2", "Alive": True}]
        >>> resolve_pins({0: "10.0.0.2", 1: "aa11aa11"}, nodes, 2) == {
        ...     0: "bb22" * 7, 1: "aa11" * 7}
        True
    """
    live = [n for n in nodes if n.get("Alive", True)]
    out: dict[int, str] = {}
    for part, node in pins.items():
        if not 0 <= int(part) < num_parts:
            raise ValidationError(f"placement: partition {part} does not exist (the graph "
                                  f"has {num_parts})", field="placement", value=part)
        key = str(node).strip()
        match = [n for n in live if n["NodeManagerAddress"] == key]
        if not match and len(key) >= _MIN_PREFIX:
            match = [n for n in live if str(n["NodeID"]).startswith(key.lower())]
        if len(match) != 1:
            known = ", ".join(f"{str(n['NodeID'])[:12]} ({n['NodeManagerAddress']})"
                              for n in live)
            how = "matches no live Ray node" if not match else \
                f"matches {len(match)} live nodes (give a node ID)"
            raise ValidationError(f"placement: node {key!r} of partition {part} {how}; live "
                                  f"nodes: {known}", field="placement", value=key)
        out[int(part)] = str(match[0]["NodeID"])
    return out


def spread_pins(nodes: Sequence[Mapping[str, Any]], num_parts: int) -> dict[int, str]:
    """Node ID of every partition under the ``"spread"`` rule: round robin over the live
    nodes with CPUs (all live nodes when none has any), ordered by IP, then node ID.

    Example:
        >>> nodes = [{"NodeID": "b", "NodeManagerAddress": "10.0.0.1", "Alive": True,
        ...           "Resources": {"CPU": 4.0}},
        ...          {"NodeID": "a", "NodeManagerAddress": "10.0.0.2", "Alive": True,
        ...           "Resources": {"CPU": 4.0}},
        ...          {"NodeID": "c", "NodeManagerAddress": "10.0.0.3", "Alive": True,
        ...           "Resources": {}}]  # a head started with --num-cpus 0
        >>> spread_pins(nodes, 3)
        {0: 'b', 1: 'a', 2: 'b'}
    """
    live = [n for n in nodes if n.get("Alive", True)]
    busy = [n for n in live if n.get("Resources", {}).get("CPU", 0) > 0] or live
    if not busy:
        raise ValidationError("placement: the Ray cluster has no live node",
                              field="placement", value="spread")
    order = sorted(busy, key=lambda n: (str(n["NodeManagerAddress"]), str(n["NodeID"])))
    return {p: str(order[p % len(order)]["NodeID"]) for p in range(num_parts)}


def scheduling_strategies(ray: Any, placement: Placement, num_parts: int) -> list[Any]:
    """Ray's ``scheduling_strategy`` option for each partition's server.

    Raises:
        ValidationError: an unknown rule, or pins :func:`resolve_pins` refuses.
    """
    if isinstance(placement, str):
        if placement not in RULES:
            raise ValidationError(f"placement must be one of {list(RULES)} or a mapping "
                                  f"{{part_id: node}}, got {placement!r}", field="placement",
                                  value=placement)
        if placement == "spread":
            pins = spread_pins(ray.nodes(), num_parts)
        else:
            pins = {p: ray.get_runtime_context().get_node_id() for p in range(num_parts)}
    else:
        pins = resolve_pins(placement, ray.nodes(), num_parts)
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return [NodeAffinitySchedulingStrategy(pins[p], soft=True) if p in pins else "SPREAD"
            for p in range(num_parts)]
