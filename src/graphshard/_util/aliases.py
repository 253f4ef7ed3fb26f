"""Old package names kept importable for a release: ``graphshard.dist`` for
``graphshard.distributed``, ``graphshard.examples`` for ``graphshard.train``.

:func:`alias_package` makes ``import old.sub`` and ``from old.sub import name`` give the
objects of ``new.sub`` (a module whose attributes forward to the new one, so no class is
defined twice), and warns once per old module with a ``DeprecationWarning``.

Example:
    >>> import sys, types
    >>> new = types.ModuleType("_alias_demo_new"); new.x = 1
    >>> sub = types.ModuleType("_alias_demo_new.sub"); sub.y = 2
    >>> sys.modules.update({"_alias_demo_new": new, "_alias_demo_new.sub": sub})
    >>> old = types.ModuleType("_alias_demo_old"); old.__path__ = []
    >>> sys.modules["_alias_demo_old"] = old
    >>> alias_package("_alias_demo_old", "_alias_demo_new", warn=False)
    >>> from _alias_demo_old.sub import y
    >>> y
    2
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from typing import Any

__all__ = ["alias_module", "alias_package", "deprecation"]


def deprecation(old: str, new: str) -> str:
    """The warning text for a renamed package."""
    return f"{old} is renamed {new}; the old name goes in the next release"


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``old.<sub>`` and loads it as a module forwarding to ``new.<sub>``."""

    def __init__(self, old: str, new: str, warn: bool) -> None:
        self.old, self.new, self.warn = old, new, warn

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        if not fullname.startswith(self.old + "."):
            return None
        target_name = self.new + fullname[len(self.old):]
        loaded = sys.modules.get(target_name)
        if loaded is not None:
            is_package = hasattr(loaded, "__path__")
        else:
            try:
                real = importlib.util.find_spec(target_name)
            except (ImportError, ValueError):
                return None
            if real is None:
                return None
            is_package = real.submodule_search_locations is not None
        return importlib.util.spec_from_loader(fullname, self, is_package=is_package)

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        real = importlib.import_module(self.new + module.__name__[len(self.old):])
        if self.warn:
            warnings.warn(deprecation(module.__name__, real.__name__), DeprecationWarning,
                          stacklevel=2)
        module.__doc__ = real.__doc__
        module.__all__ = list(getattr(real, "__all__", []))  # type: ignore[attr-defined]

        def forward(name: str) -> object:
            return getattr(real, name)

        module.__getattr__ = forward  # type: ignore[method-assign]
        if hasattr(real, "__path__"):
            module.__path__ = []


def alias_package(old: str, new: str, *, warn: bool = True) -> None:
    """Make the submodules of package ``old`` (already a module with ``__path__ = []``)
    forward to those of ``new``; installed once per pair."""
    if not any(isinstance(f, _AliasFinder) and f.old == old for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(old, new, warn))


def alias_module(old: str, new: str) -> tuple[list[str], list[str], Callable[[str], Any],
                                              Callable[[], list[str]]]:
    """What the old package's module defines: ``__all__``, ``__path__`` (empty: a package,
    so that ``old.<module>`` resolves through :func:`alias_package`), ``__getattr__`` and
    ``__dir__`` forwarding to ``new``; warns once, at the importer's line.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     names, path, get, listing = alias_module("old_json", "json")
        >>> get("dumps") is __import__("json").dumps, path, str(caught[0].message)[:28]
        (True, [], 'old_json is renamed json; th')
    """
    target = importlib.import_module(new)
    warnings.warn(deprecation(old, new), DeprecationWarning, stacklevel=3)
    alias_package(old, new)
    names = list(getattr(target, "__all__", []))

    def forward(name: str) -> Any:
        return getattr(target, name)

    def listing() -> list[str]:
        return sorted(names)

    return names, [], forward, listing
