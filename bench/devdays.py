"""Days of the development set as the LLM writer sees them, for the LLM benchmarks.

The records are not committed (``eval/README.md`` says how to rebuild them): the path comes
from ``PRDIGEST_DEV_RECORDS`` (default ``/work/data/ascend-dev.jsonl``). A day is imported into
a scratch store and digested by the real pipeline with a writer that only captures the write
requests, so selection, areas and the same-day neighbours are exactly those of a real run.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from datetime import date, timedelta  # noqa: E402

from prdigest.core.records import PullRequest, parse_record  # noqa: E402
from prdigest.core.window import day_window, range_window, zone  # noqa: E402
from prdigest.pipeline.digest import DigestOptions, run_digest  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.write import BatchResult, WriteRequest  # noqa: E402
from prdigest.write.template import TemplateWriter  # noqa: E402

REPO = "vllm-project/vllm-ascend"
DEFAULT_RECORDS = Path("/work/data/ascend-dev.jsonl")
REFERENCES = ROOT / "eval" / "reference" / "vllm-ascend"
CUTOFF = "2026-08-01"  # records merged on or after it are never used


def records_path() -> Path | None:
    path = Path(os.environ.get("PRDIGEST_DEV_RECORDS", str(DEFAULT_RECORDS)))
    return path if path.is_file() else None


@functools.cache
def all_records() -> tuple[PullRequest, ...]:
    path = records_path()
    if path is None:
        return ()
    found = []
    for line in path.open(encoding="utf-8"):
        data = json.loads(line)
        if data["repo"] == REPO and data["merged_at"][:10] < CUTOFF:
            found.append(parse_record(data))
    return tuple(found)


def days() -> dict[str, list[PullRequest]]:
    by_day: dict[str, list[PullRequest]] = {}
    for pr in all_records():
        local = pr.merged_at.astimezone(zone("Asia/Shanghai")).date().isoformat()
        by_day.setdefault(local, []).append(pr)
    return by_day


class Capture:
    """A writer that keeps the requests it is given and writes template entries."""

    key = "capture"

    def __init__(self) -> None:
        self.requests: list[WriteRequest] = []
        self.template = TemplateWriter()

    def write_batch(self, requests: Sequence[WriteRequest], *, lang: str) -> BatchResult:
        self.requests = list(requests)
        return self.template.write_batch(requests, lang=lang)


@dataclass(frozen=True)
class Day:
    label: str
    records: tuple[PullRequest, ...]
    requests: tuple[WriteRequest, ...]  # every PR of the window, selected ones with paragraph

    @property
    def selected(self) -> list[WriteRequest]:
        return [r for r in self.requests if r.paragraph]


def digest_requests(records: Sequence[PullRequest], since: str, until: str, top: int) -> Day:
    """The write requests of a window of ``records`` (a day, or several days as one)."""
    with tempfile.TemporaryDirectory() as scratch:
        store = open_store(Path(scratch) / "dev.sqlite3")
        try:
            store.records.upsert(records)
            capture = Capture()
            if since == until:
                window = day_window(since)
            else:
                end = (date.fromisoformat(until) + timedelta(days=1)).isoformat()
                window = range_window(since, end)
            run_digest(store, DigestOptions(repo=REPO, window=window, top=top), capture)
        finally:
            store.close()
    return Day(
        since if since == until else f"{since}..{until}", tuple(records), tuple(capture.requests)
    )


def day(label: str, top: int = 8) -> Day:
    return digest_requests(days().get(label, []), label, label, top)
