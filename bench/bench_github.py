"""Requests per PR for a 100-PR window: prdigest's GitHub source vs a naive REST-per-PR client.

Both run against the fake GitHub of the test suite (``tests/fakegithub``: real HTTP on loopback,
real pagination) over the same 100 PRs, and the server counts what each sends. The naive client
is what one writes with the REST API alone, ``per_page=100`` everywhere and following ``link``
headers: scan ``/pulls?state=closed`` by update time for the window, then per PR the PR object,
``/files``, ``/reviews``, review ``/comments``, issue ``/comments``, ``/commits``, the head
commit's ``/check-runs`` and ``/status``, and the issue ``/timeline`` (for linked issues), and it
still cannot tell whether a review thread is resolved.

Run: ``python bench/bench_github.py`` (needs the ``test`` extra for graphql-core).
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from prdigest.core.models import Window  # noqa: E402
from prdigest.core.records import parse_record  # noqa: E402
from prdigest.sources.base import SyncReport, sync  # noqa: E402
from prdigest.sources.github import GitHubClient, GitHubSource  # noqa: E402
from prdigest.store import Store, open_store  # noqa: E402

from fakegithub import (  # noqa: E402
    REPO,
    WINDOW_END,
    WINDOW_START,
    FakeGitHub,
    client_for,
    github_schema,
    window_records,
)

PER_PR = ("", "/files", "/reviews", "/comments", "/commits")


def naive_rest(fake: FakeGitHub) -> int:
    """Collect the same window with REST calls only; returns the number of requests sent."""
    headers = {"Authorization": f"Bearer {fake.token}", "Accept": "application/vnd.github+json"}
    sent = 0
    with httpx.Client(headers=headers) as http:

        def pages(url: str) -> list[dict]:
            nonlocal sent
            items: list[dict] = []
            next_url: str | None = url
            while next_url:
                response = http.get(next_url)
                sent += 1
                response.raise_for_status()
                body = response.json()
                items += body if isinstance(body, list) else [body]
                next_url = response.links.get("next", {}).get("url")
            return items

        base = f"{fake.url}/repos/{REPO}"
        merged = []
        for pull in pages(f"{base}/pulls?state=closed&sort=updated&direction=desc&per_page=100"):
            updated = datetime.fromisoformat(pull["updated_at"].replace("Z", "+00:00"))
            if updated < WINDOW_START:
                break  # ordered by update time: nothing older can have been merged later
            when = pull.get("merged_at")
            if (
                when
                and WINDOW_START <= datetime.fromisoformat(when.replace("Z", "+00:00")) < WINDOW_END
            ):
                merged.append(pull)
        for pull in merged:
            number, sha = pull["number"], pull["head"]["sha"]
            for tail in PER_PR:
                pages(f"{base}/pulls/{number}{tail}" + ("?per_page=100" if tail else ""))
            pages(f"{base}/issues/{number}/comments?per_page=100")
            pages(f"{base}/issues/{number}/timeline?per_page=100")
            pages(f"{base}/commits/{sha}/check-runs?per_page=100")
            pages(f"{base}/commits/{sha}/status?per_page=100")
    return sent


def sync_window(
    store: Store, client: GitHubClient, repo: str, since: datetime, until: datetime
) -> SyncReport:
    source = GitHubSource(client, repo, store.checkpoints, store.records)
    return sync(source, store.records, Window(since=since, until=until, tz="UTC", label="w"))


def main() -> int:
    records = window_records(100)
    github_schema()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.sqlite3")
        with FakeGitHub(records) as fake, client_for(fake) as client:
            result = sync_window(store, client, REPO, WINDOW_START, WINDOW_END)
            requests = result.details.requests  # type: ignore[attr-defined]
            ours = Counter(seen.category for seen in fake.seen)
            points = fake.budgets["graphql"].used
            rerun = sync_window(store, client, REPO, WINDOW_START, WINDOW_END)
            again = rerun.details.requests - requests  # type: ignore[attr-defined]
        exact = all(
            store.records.get(REPO, r["number"]).to_json_dict() == parse_record(r).to_json_dict()
            for r in records
        )
        store.close()
    with FakeGitHub(records) as fake:
        naive = naive_rest(fake)
        naive_calls = fake.count()
    assert naive == naive_calls
    count = len(records)
    print(f"GitHub source, {count}-PR window through the fake server")
    print(
        f"  prdigest   : {requests:5d} requests = {requests / count:.2f} per PR "
        f"({', '.join(f'{k} {v}' for k, v in sorted(ours.items()))}); "
        f"{points} GraphQL points"
    )
    print(f"  naive REST : {naive:5d} requests = {naive / count:.2f} per PR")
    print(f"  ratio      : {naive / requests:.1f}x fewer requests")
    print(f"  re-run with nothing changed: {again} request(s)")
    print(f"  records equal to the fixtures: {'yes' if exact else 'NO'}")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
