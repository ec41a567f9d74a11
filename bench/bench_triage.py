"""Triage against the labelled development set: the shipped model and a day-fold refit.

    python scripts/build_dev_records.py --git /path/to/vllm-ascend --out /tmp/ascend-dev.jsonl
    python bench/bench_triage.py --records /tmp/ascend-dev.jsonl [--no-cv]

Prints exact agreement, agreement within one level, must-read recall and precision, daily-pick
precision and recall and the confusion matrix — once for the bundled model (fitted on these
labels, so an optimistic figure) and once cross-validated over days (the honest one; needs the
``fit`` extra) — next to the issue's targets. Also times ``assess`` per PR against the analyzer
on the same dossiers (paired runs, median of 3), so the model stays cheap beside analysis.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from prdigest.analyze import analyze  # noqa: E402
from prdigest.core.presets import load_preset  # noqa: E402
from prdigest.core.records import PullRequest  # noqa: E402
from prdigest.pipeline.evaluate import cross_validate, evaluate  # noqa: E402
from prdigest.sources.base import sync  # noqa: E402
from prdigest.sources.jsonl import JsonlSource  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.triage import assess  # noqa: E402
from prdigest.triage.evaluate import format_report  # noqa: E402
from prdigest.triage.features import NAMES  # noqa: E402
from prdigest.triage.fit import DEFAULT_C  # noqa: E402
from prdigest.triage.labels import load_labels  # noqa: E402

LABELS = ROOT / "eval" / "labels"
SAMPLE = ROOT / "src" / "prdigest" / "samples" / "vllm-sample.jsonl"
TARGETS = (
    "targets (cross-validated): exact ≥ 70%, within one ≥ 95%, must-read recall ≥ 95%, "
    "picks ≥ 85% / 85%"
)


def _timing(store_records: list[PullRequest], repeats: int = 3) -> tuple[float, float]:
    """Median seconds of analyze (the floor) and of assess over the same PRs, paired."""
    floors: list[float] = []
    costs: list[float] = []
    presets = {r.repo: load_preset(r.repo) for r in store_records}
    for _ in range(repeats):
        start = time.process_time()
        dossiers = [analyze(r, presets[r.repo]) for r in store_records]
        floors.append(time.process_time() - start)
        start = time.process_time()
        for d in dossiers:
            assess(d, bots=presets[d.repo].bots)
        costs.append(time.process_time() - start)
    return statistics.median(floors), statistics.median(costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, required=True, help="development records (JSONL)")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--no-cv", action="store_true", help="skip the cross-validated refit")
    args = parser.parse_args()
    labels = load_labels([args.labels])
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "bench.db") as store:
        for path in (args.records, SAMPLE):
            sync(JsonlSource(path), store.records, None)
        print(format_report(evaluate(store, labels), "shipped model (fitted on these labels)"))
        print()
        if not args.no_cv:
            cv = cross_validate(store, labels, names=NAMES, c=DEFAULT_C)
            print(format_report(cv, "cross-validated over days (refit without each fold)"))
            print()
        print(TARGETS)
        wanted = {(x.repo, x.number) for x in labels}
        records = [r for key in sorted(wanted) if (r := store.records.get(*key)) is not None]
    floor, cost = _timing(records)
    print(
        f"assess: {cost / len(records) * 1e3:.3f} ms per PR, {cost / floor:.3f}× analyze "
        f"({floor / len(records) * 1e3:.2f} ms per PR) over {len(records)} PRs, median of 3 pairs"
    )


if __name__ == "__main__":
    main()
