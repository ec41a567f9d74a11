"""Fixture PRs for the false-claim suite, written by the project as TOML (old and new text of
each file) and turned into ``prdigest.pr/v1`` records with git-like patches.

A case file holds the PR (title, body, files), the level its entry is written at, and what the
entry must and must not say (regular expressions over the zh paragraph and title).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prdigest.core.records import PullRequest, parse_record

CASES = Path(__file__).parent / "fixtures" / "falseclaims"
_FUNCNAME = re.compile(r"^[A-Za-z_$]")  # git's default hunk-header function line


@dataclass(frozen=True)
class Case:
    name: str
    record: PullRequest
    level: str
    must: tuple[str, ...]
    must_not: tuple[str, ...]
    must_en: tuple[str, ...]
    must_not_en: tuple[str, ...]


def _header(old: list[str], start: int) -> str:
    """The function context git prints after ``@@``: the last unindented line above the hunk."""
    for line in reversed(old[:start]):
        if _FUNCNAME.match(line):
            return " " + line.rstrip()[:80]
    return ""


def patch_of(old: str, new: str) -> str:
    """A GitHub-style patch (hunks only, no ---/+++ headers) from two texts."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, old_lines, new_lines).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        old_start = i1 + 1 if i2 > i1 else i1
        new_start = j1 + 1 if j2 > j1 else j1
        out.append(f"@@ -{old_start},{i2 - i1} +{new_start},{j2 - j1} @@{_header(old_lines, i1)}")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [" " + x for x in old_lines[a1:a2]]
                continue
            out += ["-" + x for x in old_lines[a1:a2]]
            out += ["+" + x for x in new_lines[b1:b2]]
    return "\n".join(out)


def _file(spec: dict[str, Any]) -> dict[str, Any]:
    old, new = spec.get("old", ""), spec.get("new", "")
    diff = list(difflib.ndiff(old.splitlines(), new.splitlines()))
    additions = sum(1 for x in diff if x.startswith("+ "))
    deletions = sum(1 for x in diff if x.startswith("- "))
    patch = None if spec.get("no_patch") else patch_of(old, new)
    return {
        "path": spec["path"],
        "previous_path": spec.get("previous_path"),
        "status": spec.get("status", "modified"),
        "additions": additions,
        "deletions": deletions,
        "patch": patch if patch else (None if spec.get("no_patch") else ""),
    }


def load_case(path: Path) -> Case:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    files = [_file(f) for f in data["files"]]
    record = {
        "schema": "prdigest.pr/v1",
        "repo": data.get("repo", "vllm-project/vllm-ascend"),
        "number": data["number"],
        "url": f"https://github.com/{data.get('repo', 'vllm-project/vllm-ascend')}/pull/{data['number']}",
        "title": data["title"],
        "author": "fixture-author",
        "body": data.get("body", ""),
        "merged_at": "2026-07-10T08:00:00+00:00",
        "additions": sum(f["additions"] for f in files),
        "deletions": sum(f["deletions"] for f in files),
        "changed_files": len(files),
        "files": files,
        "source": "git",
    }
    return Case(
        name=path.stem,
        record=parse_record(record),
        level=data.get("level", "worth_reading"),
        must=tuple(data.get("must", ())),
        must_not=tuple(data.get("must_not", ())),
        must_en=tuple(data.get("must_en", ())),
        must_not_en=tuple(data.get("must_not_en", ())),
    )


def all_cases() -> list[Case]:
    return [load_case(p) for p in sorted(CASES.glob("*.toml"))]
