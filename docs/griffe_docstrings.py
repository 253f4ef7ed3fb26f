"""Griffe extension for the API reference (mkdocs.yml loads it; not part of the package).

graphshard's docstrings follow the Google style with a singular ``Example:`` heading and
Sphinx roles (``:class:`~graphshard.graph.Graph```), both of which pytest's doctests and
readers of the source are happy with.  Griffe reads only ``Examples:`` as a doctest section and
knows no Sphinx roles, so before a docstring is parsed this extension

- renames a bare ``Example:`` heading to ``Examples:`` (the ``>>>`` lines then render as code);
- turns a role into an optional cross-reference: a link where the target is documented on the
  site, plain code otherwise (so a role naming a private helper never breaks
  ``mkdocs build --strict``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
_ROLE = re.compile(r":(mod|class|func|data|meth|attr|exc|obj):`(~?)([\w.]+)(?:\(\))?`")


def _scope(obj: griffe.Object, role: str) -> str:
    """The path that an unqualified name in ``obj``'s docstring is looked up in."""
    if obj.is_module or (obj.is_class and role in ("meth", "attr")):
        return obj.path
    parent = obj.parent
    return parent.path if parent is not None else obj.path


def _role_to_ref(match: re.Match[str], obj: griffe.Object) -> str:
    short, target = match.group(2) == "~", match.group(3)
    if target.startswith("graphshard."):
        identifier = target
    else:  # relative (``.weighted``) or unqualified (``Graph``): guess the enclosing scope
        identifier = f"{_scope(obj, match.group(1))}.{target.lstrip('.')}"
    title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
    return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'


class GraphshardDocstrings(griffe.Extension):
    """Rewrite ``Example:`` headings and Sphinx roles in every docstring griffe reads."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        doc = obj.docstring
        if doc is None:
            return
        value = _EXAMPLE.sub(r"\1Examples:", doc.value)
        doc.value = _ROLE.sub(lambda m: _role_to_ref(m, obj), value)
