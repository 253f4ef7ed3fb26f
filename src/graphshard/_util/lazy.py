"""Names a package exports lazily (PEP 562): imported from their module on first use.

Example:
    >>> get, names = lazy_exports("json", {"dumps": ".", "JSONDecoder": ".decoder"})
    >>> get("dumps")({"a": 1}), "dumps" in names()
    ('{"a": 1}', True)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``where`` (exported name ->
    module relative to ``package``, e.g. ``".loader"``; ``"."`` is the package itself).
    A name equal to its module's last part is the module itself; a loaded name is cached
    in the package's namespace, so each import happens once."""

    def get(name: str) -> Any:
        target = where.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(target, package)
        value = module if target.rsplit(".", 1)[-1] == name else getattr(module, name)
        vars(sys.modules[package])[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return get, names
