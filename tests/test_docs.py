"""The documentation site: it builds strictly, and its code blocks run.

Every ```` ```python ```` block of ``docs/*.md`` runs, in page order, in one namespace per
page, in a fresh folder; a ```` ```bash ```` block runs (in the same folder) only when an HTML
comment right above it says ``<!-- test: run -->``.  The comment also names what a block
needs, clauses separated by ``;``:

- ``needs torch torch_geometric``: modules that must import, else the block is skipped
  (``ray`` also starts the session's shared Ray, which the block then joins);
- ``data hgb/DBLP.zip``: a file of the shared data folder (``tests/conftest.py``), linked into
  the page's folder under its own name, else the block is skipped;
- ``skip REASON``: an illustration never run here (it needs a cluster, or runs for minutes):
  the reason stays in the page's source, and the page still passes.

A page whose blocks all ran passes; one whose block lacked a module or data file reports
the skip after running the others.  Blocks use small graphs, so that the file runs in about
a minute on two cores.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from waiting import run_while_busy

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
#: the pages with code blocks (the API pages are ``::: name`` entries only)
CODE_PAGES = [p for p in PAGES if "\n```" in (DOCS / p).read_text()]

_FENCE = re.compile(r"^```(\w*)\s*$")
_DIRECTIVE = re.compile(r"^<!--\s*test:\s*(.*?)\s*-->$")


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the opening fence
    code: str
    run: bool = False
    needs: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    skip: str | None = None


def parse_blocks(text: str) -> list[Block]:
    """The fenced blocks of a page with the ``<!-- test: ... -->`` comment above each."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"line {start + 1}: code block never closed")
        block = Block(m.group(1), start + 1, "\n".join(body) + "\n")
        d = _DIRECTIVE.match(lines[start - 1].strip()) if start else None
        for clause in filter(None, (c.strip() for c in (d.group(1) if d else "").split(";"))):
            word, _, rest = clause.partition(" ")
            if word == "run":
                block.run = True
            elif word == "needs":
                block.needs = rest.split()
            elif word == "data":
                block.data = rest.split()
            elif word == "skip" and rest:
                block.skip = rest
            else:
                raise AssertionError(f"line {start}: unknown test directive {clause!r}")
        blocks.append(block)
        i += 1
    return blocks


def test_parse_blocks_reads_directives():
    text = ("x\n<!-- test: run; needs ray torch -->\n```bash\necho hi\n```\n"
            "```python\nprint(1)\n```\n<!-- test: skip needs a cluster -->\n```python\n"
            "boom\n```\n")
    bash, py, skipped = parse_blocks(text)
    assert (bash.lang, bash.line, bash.code, bash.run, bash.needs) == (
        "bash", 3, "echo hi\n", True, ["ray", "torch"])
    assert (py.lang, py.run, py.needs, py.skip) == ("python", False, [], None)
    assert skipped.skip == "needs a cluster"
    with pytest.raises(AssertionError, match="unknown test directive 'rnu'"):
        parse_blocks("<!-- test: rnu -->\n```bash\nls\n```\n")


def _shims(folder: Path) -> dict[str, str]:
    """Environment for shell blocks: ``graphshard`` and ``python`` are this checkout's, run
    by this interpreter, whatever is installed."""
    folder.mkdir()
    for name, target in (("graphshard", "-m graphshard.cli"), ("python", "")):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {target} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ)
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    env["GRAPHSHARD_NO_PROGRESS"] = "1"
    return env


def _missing(block: Block, request: pytest.FixtureRequest, tmp: Path) -> str | None:
    """Why ``block`` cannot run here (a module or data file absent), or None."""
    for module in block.needs:
        if importlib.util.find_spec(module) is None:
            return f"needs {module}"
    if "ray" in block.needs:
        request.getfixturevalue("ray_cluster")
    for rel in block.data:
        try:
            path = request.getfixturevalue("shared_file")(*rel.split("/"))
        except pytest.skip.Exception as exc:
            return str(exc)
        link = tmp / Path(rel).name
        if not link.exists():
            link.symlink_to(path)
    return None


@pytest.mark.parametrize("page", CODE_PAGES)
def test_code_blocks_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         request: pytest.FixtureRequest) -> None:
    blocks = parse_blocks((DOCS / page).read_text())
    work = tmp_path / "work"
    work.mkdir()
    env = _shims(tmp_path / "bin")
    monkeypatch.chdir(work)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran, skipped = 0, []
    for block in blocks:
        where = f"docs/{page}:{block.line}"
        if block.skip:
            continue
        started = time.perf_counter()
        if block.lang == "python" or (block.lang == "bash" and block.run):
            reason = _missing(block, request, work)
            if reason:
                skipped.append(f"{where} ({reason})")
                continue
        if block.lang == "python":
            exec(compile(block.code, where, "exec"), namespace)  # the page is the test
            ran += 1
            print(f"{where}: {time.perf_counter() - started:.1f} s")
        elif block.lang == "bash" and block.run:
            proc = run_while_busy(["bash", "-euo", "pipefail", "-c", block.code], where,
                                  cwd=work, env=env)
            assert proc.returncode == 0, (
                f"{where} exited {proc.returncode}\n{block.code}\nstdout:\n{proc.stdout}\n"
                f"stderr:\n{proc.stderr}")
            ran += 1
            print(f"{where}: {time.perf_counter() - started:.1f} s")
    if skipped:
        pytest.skip(f"ran {ran} blocks; skipped " + "; ".join(skipped))


# ----- the API reference covers the public surface ----------------------------------------
API_PAGES = {"graphshard": "graphshard", "io": "graphshard.io",
             "datasets": "graphshard.datasets", "partition": "graphshard.partition",
             "pipeline": "graphshard.pipeline", "sampling": "graphshard.sampling",
             "distributed": "graphshard.distributed", "pyg": "graphshard.pyg",
             "train": "graphshard.train"}


def _resolve(path: str) -> object:
    """The object a dotted ``::: path`` names (module, then attributes)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise AssertionError(f"cannot import {path}")


@pytest.mark.parametrize("page", sorted(API_PAGES))
def test_api_reference_lists_every_public_name(page: str) -> None:
    """Each name in a package's ``__all__`` has an entry (``::: path``) on its API page that
    names that very object, so a new public name cannot go undocumented."""
    package = importlib.import_module(API_PAGES[page])
    text = (DOCS / "api" / f"{page}.md").read_text()
    documented = [_resolve(p) for p in re.findall(r"^::: ([\w.]+)$", text, re.MULTILINE)]
    links = re.findall(r"\]\(([\w-]+)\.md\)", text)
    missing = []
    for name in package.__all__:
        obj = getattr(package, name)
        if inspect.ismodule(obj):
            if obj.__name__.rsplit(".", 1)[-1] not in links:
                missing.append(name)
        elif not any(d is obj for d in documented):
            missing.append(name)
    assert not missing, f"docs/api/{page}.md has no entry for {missing}"


def test_nav_lists_every_page() -> None:
    """mkdocs.yml's nav names every page (a page outside it is unreachable)."""
    nav = (ROOT / "mkdocs.yml").read_text()
    assert [p for p in PAGES if f": {p}\n" not in nav] == []


# ----- the site builds -----------------------------------------------------------------------
def test_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, reference or docstring fails the build."""
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module.split(".")[0]) is None or (
                "." in module and importlib.util.find_spec(module) is None):
            pytest.skip(f"needs {module} (pip install -e '.[docs]')")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                        os.environ.get("PYTHONPATH")])))
    site = tmp_path / "site"
    proc = run_while_busy([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(ROOT / "mkdocs.yml"), "-d", str(site)], "mkdocs build",
                          cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-5000:]
    api = (site / "api" / "sampling" / "index.html").read_text()
    assert 'id="graphshard.sampling.sample_blocks"' in api  # a docstring became a section
    assert 'class="language-pycon' in api or "highlight" in api  # its example is code
    cli = (site / "cli" / "index.html").read_text()
    assert "graphshard partition" in cli and "--parts" in cli  # the hook filled the page
