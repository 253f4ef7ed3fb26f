"""The layering rules of DESIGN §2, read from the source: no import circle, no package reaching
into another package's underscore names, and ``import graphshard`` staying light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "graphshard"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def _imports() -> dict[str, set[tuple[str, str | None]]]:
    """module -> {(imported module, imported name or None)} for every graphshard import,
    at module level or inside functions."""
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    out: dict[str, set[tuple[str, str | None]]] = {}
    for name, path in modules.items():
        package = _package(name, path.name == "__init__.py")
        found: set[tuple[str, str | None]] = set()
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:  # annotations only: no import at run time
                continue
            if isinstance(node, ast.Import):
                found |= {(a.name, None) for a in node.names if a.name.startswith("graphshard")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                if not base.startswith("graphshard"):
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add((sub, None) if sub in modules else (base, alias.name))
        out[name] = found
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def test_no_import_circle():
    imports = _imports()
    graph = {m: {t for t, _ in found if t in imports and t != m} for m, found in imports.items()}
    # every import counts, at module level or inside a function (a lazy import still ties
    # the two modules together), except those under `if TYPE_CHECKING:`
    assert _cycles(graph) == []


def test_no_package_reaches_into_another_packages_private_names():
    """``graphshard._util`` is the one private package every package may use (DESIGN §2)."""
    bad = []
    for module, found in _imports().items():
        mine = module.split(".")[:2]
        for target, name in found:
            owner = target.split(".")[:2]
            if owner == mine or target.startswith("graphshard._util"):
                continue
            leaf = target.rsplit(".", 1)[-1]
            if (leaf.startswith("_") and leaf != "__init__") or (name or "").startswith("_"):
                bad.append(f"{module} imports {target}{'.' + name if name else ''}")
    assert bad == []


@pytest.mark.parametrize("heavy", ["ray", "torch", "dgl", "torch_geometric", "matplotlib"])
def test_import_graphshard_stays_light(heavy):
    code = f"import sys, graphshard; print({heavy!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("old", "new", "module", "name"), [
    ("graphshard.dist", "graphshard.distributed", "graph", "DistGraph"),
    ("graphshard.examples", "graphshard.train", "walk_options", "WalkOptions"),
])
def test_old_package_names_warn_and_give_the_same_objects(old, new, module, name):
    """Renamed packages stay importable for a release, their modules included, as the same
    objects, with a DeprecationWarning naming the new package."""
    code = (f"import importlib, warnings\n"
            f"with warnings.catch_warnings(record=True) as w:\n"
            f"    warnings.simplefilter('always')\n"
            f"    from {old} import {name} as a\n"
            f"    from {old}.{module} import {name} as b\n"
            f"c = getattr(importlib.import_module('{new}.{module}'), '{name}')\n"
            f"print(a is b is c)\n"
            f"print(sorted({{str(x.message) for x in w if x.category is DeprecationWarning}}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    same, warned = out.stdout.strip().splitlines()
    assert same == "True"
    assert f"{old} is renamed {new}" in warned
    assert f"{old}.{module} is renamed {new}.{module}" in warned


@pytest.mark.parametrize(("layer", "allowed"), [
    ("storage", ("graphshard.errors", "graphshard.typing", "graphshard._util",
                 "graphshard.storage")),
    ("runtime", ("graphshard.errors", "graphshard.typing", "graphshard._util",
                 "graphshard.storage", "graphshard.runtime")),
])
def test_storage_and_runtime_import_nothing_above_them(layer, allowed):
    """DESIGN §2: the storage and runtime layers sit under everything else."""
    bad = sorted(f"{module} imports {target}" for module, found in _imports().items()
                 if module.startswith(f"graphshard.{layer}")
                 for target, _ in found
                 if target != "graphshard" and not target.startswith(allowed))
    assert bad == []
