"""The PR record model: validation errors name the PR and the field."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from prdigest.core.errors import RecordError
from prdigest.core.records import PullRequest, parse_record, record_json_schema


def test_every_fixture_validates_and_round_trips(records: list[PullRequest]) -> None:
    for record in records:
        again = parse_record(json.loads(json.dumps(record.to_json_dict())))
        assert again == record


def test_missing_required_field_names_field_and_pr(
    fixture_json: Callable[[int], dict[str, object]],
) -> None:
    data = fixture_json(56104)
    del data["merged_at"]
    with pytest.raises(RecordError) as info:
        parse_record(data)
    assert str(info.value) == "vllm-project/vllm#56104 field 'merged_at': required field is missing"


def test_bad_nested_value_names_the_path(fixture_json: Callable[[int], dict[str, object]]) -> None:
    data = fixture_json(56104)
    files = data["files"]
    assert isinstance(files, list)
    files[1]["status"] = "exploded"
    with pytest.raises(RecordError) as info:
        parse_record(data)
    assert info.value.field == "files.1.status"
    assert info.value.pr == "vllm-project/vllm#56104"


def test_unknown_field_is_rejected_not_ignored(
    fixture_json: Callable[[int], dict[str, object]],
) -> None:
    data = fixture_json(56819)
    data["merged_by"] = "someone"
    with pytest.raises(RecordError, match="merged_by"):
        parse_record(data)


@pytest.mark.parametrize("repo", ["vllm", "a/b/c", "", "/x"])
def test_repo_must_be_owner_slash_name(
    repo: str, fixture_json: Callable[[int], dict[str, object]]
) -> None:
    data = fixture_json(56819)
    data["repo"] = repo
    with pytest.raises(RecordError, match="'repo'"):
        parse_record(data)


def test_non_object_is_a_clear_error() -> None:
    with pytest.raises(RecordError, match="expected a JSON object, got list"):
        parse_record([1, 2])


def test_naive_timestamp_is_rejected(fixture_json: Callable[[int], dict[str, object]]) -> None:
    data = fixture_json(56819)
    data["merged_at"] = "2026-06-10T08:00:00"
    with pytest.raises(RecordError, match="merged_at"):
        parse_record(data)


def test_unknown_means_none_and_known_empty_means_empty(
    fixture_json: Callable[[int], dict[str, object]],
) -> None:
    data = fixture_json(56819)
    del data["reviews"]
    data["comments"] = []
    record = parse_record(data)
    assert record.reviews is None
    assert record.comments == ()
    assert "reviews" not in record.to_json_dict()


def test_json_schema_lists_required_fields() -> None:
    schema = record_json_schema()
    assert schema["title"] == "prdigest.pr/v1"
    assert set(schema["required"]) == {"schema", "repo", "number", "title", "merged_at"}
    assert "files" in schema["properties"]
