"""Rebuild the records of the development set from a local clone of a repository.

The labelled development set (`eval/`) names PRs by number; their records are not committed.
This script rebuilds them from a clone with prdigest's own git source, so a label and the record
it was made from stay in step:

    git clone https://github.com/vllm-project/vllm-ascend /tmp/vllm-ascend
    python scripts/build_dev_records.py --git /tmp/vllm-ascend --out /tmp/ascend-dev.jsonl

Only PRs merged before 2026-08-01 are written: later ones are kept for independent evaluation.
`--show DAY` prints one day's records in a form meant for reading by a labeller (title, body,
files with their sizes, patches clipped).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = "vllm-project/vllm-ascend"
SINCE = "2026-05-01"
CUTOFF = "2026-08-01"  # exclusive: PRs merged on or after this day are never used for tuning


def build(clone: Path, out: Path, since: str, until: str) -> int:
    """Sync the window from the clone into a scratch store and export it as JSONL."""
    with tempfile.TemporaryDirectory() as scratch:
        db = str(Path(scratch) / "dev.db")
        common = ["--repo", REPO, "--db", db]
        window = ["--since", since, "--until", min(until, CUTOFF)]
        _prdigest(["sync", "--git", str(clone), *common, *window])
        _prdigest(["export", *common, "--out", str(out)])
    return sum(1 for _ in out.open(encoding="utf-8"))


def _prdigest(arguments: list[str]) -> None:
    subprocess.run([sys.executable, "-m", "prdigest", *arguments], check=True)


def show(records: Path, day: str, clip: int) -> None:
    """Print every record merged on `day` (the record's local date) for a human reader."""
    for line in records.open(encoding="utf-8"):
        record = json.loads(line)
        if record["merged_at"][:10] != day:
            continue
        print("=" * 100)
        print(f"#{record['number']}  {record['title']}  by {record['author']}")
        print(f"merged {record['merged_at']}  +{record['additions']}/-{record['deletions']}")
        print("-" * 40, "body")
        print((record.get("body") or "(no body)").strip())
        print("-" * 40, "files")
        for file in record["files"]:
            renamed = f" (from {file['previous_path']})" if file.get("previous_path") else ""
            size = f"+{file['additions']}/-{file['deletions']}"
            print(f"  {file['status']:9} {size} {file['path']}{renamed}")
        print("-" * 40, "patches")
        budget = clip
        for file in record["files"]:
            patch = file.get("patch") or ""
            if budget <= 0:
                break
            print(f"--- {file['path']}")
            print(patch[:budget])
            budget -= len(patch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", type=Path, help="the clone to read")
    parser.add_argument(
        "--out", type=Path, required=True, help="JSONL file to write (or read with --show)"
    )
    parser.add_argument("--since", default=SINCE)
    parser.add_argument("--until", default=CUTOFF)
    parser.add_argument("--show", metavar="DAY", help="print one day of an existing --out file")
    parser.add_argument("--clip", type=int, default=6000, help="patch characters shown per PR")
    arguments = parser.parse_args()
    if arguments.show:
        show(arguments.out, arguments.show, arguments.clip)
        return
    if arguments.git is None:
        parser.error("--git is required to build")
    count = build(arguments.git, arguments.out, arguments.since, arguments.until)
    print(f"wrote {count} record(s) to {arguments.out}")


if __name__ == "__main__":
    main()
