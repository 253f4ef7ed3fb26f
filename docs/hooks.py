"""MkDocs hooks (mkdocs.yml ``hooks:``): tables that come from graphshard's registries.

A page writes a marker such as ``<!-- gs:readers -->`` on a line of its own; the hook puts a
Markdown table (or the ``--help`` text of every command) in its place when the site is
built, so the formats, their options, the partition methods and the command line reference
always say what the installed code does.  Build code, not a page (mkdocs.yml excludes it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# describe this checkout's code, whatever graphshard is installed
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

_MARKER = re.compile(r"^<!-- gs:(\w+) -->$", re.MULTILINE)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _options(options: dict[str, str]) -> str:
    return "<br>".join(f"`{k}`: {_cell(v)}" for k, v in options.items()) or "none"


def _readers() -> str:
    from graphshard.io import READERS

    rows: list[list[object]] = []
    for f in READERS.values():
        names = " ".join(f"`{s}`" for s in f.suffixes) or ("a folder" if f.reads_folder else "")
        aliases = ", ".join(f"`{a}` ({', '.join(f'{k}={v!r}' for k, v in o.items())})"
                            for a, o in f.aliases.items())
        rows.append([f"`{f.name}`", f.description, names or "-", aliases or "-",
                     _options(f.options)])
    return _table(["name", "reads", "suffixes", "aliases", "options (`-O key=value`)"], rows)


def _writers() -> str:
    from graphshard.io import WRITERS

    rows = [[f"`{f.name}`", f.description, _options(f.options)] for f in WRITERS.values()]
    return _table(["name", "writes", "options (`-O key=value`)"], rows)


def _methods() -> str:
    from graphshard.partition import DEFAULT_METHOD, METHODS

    rows = [[f"`{m.name}`" + (" (default)" if m.name == DEFAULT_METHOD else ""),
             m.description, _runs_on(m), "yes" if m.multi_constraint else "no",
             f"`{m.requires}` (`pip install 'graphshard[quality]'`)" if m.requires else "-"]
            for m in METHODS.values()]
    return _table(["method", "what it does", "works on", "balances several weights",
                   "needs"], rows)


def _runs_on(m: Any) -> str:
    """Where a method works natively: the adjacency in memory, the chunk files, or both."""
    if m.fn is not None and m.stream is not None:
        return "both (no edges read)" if not m.uses_structure else "both"
    return "chunk files, streamed" if m.stream is not None else "adjacency in memory"


def _assign_methods() -> str:
    from graphshard.pipeline import ASSIGN_METHODS

    rows = [[f"`{m.name}`", m.description, _runs_on(m)] for m in ASSIGN_METHODS.values()]
    return _table(["method", "what it does", "works on"], rows)


def _generators() -> str:
    from graphshard.datasets import GENERATORS

    rows = [[f"`{name}`", g.description,
             ", ".join(f"`{k}`" for k in g.keys)] for name, g in GENERATORS.items()]
    return _table(["generator", "graph", "keys (`name:key=value,...`)"], rows)


def _cli() -> str:
    import click

    from graphshard.cli import cli

    parts: list[str] = []
    root = click.Context(cli, info_name="graphshard")
    parts += ["```text", cli.get_help(root).rstrip(), "```"]
    for name in cli.list_commands(root):
        cmd = cli.get_command(root, name)
        assert cmd is not None
        ctx = click.Context(cmd, info_name=name, parent=root)
        parts += ["", f"## graphshard {name}", "", "```text", cmd.get_help(ctx).rstrip(), "```"]
    return "\n".join(parts)


_TABLES: dict[str, Callable[[], str]] = {
    "readers": _readers, "writers": _writers, "methods": _methods,
    "assign_methods": _assign_methods, "generators": _generators, "cli": _cli,
}


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in _TABLES:
            raise KeyError(f"unknown docs marker gs:{name}; known: {sorted(_TABLES)}")
        return _TABLES[name]()

    return _MARKER.sub(fill, markdown)
