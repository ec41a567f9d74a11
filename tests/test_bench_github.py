"""The GitHub benchmark runs and prints its figures (the figures themselves are not asserted)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_github.py"


@pytest.mark.slow
def test_bench_prints_both_counts_and_their_ratio(capsys):
    spec = importlib.util.spec_from_file_location("bench_github", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main() == 0
    out = capsys.readouterr().out
    assert re.search(r"prdigest\s+:\s+\d+ requests = [\d.]+ per PR", out)
    assert re.search(r"naive REST\s+:\s+\d+ requests = [\d.]+ per PR", out)
    assert re.search(r"ratio\s+:\s+[\d.]+x fewer requests", out)
