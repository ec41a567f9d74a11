"""Every benchmark script still imports (they run only on demand; a broken import hides)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("bench_*.py")))
def test_bench_script_imports(script: str) -> None:
    spec = importlib.util.spec_from_file_location(f"bench_{script[:-3]}", BENCH / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)  # module level only: main() is behind __name__ guards
    assert callable(getattr(module, "main", None)), script
