"""Fuzz (hypothesis) over what reads outside input: the JSONL importer, the diff parsers, the
symbol extractor, the git log parser and the reference-digest parser.

Each must end in a result or in the project's own error, never another exception. CI runs a
short run of each: 100 examples, derandomised (the same examples every run, so CI is
reproducible) and without hypothesis's example database. ``PRDIGEST_FUZZ=long`` runs 5,000
random examples of each (docs/reliability.md). The number of examples each target ran goes to
``RELIABILITY.md``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prdigest.analyze.code import extract_symbols, language_of
from prdigest.analyze.patches import parse_patch
from prdigest.core.errors import ImportLineError, InputError, PrdigestError
from prdigest.core.records import PullRequest
from prdigest.sources.git.logparse import parse_log
from prdigest.sources.github.diff import split_diff
from prdigest.sources.jsonl import parse_lines
from prdigest.write.llm.style import parse_reference

from publish_support import fixture_record_data
from reliability_report import record

LONG = os.environ.get("PRDIGEST_FUZZ") == "long"
FUZZ = settings(
    max_examples=5000 if LONG else 100,
    derandomize=not LONG,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
EXAMPLES: Counter[str] = Counter()
TARGETS = {
    "importer": "fuzz (hypothesis): JSONL importer, examples",
    "patch": "fuzz (hypothesis): hunk parser and symbol extractor, examples",
    "diff": "fuzz (hypothesis): GitHub diff splitter, examples",
    "gitlog": "fuzz (hypothesis): git log parser, examples",
    "reference": "fuzz (hypothesis): reference-digest parser, examples",
}


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    for target, scenario in TARGETS.items():
        if EXAMPLES[target]:
            record(scenario, EXAMPLES[target], EXAMPLES[target])


SEED = json.dumps(fixture_record_data()[0], ensure_ascii=False)
HUNK_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            ["@@ -1,3 +1,4 @@", "@@ -0,0 +1 @@", "@@ -5 +5,2 @@ def f():", "\\ No newline"]
        ),
        st.text(max_size=40).map(lambda t: "+" + t),
        st.text(max_size=40).map(lambda t: "-" + t),
        st.text(max_size=40).map(lambda t: " " + t),
        st.text(max_size=40),
    ),
    max_size=30,
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)


def _blank(line: bytes) -> bool:
    try:
        return not line.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False


def _mutated(data: dict[str, Any], key: str, value: Any) -> str:
    return json.dumps({**data, key: value}, ensure_ascii=False)


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=200),
            st.text(max_size=200).map(str.encode),
            st.tuples(st.sampled_from(sorted(json.loads(SEED))), JSON_VALUES).map(
                lambda kv: _mutated(json.loads(SEED), *kv).encode("utf-8", "surrogatepass")
            ),
            st.just(SEED.encode()),
        ),
        max_size=8,
    )
)
def test_importer_every_line_is_a_record_or_a_reported_line(lines: list[bytes]) -> None:
    EXAMPLES["importer"] += 1
    lines = [line.replace(b"\n", b" ") for line in lines]
    items = list(parse_lines(lines, name="fuzz.jsonl"))
    for item in items:
        assert isinstance(item, PullRequest | ImportLineError)
    assert len(items) == len(lines) - sum(1 for line in lines if _blank(line))  # one per line
    for item in items:
        if isinstance(item, PullRequest):
            json.dumps(item.to_json_dict(), ensure_ascii=False).encode("utf-8")  # storable


@FUZZ
@given(st.text(max_size=30), HUNK_LINES)
def test_patch_parser_and_symbol_extractor(path: str, lines: list[str]) -> None:
    EXAMPLES["patch"] += 1
    for name in (path or "x.py", "vllm/a.py", "csrc/k.cu", "tests/test_a.py", "ci.yaml"):
        parsed = parse_patch(name, "\n".join(lines))
        for status in ("modified", "added"):
            extract_symbols(
                parsed,
                language=language_of(name),
                in_test="test" in name,
                status=status,
                first_id=1,
            )


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "diff --git a/x b/x",
                    "--- a/x",
                    "+++ b/x",
                    "new file mode 100644",
                    "Binary files differ",
                ]
            ),
            st.text(max_size=40),
        ),
        max_size=30,
    ),
    HUNK_LINES,
)
def test_github_diff_splitter(head: list[str], hunks: list[str]) -> None:
    EXAMPLES["diff"] += 1
    with contextlib.suppress(PrdigestError):
        split_diff("\n".join(head + hunks))


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    b"\x1e\x1fprdigest\x1f"
                    + b"a" * 40
                    + b"\x1f\x1fA\x1fa@b\x1f2026-06-10T00:00:00Z\x1f"
                    b"2026-06-10T00:00:00Z\n",
                    b"Merge pull request #12 from x/y\n",
                    b"\x1e\x1fend\n",
                    b"diff --git a/x b/x\n",
                    b"--- a/x\n",
                    b"+++ b/x\n",
                    b"@@ -1 +1 @@\n",
                    b"+a\n",
                    b"-b\n",
                ]
            ),
            st.binary(max_size=60),
        ),
        max_size=40,
    )
)
def test_git_log_parser(chunks: list[bytes]) -> None:
    EXAMPLES["gitlog"] += 1
    with contextlib.suppress(PrdigestError):
        list(parse_log(io.BytesIO(b"".join(chunks)).readline))


@FUZZ
@given(st.text(max_size=400))
def test_reference_digest_parser(text: str) -> None:
    EXAMPLES["reference"] += 1
    with contextlib.suppress(InputError):
        parse_reference(text)
