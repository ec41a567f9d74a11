"""Classifying GitHub answers (pure): rate limits, permissions, too-large diffs."""

from __future__ import annotations

import pytest

from prdigest.sources.github.limits import (
    Kind,
    classify,
    classify_graphql_errors,
    rate_limit_from_headers,
)

SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes."


@pytest.mark.parametrize(
    ("status", "headers", "body", "kind"),
    [
        (200, {}, "{}", Kind.OK),
        (304, {}, "", Kind.NOT_MODIFIED),
        (
            403,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "99"},
            '{"message": "API rate limit exceeded for user ID 1."}',
            Kind.PRIMARY_LIMIT,
        ),
        (
            429,
            {"x-ratelimit-remaining": "0"},
            '{"message": "API rate limit exceeded"}',
            Kind.PRIMARY_LIMIT,
        ),
        (
            403,
            {"x-ratelimit-remaining": "12"},
            f'{{"message": "{SECONDARY}"}}',
            Kind.SECONDARY_LIMIT,
        ),
        (403, {"Retry-After": "30"}, '{"message": "slow down"}', Kind.SECONDARY_LIMIT),
        (429, {}, "", Kind.SECONDARY_LIMIT),
        (
            403,
            {"x-ratelimit-remaining": "4000"},
            '{"message": "Resource not accessible by personal access token"}',
            Kind.FORBIDDEN,
        ),
        (401, {}, '{"message": "Bad credentials"}', Kind.BAD_CREDENTIALS),
        (404, {}, '{"message": "Not Found"}', Kind.NOT_FOUND),
        (406, {}, '{"message": "diff too big", "errors": [{"code": "too_large"}]}', Kind.TOO_LARGE),
        (406, {}, '{"message": "Not Acceptable"}', Kind.CLIENT_ERROR),
        (502, {}, "<html>Bad gateway</html>", Kind.TRANSIENT),
        (422, {}, '{"message": "Validation Failed"}', Kind.CLIENT_ERROR),
    ],
)
def test_classify(status, headers, body, kind):
    assert classify(status, headers, body).kind is kind


def test_secondary_keeps_retry_after_and_primary_keeps_reset():
    assert classify(403, {"retry-after": "42"}, "{}").retry_after == 42
    assert (
        classify(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000000"}, "{}").reset
        == 1700000000
    )


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"type": "RATE_LIMITED", "message": "API rate limit exceeded"}, Kind.PRIMARY_LIMIT),
        (
            {
                "type": "RATE_LIMIT",
                "code": "graphql_rate_limit",
                "message": "API rate limit already exceeded for user ID 1.",
            },
            Kind.PRIMARY_LIMIT,
        ),
        ({"message": SECONDARY}, Kind.SECONDARY_LIMIT),
        ({"type": "NOT_FOUND", "message": "Could not resolve to a Repository"}, None),
        ({"message": "Something went wrong while executing your query."}, None),
    ],
)
def test_graphql_errors_with_http_200(error, kind):
    verdict = classify_graphql_errors([error], {"x-ratelimit-reset": "5"})
    assert (verdict.kind if verdict else None) is kind


def test_rate_limit_headers():
    limit = rate_limit_from_headers(
        {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            "X-RateLimit-Reset": "1700000000",
            "X-RateLimit-Resource": "graphql",
        },
        "core",
    )
    assert limit is not None and limit.describe() == "graphql 4999/5000"
    assert limit.reset_text() == "2023-11-14 22:13:20 UTC"
    assert rate_limit_from_headers({}, "core") is None
