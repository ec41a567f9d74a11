"""Checks on the codebase itself: the rules the project keeps (see docs/architecture.md)."""

from __future__ import annotations

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
