"""The REST parsers and the client's failure handling, run over real recorded GitHub answers.

The recordings are PyGithub's (``tests/fixtures/github/replay``): real api.github.com
responses, 2012-2025. They also pin the fake server: what it serves must have the shape the
real API has.
"""

from __future__ import annotations

import httpx
import pytest

from prdigest.core.errors import RateLimitError
from prdigest.sources.github import Endpoints, GitHubClient, RetryPolicy, Token
from prdigest.sources.github.convert import file_texts_from_diff, file_texts_from_rest
from prdigest.sources.github.diff import count_hunk_lines, split_diff
from prdigest.sources.github.limits import Kind, classify, rate_limit_from_headers
from prdigest.sources.github.source import next_page

from fakegithub import window_records
from fakegithub.replay import ReplayTransport, exchanges, json_body
from fakegithub.server import REST_PRODUCERS, build_diff, rest_files


def replay_client(name: str, **policy: float) -> tuple[GitHubClient, ReplayTransport, list[float]]:
    transport = ReplayTransport(exchanges(name))
    sleeps: list[float] = []
    recorded = exchanges(name)[0]
    clock_now = float(recorded.header("x-ratelimit-reset") or 1_500_000_000) - 600
    client = GitHubClient(
        httpx.Client(transport=transport),
        Token("replay-token"),
        Endpoints.from_urls("https://api.github.com"),
        policy=RetryPolicy(**policy),  # type: ignore[arg-type]
        sleep=sleeps.append,
        clock=lambda: clock_now,
    )
    return client, transport, sleeps


# -- /pulls/N/files -------------------------------------------------------------------------

FILES = exchanges("PullRequest.testGetFiles.txt")[0]


def test_files_conversion_over_a_real_files_answer():
    items = json_body(FILES)
    texts = file_texts_from_rest(items)
    assert len(texts) == len(items) == 45
    for item in items:
        text = texts[item["filename"]]
        assert text.patch == item["patch"] and not text.binary and text.previous_path is None
        counts = count_hunk_lines(item["patch"].split("\n"), where=item["filename"])
        assert counts == (item["additions"], item["deletions"])


def test_a_diff_of_the_real_patches_splits_back_into_them():
    items = json_body(FILES)
    record = {
        "files": [
            {
                "path": i["filename"],
                "status": i["status"],
                "patch": i["patch"],
                "additions": i["additions"],
                "deletions": i["deletions"],
            }
            for i in items
        ]
    }
    texts = file_texts_from_diff(split_diff(build_diff(record)))
    assert texts == file_texts_from_rest(items)


def test_binary_and_renamed_entries_without_patch():
    texts = file_texts_from_rest(
        [
            {"filename": "logo.png", "status": "added", "additions": 0, "deletions": 0},
            {
                "filename": "b.py",
                "previous_filename": "a.py",
                "status": "renamed",
                "additions": 0,
                "deletions": 0,
            },
            {"filename": "big.txt", "status": "modified", "additions": 9000, "deletions": 2},
        ]
    )
    assert texts["logo.png"].binary and texts["logo.png"].patch is None
    assert not texts["b.py"].binary and texts["b.py"].previous_path == "a.py"
    assert not texts["big.txt"].binary and texts["big.txt"].patch is None


# -- failures and limits --------------------------------------------------------------------


def test_three_recorded_502s_then_the_answer():
    client, transport, sleeps = replay_client("Retry.testReturnsRepoAfter3Retries.txt")
    response = client.get("/repos/PyGithub/PyGithub")
    assert response.kind is Kind.OK and response.json()["full_name"] == "PyGithub/PyGithub"
    assert len(transport.requests) == 4 and sleeps == [1.0, 2.0, 4.0]


def test_recorded_primary_limit_is_classified_and_stops_the_client():
    _, limited = exchanges("SpecificExceptions.testRateLimitExceeded.txt")
    verdict = classify(limited.status, dict(limited.headers), limited.body)
    assert verdict.kind is Kind.PRIMARY_LIMIT
    client, transport, _ = replay_client("SpecificExceptions.testRateLimitExceeded.txt")
    assert client.get("/users/jacquev6").kind is Kind.OK  # answered, with remaining 0
    with pytest.raises(RateLimitError, match="did not say when"):  # no reset header recorded
        client.get("/users/jacquev6")
    assert len(transport.requests) == 1  # the spent budget was not hammered


def test_recorded_secondary_limit_honours_retry_after_and_gives_up():
    _, limited = exchanges("SpecificExceptions.testAuthenticatedRateLimitExceeded.txt")
    verdict = classify(limited.status, dict(limited.headers), limited.body)
    assert verdict.kind is Kind.SECONDARY_LIMIT and verdict.retry_after == 60
    client, transport, sleeps = replay_client(
        "SpecificExceptions.testAuthenticatedRateLimitExceeded.txt", secondary_attempts=3
    )
    client.get("/search/code?q=jacquev6")
    with pytest.raises(RateLimitError):
        client.get("/search/code?q=jacquev6")  # the recording answers 403 from here on
    assert sleeps == [60.0, 60.0, 60.0] and len(transport.requests) == 5


def test_recorded_304_for_a_conditional_request():
    (recorded,) = exchanges("ConditionalRequestUpdate.testDidNotUpdate.txt")
    client, transport, _ = replay_client("ConditionalRequestUpdate.testDidNotUpdate.txt")
    response = client.get("/repos/akfish/PyGithub", etag=recorded.request_headers["If-None-Match"])
    assert response.kind is Kind.NOT_MODIFIED and response.etag == recorded.header("etag")
    assert (
        transport.requests[0].headers["if-none-match"] == recorded.request_headers["If-None-Match"]
    )
    limit = client.stats.limits["core"]
    assert limit.remaining == 4988 and limit.limit == 5000


def test_recorded_link_header_gives_the_next_page():
    first = exchanges("CheckRun.testGetCheckRunsForRef.txt")[0]
    client, _, _ = replay_client("CheckRun.testGetCheckRunsForRef.txt")
    response = client.get(first.path)
    assert response.next_url == (
        "https://api.github.com/repositories/3544490/commits/"
        "10a7135a04f71e6101f8b013aded8a662d08fd1f/check-runs?per_page=1&page=2"
    )


def test_rate_limit_headers_of_every_recording_parse():
    for name in (
        "Retry.testReturnsRepoAfter3Retries.txt",
        "PullRequest.setUp.txt",
        "PaginatedList.testGraphQlPagination.txt",
    ):
        for exchange in exchanges(name):
            limit = rate_limit_from_headers(dict(exchange.headers), "core")
            assert limit is not None and limit.remaining == int(
                exchange.header("x-ratelimit-remaining") or -1
            )


def test_recorded_graphql_pagination_answers():
    client, transport, _ = replay_client("PaginatedList.testGraphQlPagination.txt")
    client.get("/repos/PyGithub/PyGithub")
    recorded = [
        json_body(e)["data"]["repository"]["discussions"]["pageInfo"]
        for e in exchanges("PaginatedList.testGraphQlPagination.txt")[1:]
    ]
    pages = []
    for _ in recorded:
        response = client.graphql("query { placeholder }")
        pages.append(next_page(response.data["repository"]["discussions"]))
    assert pages == [(p["hasNextPage"], p["endCursor"]) for p in recorded]
    assert (False, "Y3Vyc29yOnYyOpK5MjAyMC0xMi0wOVQwNjo0NDozMiswMTowMM2_Dw==") in pages
    assert client.stats.limits["graphql"].remaining == 4974
    assert all(r.url.path == "/graphql" for r in transport.requests[1:])


# -- the fake's REST answers have GitHub's shape ---------------------------------------------

SHAPES = [
    ("PullRequest.setUp.txt", ("pulls", ""), None),
    ("PullRequestReview.testAttributes.txt", ("pulls", "/reviews"), 0),
    ("PullRequest.testGetReviewComments.txt", ("pulls", "/comments"), 0),
    ("PullRequest.testGetIssueComments.txt", ("issues", "/comments"), 0),
    ("PullRequest.testGetCommits.txt", ("pulls", "/commits"), 0),
    ("PullRequest.testGetIssueTimeline.txt", ("issues", "/timeline"), 0),
    ("CheckRun.testGetCheckRunsForRef.txt", ("commits", "/check-runs"), 1),
    ("CommitCombinedStatus.setUp.txt", ("commits", "/status"), 0),
]


def _keys(value: object) -> set[str]:
    """Dotted key paths of JSON objects (lists are looked into)."""
    out: set[str] = set()
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            for key, inner in item.items():
                out.add(key)
                out |= {f"{key}.{sub}" for sub in _keys(inner)}
    return out


# Keys the recordings cannot show: user objects gained ``type`` after the 2012 recordings (the
# later ones carry it, see below), and every recorded PR has an empty ``labels`` list.
NOT_RECORDED = {"user.type", "author.type", "labels.name"}


def test_later_recordings_have_user_type():
    pulls = [json_body(e) for e in exchanges("PullRequest.setUp.txt") if "/pulls/" in e.path]
    assert all("type" in pull["user"] for pull in pulls)


@pytest.mark.parametrize(("name", "route", "index"), SHAPES)
def test_fake_rest_answers_use_only_real_keys(name, route, index):
    recorded = exchanges(name)
    chosen = (
        [recorded[index]] if index is not None else [e for e in recorded if "/pulls/" in e.path]
    )
    real = set().union(*(_keys(json_body(e)) for e in chosen)) | NOT_RECORDED
    record = window_records(10)[3]
    fake = _keys(REST_PRODUCERS[route](record, record["repo"]))
    assert fake <= real, fake - real


def test_fake_files_items_use_only_documented_keys():
    real = _keys(json_body(FILES)) | {"contents_url", "previous_filename"}  # newer than 2012
    assert _keys(rest_files(window_records(10)[3])) <= real
