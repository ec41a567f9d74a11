"""Fixture PR records for the fake GitHub: the hand-written fixtures and a 100-PR window.

The 100-PR window is derived deterministically from ``tests/fixtures/prs/*.json``: each synthetic
PR copies a fixture (cycling through them), gets a new number, new SHAs and times inside the
window. Three of them are enlarged so that every paginated path runs: one with 120 files (a
GraphQL ``files`` page more), 60 review threads (a ``reviewThreads`` page more) one of which has
25 comments, 130 conversation comments, 120 checks and 30 labels; and one with 320 files, whose
``.diff`` GitHub refuses (406, more than 300 files) so its patches come from 4 ``/files`` pages.

Fixtures GitHub could not have produced are left out of the window: a record without ``files``
(``56996``, a metadata-only record) — GitHub always lists a PR's files.
"""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PR_DIR = FIXTURES / "prs"
REPO = "vllm-project/vllm"
WINDOW_START = datetime(2026, 6, 10, 0, 0, tzinfo=UTC)
WINDOW_END = WINDOW_START + timedelta(days=1)


def load_fixtures() -> list[dict[str, Any]]:
    """Every fixture record as JSON data, by number."""
    records = [json.loads(path.read_text("utf-8")) for path in sorted(PR_DIR.glob("*.json"))]
    return sorted(records, key=lambda r: r["number"])


def github_shaped(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fixtures that describe something GitHub could serve (see the module docstring)."""
    return [r for r in records if r.get("files") is not None]


def _sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _shift(value: str | None, delta: timedelta) -> str | None:
    if value is None:
        return None
    return _iso(datetime.fromisoformat(value.replace("Z", "+00:00")) + delta)


def _renumber(base: dict[str, Any], number: int, merged_at: datetime) -> dict[str, Any]:
    record = copy.deepcopy(base)
    old_merge = datetime.fromisoformat(base["merged_at"].replace("Z", "+00:00"))
    delta = merged_at - old_merge
    record["number"] = number
    record["url"] = f"https://github.com/{REPO}/pull/{number}"
    record["head_sha"] = _sha("head", number)
    record["merge_commit_sha"] = _sha("merge", number)
    for key in ("created_at", "updated_at", "merged_at"):
        record[key] = _shift(record.get(key), delta)
    for index, commit in enumerate(record.get("commits") or []):
        commit["sha"] = _sha("commit", number, index)
        commit["committed_at"] = _shift(commit.get("committed_at"), delta)
    for review in record.get("reviews") or []:
        review["submitted_at"] = _shift(review.get("submitted_at"), delta)
    for thread in record.get("review_threads") or []:
        for comment in thread["comments"]:
            comment["created_at"] = _shift(comment.get("created_at"), delta)
    for comment in record.get("comments") or []:
        comment["created_at"] = _shift(comment.get("created_at"), delta)
    return record


def _patch(path: str, lines: int) -> str:
    body = "\n".join(f"+line {i} of {path}" for i in range(lines))
    return f"@@ -0,0 +1,{lines} @@\n{body}"


def _added_file(path: str, lines: int) -> dict[str, Any]:
    return {
        "path": path,
        "previous_path": None,
        "status": "added",
        "additions": lines,
        "deletions": 0,
        "binary": False,
        "patch": _patch(path, lines),
    }


def _enlarge_many(record: dict[str, Any]) -> None:
    """Overflow every GraphQL connection that pages: files, threads, thread comments, …"""
    extra = [_added_file(f"tests/generated/test_case_{i:03d}.py", 3) for i in range(120)]
    extra.append(_added_file("docs/usage/中文 指南.md", 2))  # git quotes this path in a diff
    record["files"] = record["files"] + extra
    base = datetime.fromisoformat(record["created_at"].replace("Z", "+00:00"))
    comment = {
        "author": "reviewer-a",
        "author_type": "User",
        "body": "see above",
        "created_at": _iso(base + timedelta(hours=1)),
    }
    record["review_threads"] = record["review_threads"] + [
        {
            "path": extra[i]["path"],
            "line": 2,
            "is_resolved": i % 2 == 0,
            "is_outdated": False,
            "diff_hunk": "@@ -0,0 +1,3 @@\n+line 0",
            "comments": [dict(comment, body=f"nit {i}")],
        }
        for i in range(60)
    ]
    record["review_threads"][-1]["comments"] = [
        dict(comment, body=f"reply {k}", author="reviewer-b" if k % 2 else "reviewer-a")
        for k in range(25)
    ]
    record["comments"] = record["comments"] + [
        dict(comment, body=f"/retest {k}", author="ci-bot", author_type="Bot") for k in range(130)
    ]
    record["checks"] = record["checks"] + [
        {"name": f"buildkite/ci/pr/shard-{k}", "status": "COMPLETED", "conclusion": "SUCCESS"}
        for k in range(120)
    ]
    record["labels"] = [*record["labels"], *(f"area-{k}" for k in range(30))]
    _recount(record)


def _enlarge_huge(record: dict[str, Any]) -> None:
    """More than 300 files: the .diff answer is 406 too_large and /files has 4 pages."""
    record["files"] = record["files"] + [
        _added_file(f"vllm/model_executor/generated/op_{i:03d}.py", 2) for i in range(320)
    ]
    _recount(record)


def _recount(record: dict[str, Any]) -> None:
    record["additions"] = sum(f["additions"] for f in record["files"])
    record["deletions"] = sum(f["deletions"] for f in record["files"])
    record["changed_files"] = len(record["files"])


def window_records(count: int = 100, *, first_number: int = 60001) -> list[dict[str, Any]]:
    """``count`` GitHub-shaped PRs merged in the fixed window (2026-06-10 UTC), deterministic."""
    bases = github_shaped(load_fixtures())
    step = (WINDOW_END - WINDOW_START) / (count + 1)
    records = []
    for index in range(count):
        merged_at = WINDOW_START + step * (index + 1)
        merged_at = merged_at.replace(microsecond=0)
        records.append(_renumber(bases[index % len(bases)], first_number + index, merged_at))
    if count >= 10:
        _enlarge_many(records[3])
        _enlarge_huge(records[7])
    return records
