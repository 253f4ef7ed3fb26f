"""Import optional dependencies with an error that says how to install them."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingDependencyError

#: package -> extra of ``pyproject.toml`` that installs it
EXTRAS = {
    "mtkahypar": "quality",
    "kaminpar": "quality",
    "matplotlib": "plot",
    "ray": "ray",
    "torch": "train",
    "yaml": "train",
    "networkx": "interop",
    "torch_geometric": "pyg",
}


def import_optional(package: str, feature: str, *, extra: str | None = None) -> ModuleType:
    """Import ``package`` or raise :class:`MissingDependencyError` naming ``feature`` and
    the extra that installs it (``extra``, else the package's entry of :data:`EXTRAS`).

    Example:
        >>> import_optional("numpy", "arrays").__name__
        'numpy'
    """
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        extra = extra or EXTRAS.get(package.split(".")[0])
        hint = (f"pip install 'graphshard[{extra}]'" if extra
                else f"pip install {package.split('.')[0].replace('_', '-')}")
        raise MissingDependencyError(
            f"{feature} needs the optional package {package!r}, which is not installed: {hint}",
            field=package,
        ) from exc


def is_installed(package: str) -> bool:
    """Whether ``package`` imports (an optional backend that is absent or broken: False).

    Example:
        >>> is_installed("numpy"), is_installed("no_such_package_gs")
        (True, False)
    """
    try:
        importlib.import_module(package)
    except ImportError:
        return False
    return True
