"""Checks on the codebase itself: the rules the project keeps (see docs/architecture.md)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import prdigest
from prdigest.core import errors

SRC = Path(prdigest.__file__).parent
LIBRARY = [p for p in SRC.rglob("*.py") if "cli" not in p.relative_to(SRC).parts]


def test_every_error_is_drawn_in_the_errors_docstring() -> None:
    doc = errors.__doc__ or ""
    for name, obj in vars(errors).items():
        if inspect.isclass(obj) and issubclass(obj, errors.PrdigestError):
            assert name in doc, name


def test_library_never_prints_exits_or_reads_the_environment() -> None:
    forbidden = re.compile(
        r"\bprint\(|\bsys\.exit\(|\bos\.environ\b|\bos\.getenv\(|\bimport click\b"
    )
    offenders = [
        f"{p.relative_to(SRC)}:{n}"
        for p in LIBRARY
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if forbidden.search(line) and not line.lstrip().startswith("#")
    ]
    assert offenders == []


def test_no_bare_or_blanket_except_in_the_library() -> None:
    pattern = re.compile(r"^\s*except\s*(?:Exception)?\s*:")
    offenders = [
        f"{p.relative_to(SRC)}:{n}"
        for p in LIBRARY
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.match(line)
    ]
    assert offenders == [], "catch the specific errors a call can raise"


def test_public_api_is_sorted_and_exists() -> None:
    assert prdigest.__all__ == sorted(prdigest.__all__)
    for name in prdigest.__all__:
        assert hasattr(prdigest, name), name


# The layers, ground floor first: a module imports only from its own package or a lower layer
# (docs/architecture.md). Packages of one layer never import each other.
LAYERS = {
    "core": 0,
    "samples": 0,
    "store": 1,
    "analyze": 1,
    "render": 1,
    "sources": 2,
    "triage": 2,
    "write": 2,
    "publish": 3,
    "pipeline": 4,
    "cli": 5,
}


def _imported(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name == "prdigest" or name.startswith("prdigest.")]


def test_imports_run_one_way_down_the_layers() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS), "give every package a layer"
    upward = []
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).parts
        if len(parts) == 1:  # prdigest/__init__.py and __main__.py sit above everything
            continue
        own = parts[0]
        for name in _imported(path):
            target = name.split(".")[1] if "." in name else "(top)"
            if target != own and (target == "(top)" or LAYERS[target] >= LAYERS[own]):
                upward.append(f"{path.relative_to(SRC)} imports {name}")
    assert upward == []


def test_the_library_uses_absolute_imports() -> None:
    relative = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if any(
            isinstance(n, ast.ImportFrom) and n.level
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    ]
    assert relative == []
