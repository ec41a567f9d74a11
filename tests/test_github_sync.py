"""End-to-end syncs through the fake GitHub: fidelity, cost, re-runs, faults and resuming.

What "equal to the fixtures" means: ``to_json_dict()`` of every stored record equals the
fixture record's, field for field. Nothing is excluded for the synthetic window: every field
of ``prdigest.pr/v1`` is carried by GitHub (GraphQL or the diff). The only fixture GitHub could
not produce (``56996``, a metadata-only record without ``files``) is not in the window (see
``fakegithub.data``).
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from graphql import parse, validate
from sqlalchemy import func, select

from prdigest.core.errors import AuthError, RateLimitError, UpstreamError
from prdigest.core.models import Window
from prdigest.core.records import parse_record
from prdigest.sources.base import SyncReport
from prdigest.sources.base import sync as store_all
from prdigest.sources.github import GitHubSource
from prdigest.sources.github import source as sync_module
from prdigest.store import Store, open_store, schema

from fakegithub import (
    REPO,
    WINDOW_END,
    WINDOW_START,
    FakeGitHub,
    client_for,
    github_schema,
    window_records,
)


class Killed(BaseException):
    """Stands for the process dying: not an Exception, so nothing in the library catches it."""


@pytest.fixture(scope="module")
def window() -> list[dict[str, Any]]:
    github_schema()  # build once, outside any timing
    return window_records(100)


@pytest.fixture(scope="module")
def small() -> list[dict[str, Any]]:
    return window_records(20)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return open_store(tmp_path / "prdigest.sqlite3")


def expected(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {r["number"]: parse_record(r).to_json_dict() for r in records}


def stored(store: Store) -> dict[int, dict[str, Any]]:
    return {pr.number: pr.to_json_dict() for pr in store.records.stream(REPO)}


def row_count(store: Store) -> int:
    with store._engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(schema.pull_requests)).scalar())


def sync_window(
    store: Store, client: Any, repo: str, since: Any, until: Any, **options: Any
) -> SyncReport:
    """One GitHub sync of a window through the sync loop, as ``prdigest sync`` runs it."""
    source = GitHubSource(client, repo, store.checkpoints, store.records, **options)
    window = Window(since=since, until=until, tz="UTC", label="w")
    return store_all(source, store.records, window)


def sync(store: Store, fake: FakeGitHub, **options: Any) -> SyncReport:
    policy = {k: options.pop(k) for k in list(options) if k in ("attempts", "timeout", "max_wait")}
    with client_for(fake, **policy) as client:
        return sync_window(store, client, REPO, WINDOW_START, WINDOW_END, **options)


def assert_complete(store: Store, records: list[dict[str, Any]]) -> None:
    assert stored(store) == expected(records)
    assert row_count(store) == len(records)  # nothing duplicated


# -- the done-when checks ------------------------------------------------------------------


def test_window_of_100_equals_fixtures_at_most_1_2_requests_per_pr(window, store):
    with FakeGitHub(window) as fake:
        result = sync(store, fake)
        categories = Counter(seen.category for seen in fake.seen)
    assert result.details.complete and result.stopped is None
    assert result.details.listed == result.found == 100
    assert_complete(store, window)
    assert result.details.requests == len(fake.seen)  # the client counts what the server saw
    assert result.details.requests / 100 <= 1.2, categories
    assert categories["graphql:list"] == 1
    assert categories["graphql:detail"] == 4  # batches of 25
    assert categories["diff"] == 99  # the 320-file PR goes to /files directly
    assert categories["files"] == 4 + 2 * 3  # 320 files, and two too-large fixtures (x3)
    assert {limit.resource for limit in result.details.rate_limits} == {"core", "graphql"}


def test_every_document_sent_validates_against_the_schema(small, store):
    with FakeGitHub(small) as fake:
        documents: list[str] = []
        original = fake._graphql

        def spy(payload: dict[str, Any], fault: Any) -> Any:
            documents.append(payload["query"])
            return original(payload, fault)

        fake._graphql = spy  # type: ignore[method-assign]
        sync(store, fake)
    assert {d.split("(")[0].split()[-1] for d in documents} == {
        "ListMergedPullRequests",
        "PullRequestDetails",
        "MorePages",
    }
    for document in documents:
        assert validate(github_schema(), parse(document)) == []


def test_rerun_with_nothing_changed_costs_only_the_listing(window, store):
    with FakeGitHub(window) as fake:
        sync(store, fake)
        before = len(fake.seen)
        again = sync(store, fake)
        rerun = fake.seen[before:]
    assert [seen.category for seen in rerun] == ["graphql:list"]
    assert again.found == 0 and again.details.unchanged == 100 and again.details.complete
    assert_complete(store, window)


def test_a_changed_pr_is_refetched_and_its_diff_revalidated_with_the_etag(small, store):
    with FakeGitHub(small) as fake:
        sync(store, fake)
        changed = fake.records[small[0]["number"]]
        changed["updated_at"] = "2026-06-11T09:00:00Z"
        changed["comments"] = [
            *changed["comments"],
            {
                "author": "late-reader",
                "author_type": "User",
                "body": "Thanks, this fixed it.",
                "created_at": "2026-06-11T09:00:00Z",
            },
        ]
        before = len(fake.seen)
        result = sync(store, fake)
        rerun = fake.seen[before:]
    assert [s.category for s in rerun] == ["graphql:list", "graphql:detail", "diff"]
    assert rerun[1].numbers == (changed["number"],)
    assert rerun[2].if_none_match is not None and rerun[2].status == 304
    assert result.found == 1 and result.details.unchanged == 19
    assert_complete(store, list(fake.records.values()))


def test_requests_identify_prdigest(small, store):
    with FakeGitHub(small) as fake:
        sync(store, fake)
    assert {seen.user_agent for seen in fake.seen} == {"prdigest/0.1.0"}


# -- faults: every one ends complete, or stops cleanly and completes on the next run --------

# The client's timeout in the fault tests: long enough that a loaded machine never hits it by
# accident; only a held-back answer ("slow") outlasts it. Faults are counted in requests.
TIMEOUT = 15.0

RECOVERS = [
    pytest.param("graphql:detail", "status", {"status": 502, "times": 3}, id="502-burst"),
    pytest.param("diff", "status", {"status": 503, "times": 3, "skip": 5}, id="503-burst"),
    pytest.param("graphql:list", "status", {"status": 504, "times": 2}, id="504-listing"),
    # held back far longer than the client's timeout: the timeout, not the load, decides
    pytest.param(
        "diff",
        "slow",
        {"delay": 600.0, "times": 2, "skip": 2},
        id="timeout",
        marks=pytest.mark.slow,  # two client timeouts of a few seconds each
    ),
    pytest.param("files", "drop", {"times": 2}, id="dropped-connection"),
    pytest.param("graphql:detail", "secondary", {"retry_after": 30}, id="secondary-403"),
    pytest.param("diff", "secondary", {"skip": 3}, id="secondary-no-retry-after"),
    pytest.param("diff", "429", {"retry_after": 5, "skip": 1}, id="429"),
    pytest.param("diff", "primary", {"reset_in": 120, "skip": 4}, id="primary-near-reset"),
    pytest.param("graphql:detail", "rate_limited", {"reset_in": 90}, id="graphql-RATE_LIMITED"),
    pytest.param("graphql:detail", "graphql_errors", {"times": 1}, id="graphql-errors-no-data"),
    pytest.param("graphql:detail", "partial", {"times": 1}, id="partial-data-detail"),
    pytest.param("graphql:pages", "partial", {"times": 1}, id="partial-data-pages"),
    pytest.param("graphql:detail", "truncated", {"times": 2}, id="truncated-json"),
    pytest.param("files", "truncated", {"times": 1}, id="truncated-files-json"),
    pytest.param("diff", "truncated", {"times": 1, "skip": 6}, id="truncated-diff"),
]


@pytest.mark.parametrize(("target", "kind", "options"), RECOVERS)
def test_fault_is_absorbed_and_the_store_is_complete(small, store, target, kind, options):
    with FakeGitHub(small) as fake:
        fault = fake.inject(target, kind, **options)
        result = sync(store, fake, timeout=TIMEOUT)
        waits = list(fake.clock.sleeps)
    assert fault.times == 0, "the fault was never triggered"
    assert result.stopped is None and result.details.complete
    assert_complete(store, small)
    if kind in ("secondary", "429") and options.get("retry_after"):
        assert options["retry_after"] in waits
    if kind == "secondary" and "retry_after" not in options:
        assert 60.0 in waits  # GitHub: at least a minute without retry-after
    if kind in ("primary", "rate_limited"):
        assert max(waits) >= options["reset_in"]  # waited for the reset, not less


STOPS = [
    pytest.param(
        "diff", "status", {"status": 502, "times": 99, "skip": 7}, UpstreamError, id="502-outage"
    ),
    pytest.param(
        "diff", "primary", {"reset_in": 3000, "skip": 4}, RateLimitError, id="primary-far-reset"
    ),
    pytest.param(
        "graphql:detail", "secondary", {"times": 99}, RateLimitError, id="secondary-persists"
    ),
    pytest.param("graphql:detail", "partial", {"times": 99}, UpstreamError, id="partial-persists"),
    pytest.param(
        "diff", "truncated", {"times": 99, "skip": 8}, UpstreamError, id="truncated-diff-persists"
    ),
]


@pytest.mark.parametrize(("target", "kind", "options", "error"), STOPS)
def test_lasting_fault_stops_cleanly_and_the_next_run_resumes(
    small, store, target, kind, options, error
):
    with FakeGitHub(small) as fake:
        fake.inject(target, kind, **options)
        first = sync(store, fake, timeout=TIMEOUT)
        assert isinstance(first.stopped, error)
        assert not first.details.complete
        kept = stored(store)
        assert row_count(store) == len(kept)
        assert all(record == expected(small)[n] for n, record in kept.items())
        fake.clear_faults()
        fake.clock.sleep(3600)  # a later run, after any limit has reset
        before = len(fake.seen)
        second = sync(store, fake)
        refetched = {
            n for s in fake.seen[before:] if s.category != "graphql:list" for n in s.numbers
        }
    assert second.details.complete and second.stopped is None
    assert second.details.unchanged == len(kept)
    assert not refetched & set(kept), "a stored PR was fetched again"
    assert_complete(store, small)


def test_secondary_limit_backs_off_exponentially_and_is_bounded(small, store):
    with FakeGitHub(small) as fake:
        fake.inject("graphql:detail", "secondary", times=99)
        result = sync(store, fake)
        waits = fake.clock.sleeps
    assert isinstance(result.stopped, RateLimitError)
    assert waits[:4] == [60.0, 120.0, 240.0, 480.0]
    assert fake.count("graphql:detail") == 5  # bounded: four waits, then stop


def test_listing_failure_is_raised_not_returned(small, store):
    with FakeGitHub(small) as fake:
        fake.inject("graphql:list", "primary", reset_in=7200)
        with pytest.raises(RateLimitError, match="resume after"):
            sync(store, fake)


# -- resuming after a kill ------------------------------------------------------------------


def test_killed_midway_resumes_without_refetching_stored_prs(window, store):
    def die_after(count: int) -> Any:
        def progress(done: int, total: int) -> None:
            if done == count:
                raise Killed

        return progress

    with FakeGitHub(window) as fake:
        with pytest.raises(Killed):
            sync(store, fake, progress=die_after(37))
        kept = set(stored(store))
        assert len(kept) == 37 and row_count(store) == 37
        before = len(fake.seen)
        result = sync(store, fake)
        second = fake.seen[before:]
    detail_again = {n for s in second if s.category == "graphql:detail" for n in s.numbers}
    diff_again = {n for s in second if s.category in ("diff", "files") for n in s.numbers}
    assert not (detail_again | diff_again) & kept
    # PRs 38..50 had their details saved in the killed run: only their patch text is fetched
    batch_two = {r["number"] for r in window[25:50]}
    assert not detail_again & batch_two
    assert batch_two - kept <= diff_again
    assert result.details.complete and result.found == 63 and result.details.unchanged == 37
    assert_complete(store, window)


def test_search_over_the_result_cap_is_split(window, store, monkeypatch):
    monkeypatch.setattr(sync_module, "SEARCH_CAP", 30)
    with FakeGitHub(window) as fake:
        result = sync(store, fake)
        listings = fake.count("graphql:list")
    assert listings >= 4
    assert result.details.listed == 100
    assert_complete(store, window)


def test_window_bounds_are_half_open(small, store):
    inside = small[:3]
    inside[0] = dict(inside[0], merged_at=WINDOW_START.strftime("%Y-%m-%dT%H:%M:%SZ"))
    at_end = dict(small[3], merged_at=WINDOW_END.strftime("%Y-%m-%dT%H:%M:%SZ"))
    with FakeGitHub([*inside, at_end]) as fake:
        result = sync(store, fake)
    assert result.details.listed == 3
    assert set(stored(store)) == {r["number"] for r in inside}


def test_window_listing_is_checkpointed(small, store):
    state = store.checkpoints
    with FakeGitHub(small) as fake:
        fake.inject("diff", "status", status=502, times=99, skip=3)
        sync(store, fake)
        window = state.window(REPO, WINDOW_START, WINDOW_END)
        assert window is not None and not window.complete
        assert window.numbers == tuple(sorted(r["number"] for r in small))
        fake.clear_faults()
        sync(store, fake)
    window = state.window(REPO, WINDOW_START, WINDOW_END)
    assert window is not None and window.complete and window.pr_count == 20


# -- GitHub Enterprise layout, secrets -----------------------------------------------------


def test_enterprise_layout_with_derived_graphql_url(small, store):
    import httpx

    from prdigest.sources.github import Endpoints, GitHubClient, RetryPolicy, Token

    with FakeGitHub(small, enterprise=True) as fake, httpx.Client() as http:
        endpoints = Endpoints.from_urls(fake.url)  # https://HOST/api/v3 → /api/graphql
        assert endpoints.graphql_url == fake.graphql_url
        client = GitHubClient(
            http,
            Token(fake.token),
            endpoints,
            policy=RetryPolicy(),
            sleep=fake.clock.sleep,
            clock=fake.clock.time,
        )
        result = sync_window(store, client, REPO, WINDOW_START, WINDOW_END)
    assert result.details.complete
    assert_complete(store, small)


def test_token_never_reaches_logs_errors_reprs_or_the_database(small, tmp_path, caplog):
    token = "ghp_SECRET_0123456789abcdefghijklmnopqrstuv"
    db = tmp_path / "secret-check.sqlite3"
    caplog.set_level(logging.DEBUG)
    store = open_store(db)
    with FakeGitHub(small, token=token) as fake:
        fake.inject("diff", "status", status=502, times=99, skip=4)
        with client_for(fake) as client:
            result = sync_window(store, client, REPO, WINDOW_START, WINDOW_END)
            texts = [
                repr(client),
                str(client),
                repr(client.endpoints),
                repr(result),
                str(result.stopped),
                result.lines()[0],
            ]
        with client_for(fake, token="wrong-token") as bad, pytest.raises(AuthError) as refused:
            sync_window(store, bad, REPO, WINDOW_START, WINDOW_END)
        texts += [str(refused.value), repr(refused.value)]
    store.close()
    texts.append(caplog.text)
    assert caplog.records, "the sync logged nothing, so the log check proves nothing"
    assert all(token not in text for text in texts)
    assert "wrong-token" not in str(refused.value)
    for path in tmp_path.iterdir():  # the database and its WAL/SHM files
        assert token.encode() not in path.read_bytes()
