"""The importer is total: every line is stored or reported with its number and reason.

Reproduces issue 14: an integer ≥ 2^63 raised ``OverflowError`` in the store and the file's good
lines were lost (5 good + 1 bad → 0 records); nesting ≥ ~1000 levels raised ``RecursionError``;
an integer of over 4,300 digits ``ValueError``; a lone surrogate in ``body`` or ``patch``
``UnicodeEncodeError``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from prdigest.core.errors import RecordError, StorageError
from prdigest.core.records import INT_MAX, MAX_DEPTH, check_bounds, parse_record
from prdigest.store import open_store
from prdigest.store.records import RecordRepository

from cli_support import run_args as run
from publish_support import fixture_record_data


def good_lines(count: int = 5) -> list[str]:
    return [json.dumps(d, ensure_ascii=False) for d in fixture_record_data()[:count]]


def bad_variant(kind: str) -> str:
    data: dict[str, Any] = copy.deepcopy(fixture_record_data()[6])
    if kind == "int64":
        data["additions"] = 2**63
        return json.dumps(data)
    if kind == "digits":
        return json.dumps(data).replace('"number": ', '"number": ' + "9" * 5000 + ', "x": ', 1)
    if kind == "nested":
        return json.dumps(data)[:-1] + ', "extra": ' + "[" * 1500 + "]" * 1500 + "}"
    if kind == "negative":
        data["number"] = -(2**70)
        return json.dumps(data)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["int64", "digits", "nested", "negative"])
def test_one_bad_line_never_loses_the_good_ones(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(5)
    lines.insert(3, bad_variant(kind))
    path = tmp_path / "prs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "db.sqlite3"
    code, out, err = run(["import", str(path), "--db", str(db)], capsys)
    assert code == 3
    assert "Traceback" not in err
    assert f"Error: {path}:4: " in err  # the bad line, by number
    assert "5 new, 0 updated, 0 unchanged, 1 bad line(s)" in out
    with open_store(db) as store:
        assert len(list(store.records.stream())) == 5


def test_lone_surrogates_are_replaced_and_the_record_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = copy.deepcopy(fixture_record_data()[0])
    data["body"] = "before \\ud800 after"
    files = data["files"]
    files[0]["patch"] = (files[0].get("patch") or "") + "\n+x = '\\udfff'"
    line = json.dumps(data).replace("\\\\ud800", "\\ud800").replace("\\\\udfff", "\\udfff")
    path = tmp_path / "prs.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    db = tmp_path / "db.sqlite3"
    code, _out, err = run(["import", str(path), "--db", str(db)], capsys)
    assert code == 0, err
    with open_store(db) as store:
        stored = store.records.get(data["repo"], data["number"])
    assert stored.body == "before \ufffd after"
    assert stored.files is not None and stored.files[0].patch is not None
    assert stored.files[0].patch.endswith("x = '\ufffd'")


def test_bounds_name_the_field() -> None:
    data = copy.deepcopy(fixture_record_data()[0])
    data["files"][0]["additions"] = INT_MAX + 1
    with pytest.raises(RecordError, match=r"files\.0\.additions: integer out of the 64-bit range"):
        parse_record(data)
    assert check_bounds({"a": INT_MAX, "b": -INT_MAX - 1}) == {"a": INT_MAX, "b": -INT_MAX - 1}
    deep: Any = "x"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper"):
        check_bounds({"k": deep})


def test_a_batch_the_store_refuses_is_stored_line_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever makes the store refuse one record, the others of its batch still land."""
    lines = good_lines(6)
    poisoned = json.loads(lines[2])["number"]
    real = RecordRepository.upsert

    def upsert(self: RecordRepository, records: Any, **kwargs: Any) -> Any:
        batch = list(records)
        if any(r.number == poisoned for r in batch):
            raise StorageError("cannot store PR records: IntegrityError: simulated")
        return real(self, batch, **kwargs)

    monkeypatch.setattr(RecordRepository, "upsert", upsert)
    path = tmp_path / "prs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "db.sqlite3"
    code, out, err = run(["import", str(path), "--db", str(db)], capsys)
    assert code == 3
    assert f"Error: {path}:3: " in err and f"#{poisoned}: cannot store" in err
    assert "5 new" in out


def test_postgresql_refuses_one_record_and_keeps_the_rest(
    pg_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = good_lines(5)
    data = json.loads(lines[1])
    data["author"] = "x" * 150  # over the column's 100 characters: PostgreSQL refuses it
    lines[1] = json.dumps(data)
    path = tmp_path / "prs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("PRDIGEST_DB", pg_url)
    code, _out, err = run(["import", str(path)], capsys)
    assert code == 3, err
    assert f"Error: {path}:2: " in err and "Traceback" not in err
    with open_store(pg_url) as store:
        assert len(list(store.records.stream())) == 4
