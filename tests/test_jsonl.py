"""JSONL import/export: bad lines are reported by number, the good ones still land."""

from __future__ import annotations

import io
import json
from pathlib import Path

from prdigest.core.errors import ImportLineError
from prdigest.core.records import PullRequest
from prdigest.sources.jsonl import parse_lines, read_records, write_records
from prdigest.store import Store


def _jsonl(records: list[PullRequest]) -> str:
    out = io.StringIO()
    write_records(records, out)
    return out.getvalue()


def test_bad_lines_are_reported_and_good_lines_kept(
    records: list[PullRequest], tmp_path: Path
) -> None:
    good = _jsonl(records[:3]).splitlines()
    missing_title = json.loads(good[1])
    del missing_title["title"]
    lines = [good[0], "{not json", json.dumps(missing_title), "", good[2]]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = list(read_records(path))
    errors = [i for i in items if isinstance(i, ImportLineError)]
    kept = [i for i in items if isinstance(i, PullRequest)]
    assert [r.number for r in kept] == [records[0].number, records[2].number]
    assert [e.line for e in errors] == [2, 3]
    assert "not valid JSON" in str(errors[0])
    assert str(errors[1]).endswith(f"{records[1].ref} field 'title': required field is missing")
    assert str(errors[1]).startswith(f"{path}:3: ")


def test_non_utf8_line_is_one_error(records: list[PullRequest]) -> None:
    good = _jsonl(records[:1]).encode()
    items = list(parse_lines([b'{"x": "\xff"}\n', good], name="in.jsonl"))
    assert isinstance(items[0], ImportLineError) and "not UTF-8" in str(items[0])
    assert isinstance(items[1], PullRequest)


def test_export_import_round_trip(loaded_store: Store, records: list[PullRequest]) -> None:
    text = _jsonl(list(loaded_store.records.stream()))
    back = [i for i in parse_lines(text.splitlines(), name="x") if isinstance(i, PullRequest)]
    assert sorted(back, key=lambda r: r.number) == sorted(records, key=lambda r: r.number)
