"""The GitHub client against the fake server: endpoints, retries, limits, errors, secrets."""

from __future__ import annotations

import pickle

import httpx
import pytest

from prdigest.core.errors import AuthError, ConfigError, RateLimitError, UpstreamError
from prdigest.sources.github import Endpoints, GitHubClient, Token
from prdigest.sources.github.client import DIFF_ACCEPT
from prdigest.sources.github.limits import Kind
from prdigest.sources.github.queries import LIST_QUERY

from fakegithub import FakeGitHub, client_for, window_records

RECORDS = window_records(3)
PR = RECORDS[0]["number"]
DIFF = f"/repos/{RECORDS[0]['repo']}/pulls/{PR}"
LIST_VARS = {
    "owner": "vllm-project",
    "name": "vllm",
    "after": None,
    "search": "repo:vllm-project/vllm is:pr is:merged merged:2026-06-10..2026-06-10",
}


@pytest.mark.parametrize(
    ("api_url", "graphql_url", "expected"),
    [
        (None, None, ("https://api.github.com", "https://api.github.com/graphql")),
        (
            "https://ghe.example.com/api/v3/",
            None,
            ("https://ghe.example.com/api/v3", "https://ghe.example.com/api/graphql"),
        ),
        (
            "https://api.acme.ghe.com",
            None,
            ("https://api.acme.ghe.com", "https://api.acme.ghe.com/graphql"),
        ),
        (
            "https://ghe.example.com/api/v3",
            "https://gql.example.com/graphql",
            ("https://ghe.example.com/api/v3", "https://gql.example.com/graphql"),
        ),
    ],
)
def test_endpoints_follow_github_and_enterprise_layouts(api_url, graphql_url, expected):
    endpoints = Endpoints.from_urls(api_url, graphql_url)
    assert (endpoints.api_url, endpoints.graphql_url) == expected


def test_a_bad_api_url_is_a_config_error():
    with pytest.raises(ConfigError, match="--api-url"):
        Endpoints.from_urls("ghe.example.com/api/v3")


def test_token_hides_itself():
    token = Token("ghp_abcdef123456")
    assert "ghp_abcdef123456" not in repr(token) + str(token) + f"{token}"
    with pytest.raises(TypeError):
        pickle.dumps(token)
    with pytest.raises(AuthError):
        Token("   ")


def test_client_repr_has_no_token():
    with httpx.Client() as http:
        client = GitHubClient(http, Token("ghp_abcdef123456"))
        assert "ghp_abcdef123456" not in repr(client)


def test_diff_is_text_with_an_etag_and_a_304_when_unchanged():
    with FakeGitHub(RECORDS) as fake, client_for(fake) as client:
        first = client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        again = client.get(DIFF, accept=DIFF_ACCEPT, etag=first.etag, expect_json=False)
        core = client.stats.limits["core"].remaining
    assert first.kind is Kind.OK and first.text.startswith("diff --git ")
    assert again.kind is Kind.NOT_MODIFIED and again.text == ""
    assert core == 4999  # the 304 was free
    assert fake.seen[1].if_none_match == first.etag


def test_transient_failures_are_retried_a_bounded_number_of_times():
    with FakeGitHub(RECORDS) as fake, client_for(fake, attempts=4) as client:
        fake.inject("diff", "status", status=502, times=99)
        with pytest.raises(UpstreamError, match="4 times"):
            client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        assert fake.count("diff") == 4
        assert fake.clock.sleeps == [1.0, 2.0, 4.0]  # exponential backoff


@pytest.mark.slow
def test_a_timeout_is_counted_and_retried():
    with FakeGitHub(RECORDS) as fake, client_for(fake, timeout=15.0) as client:
        fake.inject("diff", "slow", delay=600.0)  # held back until the client gives up
        response = client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        assert response.kind is Kind.OK
        assert client.requests == 2 and fake.clock.sleeps == [1.0]


def test_primary_limit_far_from_reset_stops_with_resume_time():
    with FakeGitHub(RECORDS) as fake, client_for(fake, max_wait=600) as client:
        fake.exhaust("core", reset_in=3600)
        with pytest.raises(RateLimitError, match=r"resume after \d{4}-\d\d-\d\d \d\d:\d\d"):
            client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        assert fake.clock.sleeps == []


def test_spent_budget_is_waited_out_before_the_next_request():
    with FakeGitHub(RECORDS, core_limit=2) as fake, client_for(fake, max_wait=4000) as client:
        client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)  # remaining is now 0
        client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        assert [s.status for s in fake.seen] == [200, 200, 200]  # no request hit the wall
        assert len(fake.clock.sleeps) == 1 and fake.clock.sleeps[0] > 3000


def test_reserve_keeps_a_margin_of_the_budget():
    with FakeGitHub(RECORDS, core_limit=5) as fake, client_for(fake, reserve=3) as client:
        client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)  # 3 left: at the reserve
        with pytest.raises(RateLimitError):
            client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        assert fake.count("diff") == 2


@pytest.mark.parametrize(
    ("status", "error", "text"),
    [
        (401, AuthError, "rejected the token"),
        (403, AuthError, "refused access"),
        (404, UpstreamError, "404"),
        (422, UpstreamError, "HTTP 422"),
    ],
)
def test_client_errors_are_not_retried(status, error, text):
    with FakeGitHub(RECORDS) as fake, client_for(fake) as client:
        fake.inject("diff", "status", status=status, message="Validation Failed")
        with pytest.raises(error, match=text):
            client.get(DIFF, accept=DIFF_ACCEPT, expect_json=False)
        assert fake.count("diff") == 1 and fake.clock.sleeps == []


def test_wrong_token_is_an_auth_error_on_graphql():
    with (
        FakeGitHub(RECORDS) as fake,
        client_for(fake, token="nope") as client,
        pytest.raises(AuthError, match="401"),
    ):
        client.graphql(LIST_QUERY, LIST_VARS)


def test_graphql_forbidden_without_data_is_an_auth_error():
    with FakeGitHub(RECORDS) as fake, client_for(fake) as client:
        fake.inject("graphql", "graphql_errors", message="Resource not accessible")
        with pytest.raises(UpstreamError, match="Resource not accessible"):
            client.graphql(LIST_QUERY, LIST_VARS)


def test_graphql_rate_limited_waits_for_reset_then_answers():
    with FakeGitHub(RECORDS) as fake, client_for(fake) as client:
        fake.inject("graphql", "rate_limited", reset_in=200)
        response = client.graphql(LIST_QUERY, LIST_VARS)
        assert response.data["search"]["issueCount"] == 3
        assert fake.clock.sleeps == [201.0]


def test_links_off_the_api_host_are_not_followed_with_the_token():
    with FakeGitHub(RECORDS) as fake, client_for(fake) as client:
        with pytest.raises(UpstreamError, match="off the API host"):
            client.get("https://evil.example.com/repos/x/y/pulls/1/files?page=2")
        assert fake.seen == []


def test_files_pages_follow_link_headers():
    huge = window_records(10)[7]  # the 320-file PR
    with FakeGitHub([huge]) as fake, client_for(fake) as client:
        url: str | None = f"/repos/{huge['repo']}/pulls/{huge['number']}/files?per_page=100"
        names = []
        while url:
            page = client.get(url)
            names += [item["filename"] for item in page.json()]
            url = page.next_url
    assert names == [f["path"] for f in huge["files"]]
    assert fake.count("files") == 4
