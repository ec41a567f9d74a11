"""Every GraphQL document the GitHub source can send validates against GitHub's schema."""

from __future__ import annotations

import pytest
from graphql import parse, validate

from fakegithub import github_schema
from prdigest.sources.github.queries import (
    FRAGMENTS,
    Connection,
    PageRequest,
    all_documents,
    detail_query,
    pages_query,
    with_fragments,
)

DOCUMENTS = list(all_documents(max_batch=50))  # 50: the largest --batch-size


@pytest.mark.parametrize(("name", "document"), DOCUMENTS, ids=[n for n, _ in DOCUMENTS])
def test_document_validates(name, document):
    assert validate(github_schema(), parse(document)) == []


def test_every_connection_and_batch_size_is_covered():
    names = {name for name, _ in DOCUMENTS}
    assert {f"pages[{c.value}]" for c in Connection} <= names
    assert {"list", "detail[1]", "detail[50]", "pages[all]"} <= names
    for size in range(1, 51):
        assert validate(github_schema(), parse(detail_query(list(range(1, size + 1))))) == []


def test_every_fragment_is_used_by_some_document():
    used = set()
    for _, document in DOCUMENTS:
        used |= {name for name in FRAGMENTS if f"fragment {name} " in document}
    assert used == set(FRAGMENTS)


def test_the_schema_check_can_fail():
    """The validator is not a rubber stamp: patch text is not in GitHub's GraphQL."""
    bad = with_fragments(
        'query Q { repository(owner: "o", name: "r") { pullRequest(number: 1) { '
        "files(first: 10) { nodes { path patch } } } } }"
    )
    messages = [e.message for e in validate(github_schema(), parse(bad))]
    assert any("Cannot query field 'patch'" in m for m in messages)


def test_pages_query_variables_match_requests():
    requests = [
        PageRequest(7, "PR_7", Connection.FILES, "c1"),
        PageRequest(7, "PR_7_T3", Connection.THREAD_COMMENTS, None),
    ]
    document, variables = pages_query(requests)
    assert variables == {"id0": "PR_7", "after0": "c1", "id1": "PR_7_T3", "after1": None}
    assert "m0: node(id: $id0)" in document and "m1: node(id: $id1)" in document


def test_empty_batches_are_refused():
    with pytest.raises(ValueError):
        detail_query([])
    with pytest.raises(ValueError):
        pages_query([])
