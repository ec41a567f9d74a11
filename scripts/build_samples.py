"""Rebuild the bundled sample (src/prdigest/samples/vllm-sample.jsonl) from tests/fixtures/prs.

Run: python scripts/build_samples.py   (a test fails when the two disagree)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "prs"
SAMPLE = ROOT / "src" / "prdigest" / "samples" / "vllm-sample.jsonl"


def sample_lines() -> list[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from prdigest.core.records import parse_record

    lines = []
    for path in sorted(FIXTURES.glob("*.json"), key=lambda p: int(p.stem)):
        record = parse_record(json.loads(path.read_text(encoding="utf-8")))
        lines.append(json.dumps(record.to_json_dict(), ensure_ascii=False, separators=(",", ":")))
    return lines


def main() -> None:
    SAMPLE.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    print(f"wrote {SAMPLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
