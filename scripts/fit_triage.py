"""Fit triage's verdict model on the labelled development set and write ``model.json``.

    python scripts/build_dev_records.py --git /tmp/vllm-ascend --out /tmp/ascend-dev.jsonl
    python scripts/fit_triage.py --records /tmp/ascend-dev.jsonl

Needs the ``fit`` extra (scikit-learn). Reads every label under ``eval/labels`` (the vllm-ascend
development set, and the example digests' PRs, whose records are the fixture PRs), fits one
logistic regression per level boundary, tunes the must-read threshold and the pick floor by
cross-validation over days, and writes the weights with the cross-validated figures of the
whole procedure (``info.cv``) to ``src/prdigest/triage/model.json``. Review the figures and the
changed golden files before committing a new model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from prdigest.pipeline.evaluate import (  # noqa: E402
    complete_days,
    cross_validate,
    fit_and_tune,
    labelled,
)
from prdigest.sources.base import sync  # noqa: E402
from prdigest.sources.jsonl import JsonlSource  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.triage.features import NAMES  # noqa: E402
from prdigest.triage.fit import C_SCALE, DEFAULT_C  # noqa: E402
from prdigest.triage.labels import load_labels  # noqa: E402
from prdigest.triage.model import MODEL_FILE, model_json  # noqa: E402

LABELS = ROOT / "eval" / "labels"
FIXTURES = ROOT / "src" / "prdigest" / "samples" / "vllm-sample.jsonl"
OUT = ROOT / "src" / "prdigest" / "triage" / MODEL_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, required=True, help="the development records")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument(
        "--c",
        type=float,
        default=DEFAULT_C,
        help="inverse L2 strength (must-read boundary; the lower ones C_SCALE times it)",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    labels = load_labels([args.labels])
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "fit.db") as store:
        for records in (args.records, FIXTURES):
            sync(JsonlSource(records), store.records, None)
        items = labelled(store, labels)
        days = complete_days(store, labels)
        samples = [x.sample for x in items if not x.ruled]
        model = fit_and_tune(samples, NAMES, days, args.c)
        cv = cross_validate(store, labels, names=NAMES, c=args.c)
    info = {
        "fitted": date.today().isoformat(),
        "labels": len(labels),
        "samples": len(samples),
        "days": len({x.day for x in labels}),
        "C": args.c,
        "C_scale": list(C_SCALE),
        "cv": cv.to_json(),
    }
    data = model_json(model)
    data["info"] = info
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    where = args.out
    print(f"wrote {where}: threshold {model.must_threshold}, floor {model.pick_floor}")
    print(json.dumps(cv.to_json(), indent=1))


if __name__ == "__main__":
    main()
