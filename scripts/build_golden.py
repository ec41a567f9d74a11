"""Regenerate tests/golden/* from the fixture PRs (run after a reviewed writer/renderer change).

    python scripts/build_golden.py

Read the diff of tests/golden before committing: the golden files are the reviewed output.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from prdigest.core.window import day_window  # noqa: E402
from prdigest.pipeline.digest import DigestOptions, build_digest  # noqa: E402
from prdigest.render import render  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.write.template import TemplateWriter  # noqa: E402

from conftest import GOLDEN, REPO, all_fixtures  # noqa: E402

# (file name, day, format, language)
CASES = (
    ("vllm-2026-06-10.txt", "2026-06-10", "text", "zh"),
    ("vllm-2026-06-10.md", "2026-06-10", "markdown", "zh"),
    ("vllm-2026-06-11.txt", "2026-06-11", "text", "zh"),
    ("vllm-2026-06-11.md", "2026-06-11", "markdown", "zh"),
    ("vllm-2026-06-10.en.txt", "2026-06-10", "text", "en"),
)


def render_case(day: str, fmt: str, lang: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "g.sqlite3") as store:
        store.records.upsert(all_fixtures())
        options = DigestOptions(repo=REPO, window=day_window(day), lang=lang)  # type: ignore[arg-type]
        return render(build_digest(store, options, TemplateWriter()), fmt)


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name, day, fmt, lang in CASES:
        (GOLDEN / name).write_bytes(render_case(day, fmt, lang))
        print(f"wrote tests/golden/{name}")


if __name__ == "__main__":
    main()
