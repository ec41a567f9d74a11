"""Site build figures: a year of daily digests, then a no-op rebuild and a one-day rebuild.

Run: python bench/bench_site.py [--days 365]

The digests are the two fixture days (vllm-project/vllm, 2026-06-10 and 2026-06-11) stored
under consecutive days' windows, so every page is a full-size page. Prints wall times and file
counts; asserts nothing (tests assert behaviour).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from prdigest.core.records import parse_record  # noqa: E402
from prdigest.core.window import day_window  # noqa: E402
from prdigest.pipeline.digest import DigestOptions, build_digest  # noqa: E402
from prdigest.publish.site.builder import SiteOptions, build_site  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.write.template import TemplateWriter  # noqa: E402

REPO = "vllm-project/vllm"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    args = parser.parse_args()
    fixtures = sorted((ROOT / "tests" / "fixtures" / "prs").glob("*.json"))
    records = [parse_record(json.loads(p.read_text("utf-8"))) for p in fixtures]
    with (
        tempfile.TemporaryDirectory(prefix="prdigest-bench-") as tmp,
        open_store(Path(tmp) / "db.sqlite3") as store,
    ):
        store.records.upsert(records)
        samples = [
            build_digest(store, DigestOptions(repo=REPO, window=day_window(d)), TemplateWriter())
            for d in ("2026-06-10", "2026-06-11")
        ]
        first = date(2026, 1, 1)
        for n in range(args.days):
            label = (first + timedelta(days=n)).isoformat()
            sample = samples[n % 2]
            window = day_window(label)
            store.digests.put(sample.model_copy(update={"window": window}))
        options = SiteOptions(out_dir=Path(tmp) / "site")
        for name in ("full build", "no-op rebuild"):
            start = time.perf_counter()
            report = build_site(store.digests, options)
            took = time.perf_counter() - start
            print(
                f"{name:16} {args.days} digests: {took:6.2f} s, "
                f"{len(report.written)} written, {report.unchanged} unchanged"
            )
        label = (first + timedelta(days=args.days)).isoformat()
        window = day_window(label)
        store.digests.put(samples[0].model_copy(update={"window": window}))
        start = time.perf_counter()
        report = build_site(store.digests, options)
        took = time.perf_counter() - start
        print(
            f"{'one new day':16} {args.days + 1} digests: {took:6.2f} s, "
            f"{len(report.written)} written, {report.unchanged} unchanged"
        )
        size = sum(p.stat().st_size for p in options.out_dir.rglob("*") if p.is_file())
        print(f"site size: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
