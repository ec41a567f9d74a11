"""The bundled sample is exactly the fixture set, and the fixture set is what the issue asks."""

from __future__ import annotations

import json
from importlib import resources

from prdigest.core.records import PullRequest, parse_record

EXAMPLE_DIGEST_PRS = {
    56908,
    56104,
    56819,
    56941,
    56597,
    52781,
    55602,
    56640,
    53721,
    55309,
    55823,
    54934,
    51794,
    56671,
    56366,
    56317,
}


def test_bundled_sample_equals_fixtures(records: list[PullRequest]) -> None:
    text = (
        resources.files("prdigest.samples")
        .joinpath("vllm-sample.jsonl")
        .read_text(encoding="utf-8")
    )
    bundled = [parse_record(json.loads(line)) for line in text.splitlines() if line.strip()]
    assert bundled == records, "run scripts/build_samples.py"


def test_fixture_set_covers_the_example_digests(records: list[PullRequest]) -> None:
    numbers = {r.number for r in records}
    assert len(records) >= 24
    assert numbers >= EXAMPLE_DIGEST_PRS


def test_fixture_counts_are_consistent(records: list[PullRequest]) -> None:
    for r in records:
        if r.files is None:
            continue
        assert r.additions == sum(f.additions for f in r.files), r.number
        assert r.deletions == sum(f.deletions for f in r.files), r.number
        for f in r.files:
            if f.patch:
                lines = f.patch.split("\n")
                assert sum(x.startswith("+") for x in lines) == f.additions, (r.number, f.path)
                assert sum(x.startswith("-") for x in lines) == f.deletions, (r.number, f.path)
