"""Benchmark: analyze + triage speed, a 30,000-line patch, and what a cached re-run saves.

    python bench/bench_analyze.py

Prints figures only; tests never assert timings. Uses the fixture PRs in tests/fixtures/prs and
synthetic copies of them (renumbered) to make a 100-PR window.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from prdigest.analyze import analyze  # noqa: E402
from prdigest.core.presets import load_preset  # noqa: E402
from prdigest.core.records import PullRequest, parse_record  # noqa: E402
from prdigest.core.window import day_window  # noqa: E402
from prdigest.pipeline.digest import DigestOptions, build_digest  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.triage import assess  # noqa: E402
from prdigest.write.template import TemplateWriter  # noqa: E402

from conftest import REPO, all_fixtures  # noqa: E402


def window_of_100() -> list[PullRequest]:
    """100 PRs merged on 2026-06-10 (Asia/Shanghai): the fixtures, renumbered and re-dated."""
    base = [r for r in all_fixtures() if r.files]
    out = []
    for i in range(100):
        data = base[i % len(base)].to_json_dict()
        data["number"] = 100_000 + i
        data["merged_at"] = f"2026-06-10T{(i % 14) + 1:02d}:{i % 60:02d}:00+08:00"
        out.append(parse_record(data))
    return out


def huge_pr() -> PullRequest:
    lines = [f"+    value_{i} = compute({i})  # TODO(bench): row {i}" for i in range(30_000)]
    patch = "@@ -0,0 +1,30000 @@\n" + "\n".join(lines)
    return parse_record(
        {
            "schema": "prdigest.pr/v1",
            "repo": REPO,
            "number": 1,
            "title": "[Perf] Huge",
            "merged_at": "2026-06-10T03:00:00Z",
            "files": [
                {
                    "path": "vllm/huge.py",
                    "status": "added",
                    "additions": 30_000,
                    "deletions": 0,
                    "patch": patch,
                }
            ],
        }
    )


def timed(label: str, func: object, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        func()  # type: ignore[operator]
    elapsed = (time.perf_counter() - start) / repeat
    print(f"{label:<52} {elapsed * 1000:10.1f} ms")
    return elapsed


def main() -> None:
    preset = load_preset(REPO)
    fixtures = all_fixtures()
    per_pr = timed(
        f"analyze+triage, {len(fixtures)} fixture PRs (mean of 5)",
        lambda: [assess(analyze(r, preset)) for r in fixtures],
        repeat=5,
    ) / len(fixtures)
    print(f"{'  per PR':<52} {per_pr * 1000:10.2f} ms")
    big = huge_pr()
    timed("analyze one 30,000-line patch", lambda: analyze(big, preset))
    prs = window_of_100()
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "b.sqlite3") as store:
        store.records.upsert(prs)
        options = DigestOptions(repo=REPO, window=day_window("2026-06-10"))
        cold = timed(
            "digest of a 100-PR window, cold (analyze+write+store)",
            lambda: build_digest(store, options, TemplateWriter()),
        )
        warm = timed(
            "same window re-run (everything cached)",
            lambda: build_digest(store, options, TemplateWriter()),
        )
        print(f"{'  cold / warm':<52} {cold / warm:10.1f} x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'peak RSS':<52} {peak:10.1f} MB")


if __name__ == "__main__":
    main()
