"""The GitHub source: one window of merged PRs, resumably, at about one request per PR.

Steps and their cost for a window of N merged PRs (N ≈ 100 for vLLM):

1. **List** (always): ``search`` for ``repo:R is:pr is:merged merged:A..B``, 100 per request.
   A PR whose stored checkpoint is at least as new as the listed ``updatedAt`` is done.
2. **Details**: the other PRs, ``batch_size`` per GraphQL request, then the overflowing
   connections, several per request, until every ``pageInfo.hasNextPage`` is false. The data is
   saved as a ``detail`` checkpoint, so a resumed run does not ask again.
3. **Patch text**: one REST ``.diff`` request per PR (conditional on the stored ETag; a 304
   reuses the stored patches), or ``/files`` pages when GitHub answers 406 ``too_large`` or
   the PR is over the documented ``.diff`` limits (300 files, 20,000 lines) anyway.
   Each record is yielded with its ``done`` checkpoint, which the sync loop stores in the same
   transaction as the record, PR by PR.

So a full window costs ``ceil(N/100) + ceil(N/batch_size) + overflow + N (+ /files pages)``
requests, about 1.1 per PR, and an unchanged re-run costs the listing alone.

Failures: the client retries what can be retried (:mod:`.client`). A batch that still fails
with a 5xx or timeout is tried once more in halves. GraphQL ``errors`` next to data make the PRs
they point at (or the whole batch, for errors without a path) count as not fetched: they are
asked for again one by one, and a PR that still has errors stops the run; partial data is never
stored as complete. Any :class:`~prdigest.core.errors.SourceError` after the listing ends the run
cleanly: :class:`GitHubDetails` carries it in ``stopped``, everything stored so far stays, and
the next run resumes from the checkpoints. Errors while listing (a bad token, no such
repository, a rate limit) are raised.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from prdigest.core.errors import SourceError, UpstreamError
from prdigest.core.models import Window
from prdigest.core.records import PullRequest
from prdigest.sources.base import Details, Fetched, Item, Progress, SyncReport
from prdigest.sources.github.client import DIFF_ACCEPT, GitHubClient, GraphQLResponse
from prdigest.sources.github.convert import (
    FileText,
    file_texts_from_diff,
    file_texts_from_record,
    file_texts_from_rest,
    record_from_graphql,
)
from prdigest.sources.github.diff import split_diff
from prdigest.sources.github.limits import Kind, RateLimit
from prdigest.sources.github.queries import (
    LIST_QUERY,
    Connection,
    PageRequest,
    detail_query,
    pages_query,
)
from prdigest.store.checkpoints import DETAIL, DONE, DoneMark, FetchState, GitHubCheckpoints
from prdigest.store.records import RecordRepository

log = logging.getLogger(__name__)
SEARCH_CAP = 1000  # GitHub search returns at most this many results per query
PAGES_PER_REQUEST = 20
# GitHub refuses the .diff of a PR over these sizes (406 too_large); go to /files directly
DIFF_MAX_FILES = 300
DIFF_MAX_LINES = 20_000
PR_CONNECTIONS = (
    Connection.LABELS,
    Connection.FILES,
    Connection.COMMITS,
    Connection.REVIEWS,
    Connection.THREADS,
    Connection.COMMENTS,
    Connection.ISSUES,
)
RETRYABLE_STATUSES = (None, 500, 502, 503, 504)


@dataclass(frozen=True, slots=True)
class Listed:
    number: int
    updated_at: str  # as GitHub wrote it
    merged_at: datetime


@dataclass
class GitHubDetails:
    """What a GitHub sync knows besides its records; ``stopped``: the error that ended it."""

    listed: int = 0
    unchanged: int = 0  # listed PRs that were already current in the store
    requests: int = 0
    rate_limits: tuple[RateLimit, ...] = ()
    complete: bool = False
    stopped: SourceError | None = None

    def lines(self, report: SyncReport) -> list[str]:
        limits = ", ".join(limit.describe() for limit in self.rate_limits) or "unknown"
        state = "complete" if self.complete else "incomplete"
        return [
            f"{report.repo}: {self.listed} PRs listed, {report.found} stored, "
            f"{self.unchanged} unchanged ({state}); {self.requests} requests; "
            f"rate limit left: {limits}"
        ]


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _search_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _chunks(items: Sequence[PageRequest], size: int) -> Iterator[Sequence[PageRequest]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class GitHubSource:
    """The PRs of ``repo`` merged in a window. It reads its checkpoints and the stored records'
    versions (to skip what is current), and yields each record with its ``done`` checkpoint.
    The HTTP client belongs to the caller, who closes it (``close`` does not)."""

    name: ClassVar[str] = "github"
    client: GitHubClient
    repo: str
    checkpoints: GitHubCheckpoints
    records: RecordRepository
    batch_size: int = 25
    progress: Progress | None = None
    flush_every: int = 1  # one record per transaction: a kill loses at most one PR's fetch
    yields_to_others: bool = False
    _details: GitHubDetails = field(default_factory=GitHubDetails)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.owner, self.name_of_repo = self.repo.split("/", 1)
        self.state = self.checkpoints

    def details(self) -> Details:
        self._details.requests = self.client.requests
        self._details.rate_limits = self.client.rate_limits
        return self._details

    def close(self) -> None:
        return None

    def _progress(self, done: int, total: int) -> None:
        if self.progress:
            self.progress(done, total)

    # -- 1. listing ----------------------------------------------------------------------

    def list_window(self, since: datetime, until: datetime) -> list[Listed]:
        """Every PR merged in [since, until), by number; splits windows over the search cap."""
        found: dict[int, Listed] = {}
        for item in self._search(since, until):
            if since <= item.merged_at < until:
                found[item.number] = item
        return [found[n] for n in sorted(found)]

    def _search(self, since: datetime, until: datetime) -> Iterator[Listed]:
        # search ranges are inclusive and to the second: stop one second before `until`
        last = until - timedelta(seconds=1)
        query = (
            f"repo:{self.repo} is:pr is:merged merged:{_search_time(since)}..{_search_time(last)}"
        )
        after: str | None = None
        while True:
            variables = {
                "owner": self.owner,
                "name": self.name_of_repo,
                "search": query,
                "after": after,
            }
            response = self.client.graphql(LIST_QUERY, variables)
            search = self._checked_listing(response)
            if after is None and search.get("issueCount", 0) > SEARCH_CAP and last > since:
                middle = since + (until - since) / 2
                yield from self._search(since, middle)
                yield from self._search(middle, until)
                return
            for node in search.get("nodes") or []:
                if isinstance(node, dict) and node.get("__typename") == "PullRequest":
                    yield Listed(node["number"], node["updatedAt"], parse_time(node["mergedAt"]))
            page = search.get("pageInfo") or {}
            if not page.get("hasNextPage"):
                return
            after = page.get("endCursor")

    def _checked_listing(self, response: GraphQLResponse) -> dict[str, Any]:
        if response.data.get("repository") is None:
            raise UpstreamError(
                f"repository {self.repo} not found, or the token cannot see it", status=404
            )
        if response.errors:
            raise UpstreamError(f"GitHub could not list {self.repo}: {_messages(response.errors)}")
        search = response.data.get("search")
        if not isinstance(search, dict):
            raise UpstreamError(f"GitHub answered the listing of {self.repo} without results")
        return search

    # -- the run -------------------------------------------------------------------------

    def read(self, window: Window | None) -> Iterator[Item]:
        if window is None:
            raise ValueError("the GitHub source reads a window of merge times")
        since, until = window.since, window.until
        listed = self.list_window(since, until)
        self._details.listed = len(listed)
        window_id = self.state.record_listing(
            self.repo, since, until, [(item.number, item.updated_at) for item in listed]
        )
        states = self.state.fetch_states(self.repo, (item.number for item in listed))
        stored_versions = self.records.stored_versions(self.repo)
        todo = [
            item
            for item in listed
            if not _is_current(item, states.get(item.number), stored_versions)
        ]
        self._details.unchanged = len(listed) - len(todo)
        try:
            yield from self._fetch_all(todo, states)
        except SourceError as exc:
            log.info("sync of %s stopped: %s", self.repo, exc)  # the caller reports it
            self._details.stopped = exc
            return
        # every record yielded above is stored by now: the loop stores before asking again
        self.state.mark_window_complete(window_id)
        self._details.complete = True

    def _fetch_all(self, todo: list[Listed], states: dict[int, FetchState]) -> Iterator[Fetched]:
        # PRs whose details a killed run already saved need only their patch text
        pending = [i for i in todo if _has_detail(i, states.get(i.number))]
        fresh = [i for i in todo if not _has_detail(i, states.get(i.number))]
        done, total = 0, len(todo)
        self._progress(done, total)
        for item in pending:
            detail = states[item.number].detail
            assert detail is not None  # _has_detail checked it
            yield self._finish(detail, states.get(item.number))
            done += 1
            self._progress(done, total)
        while fresh:
            batch, fresh = fresh[: self.batch_size], fresh[self.batch_size :]
            details = self._fetch_details([item.number for item in batch])
            self.state.save_details(
                self.repo, [(n, raw["updatedAt"], raw) for n, raw in details.items()]
            )
            for item in batch:
                yield self._finish(details[item.number], states.get(item.number))
                done += 1
                self._progress(done, total)

    # -- 2. details ----------------------------------------------------------------------

    def _fetch_details(
        self, numbers: list[int], *, may_split: bool = True
    ) -> dict[int, dict[str, Any]]:
        """Complete GraphQL data of these PRs; halves the batch once after repeated 5xx/timeouts."""
        try:
            return self._details_once(numbers)
        except UpstreamError as exc:
            if exc.status not in RETRYABLE_STATUSES or len(numbers) == 1 or not may_split:
                raise
            self.batch_size = max(1, len(numbers) // 2)
            log.warning(
                "a batch of %d PRs failed (%s); trying halves of %d",
                len(numbers),
                exc,
                self.batch_size,
            )
            first = self._fetch_details(numbers[: self.batch_size], may_split=False)
            return first | self._fetch_details(numbers[self.batch_size :], may_split=False)

    def _details_once(self, numbers: list[int]) -> dict[int, dict[str, Any]]:
        response = self.client.graphql(
            detail_query(numbers), {"owner": self.owner, "name": self.name_of_repo}
        )
        repository = response.data.get("repository")
        if not isinstance(repository, dict):
            raise UpstreamError(
                f"repository {self.repo} not found, or the token cannot see it", status=404
            )
        failed = _failed_aliases(response.errors, {f"pr{n}": n for n in numbers}, "repository")
        raws = {
            n: repository[f"pr{n}"]
            for n in numbers
            if n not in failed and isinstance(repository.get(f"pr{n}"), dict)
        }
        failed |= {n for n in numbers if n not in raws}
        failed |= self._complete_pages(raws)
        for number in sorted(failed):
            raws.pop(number, None)
            raws[number] = self._detail_alone(number, _messages(response.errors))
        return {n: raws[n] for n in numbers}

    def _detail_alone(self, number: int, earlier: str) -> dict[str, Any]:
        """One PR that came back with errors in a batch: ask once more on its own."""
        log.warning(
            "%s#%d came back incomplete (%s); asking again alone",
            self.repo,
            number,
            earlier or "no data",
        )
        response = self.client.graphql(
            detail_query([number]), {"owner": self.owner, "name": self.name_of_repo}
        )
        raw = (response.data.get("repository") or {}).get(f"pr{number}")
        if response.errors or not isinstance(raw, dict):
            reason = _messages(response.errors) or "no data"
            raise UpstreamError(
                f"GitHub did not return complete data for {self.repo}#{number}: {reason}"
            )
        if self._complete_pages({number: raw}):
            raise UpstreamError(f"GitHub did not return all pages of {self.repo}#{number}")
        return raw

    def _complete_pages(self, raws: dict[int, dict[str, Any]]) -> set[int]:
        """Follow every overflowing connection to its end; returns PRs whose pages had errors."""
        failed: set[int] = set()
        while True:
            requests = [r for n, raw in raws.items() if n not in failed for r in open_pages(raw)]
            if not requests:
                break
            for chunk in _chunks(requests, PAGES_PER_REQUEST):
                failed |= self._fetch_pages(chunk, raws)
        for number, raw in raws.items():
            if number not in failed:
                _warn_short(self.repo, number, raw)
        return failed

    def _fetch_pages(
        self, chunk: Sequence[PageRequest], raws: dict[int, dict[str, Any]]
    ) -> set[int]:
        document, variables = pages_query(chunk)
        response = self.client.graphql(document, variables)
        aliases = {f"m{i}": request.number for i, request in enumerate(chunk)}
        failed = _failed_aliases(response.errors, aliases, None)
        for index, request in enumerate(chunk):
            page = _page_of(response.data.get(f"m{index}"), request.connection)
            if request.number in failed or page is None:
                failed.add(request.number)
                continue
            apply_page(raws[request.number], request, page)
        return failed

    # -- 3. patch text and storing -------------------------------------------------------

    def _finish(self, raw: dict[str, Any], state: FetchState | None) -> Fetched:
        number = int(raw["number"])
        if _diff_too_large(raw):
            texts, mode, etag = self._files_pages(number), "files", None
        else:
            texts, mode, etag = self._file_texts(number, state)
        record = record_from_graphql(self.repo, raw, texts)
        _warn_missing_text(record, texts)
        mark = DoneMark(self.repo, number, str(raw["updatedAt"]), mode, etag)
        return Fetched(record, mark)

    def _file_texts(
        self, number: int, state: FetchState | None
    ) -> tuple[dict[str, FileText], str, str | None]:
        """(path → text, how it was fetched, ETag) of one PR's files."""
        etag = state.diff_etag if state is not None and state.diff_mode == "diff" else None
        stored = self.records.find(self.repo, number) if etag else None
        etag = etag if stored is not None else None  # a 304 is only useful with the old patches
        path = f"/repos/{self.repo}/pulls/{number}"
        response = self.client.get(path, accept=DIFF_ACCEPT, etag=etag, expect_json=False)
        if response.kind is Kind.NOT_MODIFIED:
            if stored is None:
                raise UpstreamError(
                    f"{self.repo}#{number}: GitHub answered 304 to a request "
                    "that was not conditional"
                )
            return file_texts_from_record(stored), "diff", etag
        if response.kind is Kind.TOO_LARGE:
            return self._files_pages(number), "files", None
        try:
            return file_texts_from_diff(split_diff(response.text)), "diff", response.etag
        except UpstreamError as exc:
            log.warning("%s#%d: %s; asking for the diff again", self.repo, number, exc)
        response = self.client.get(path, accept=DIFF_ACCEPT, expect_json=False)
        try:
            return file_texts_from_diff(split_diff(response.text)), "diff", response.etag
        except UpstreamError as exc:
            raise UpstreamError(f"{self.repo}#{number}: {exc}") from exc

    def _files_pages(self, number: int) -> dict[str, FileText]:
        """``/files`` pages (100 files each, up to GitHub's 3,000), following ``link: next``."""
        texts: dict[str, FileText] = {}
        url: str | None = f"/repos/{self.repo}/pulls/{number}/files?per_page=100"
        while url is not None:
            response = self.client.get(url)
            items = response.json()
            if not isinstance(items, list):
                raise UpstreamError(f"{self.repo}#{number}: /files did not answer a list")
            texts.update(file_texts_from_rest(items))
            url = response.next_url
        return texts


# -- helpers (pure) --------------------------------------------------------------------------


def _diff_too_large(raw: dict[str, Any]) -> bool:
    """Whether GitHub would refuse this PR's .diff: too many files or changed lines."""
    lines = int(raw.get("additions") or 0) + int(raw.get("deletions") or 0)
    return int(raw.get("changedFiles") or 0) > DIFF_MAX_FILES or lines > DIFF_MAX_LINES


def _is_current(item: Listed, state: FetchState | None, stored: dict[int, str | None]) -> bool:
    if state is None or state.stage != DONE or item.number not in stored:
        return False
    return parse_time(state.updated_at) >= parse_time(item.updated_at)


def _has_detail(item: Listed, state: FetchState | None) -> bool:
    if state is None or state.stage != DETAIL or state.detail is None:
        return False
    return parse_time(state.updated_at) >= parse_time(item.updated_at)


def _messages(errors: Sequence[dict[str, Any]]) -> str:
    return "; ".join(str(e.get("message", "error")) for e in errors[:3])


def _failed_aliases(
    errors: Sequence[dict[str, Any]], aliases: dict[str, int], parent: str | None
) -> set[int]:
    """PR numbers that errors point at; an error without such a path fails them all."""
    failed: set[int] = set()
    for error in errors:
        path = error.get("path") or []
        offset = 1 if parent is not None and path[:1] == [parent] else 0
        alias = path[offset] if len(path) > offset else None
        if alias in aliases:
            failed.add(aliases[alias])
        else:
            return set(aliases.values())
    return failed


def _connection(raw: dict[str, Any], connection: Connection) -> dict[str, Any] | None:
    if connection is Connection.CONTEXTS:
        rollup = raw.get("statusCheckRollup")
        value = rollup.get("contexts") if isinstance(rollup, dict) else None
    else:
        value = raw.get(connection.value)
    return value if isinstance(value, dict) else None


def next_page(connection: dict[str, Any] | None) -> tuple[bool, str | None]:
    """(has more, cursor to continue after) from a GraphQL connection's ``pageInfo``."""
    page = (connection or {}).get("pageInfo") or {}
    return bool(page.get("hasNextPage")), page.get("endCursor")


def open_pages(raw: dict[str, Any]) -> list[PageRequest]:
    """The next page of every connection of one PR that has more."""
    number, node_id = int(raw["number"]), str(raw["id"])
    requests = []
    for connection in (*PR_CONNECTIONS, Connection.CONTEXTS):
        more, cursor = next_page(_connection(raw, connection))
        if more:
            requests.append(PageRequest(number, node_id, connection, cursor))
    for thread in (_connection(raw, Connection.THREADS) or {}).get("nodes") or []:
        more, cursor = next_page(thread.get("comments"))
        if more:
            requests.append(
                PageRequest(number, str(thread["id"]), Connection.THREAD_COMMENTS, cursor)
            )
    return requests


def _page_of(node: Any, connection: Connection) -> dict[str, Any] | None:
    """The connection page inside an answer to :func:`pages_query`."""
    if not isinstance(node, dict):
        return None
    if connection is Connection.CONTEXTS:
        node = node.get("statusCheckRollup") or {}
        key = "contexts"
    elif connection is Connection.THREAD_COMMENTS:
        key = "comments"
    else:
        key = connection.value
    page = node.get(key) if isinstance(node, dict) else None
    return page if isinstance(page, dict) else None


def apply_page(raw: dict[str, Any], request: PageRequest, page: dict[str, Any]) -> None:
    """Append a fetched page to the PR's data, in place."""
    if request.connection is Connection.THREAD_COMMENTS:
        threads = (_connection(raw, Connection.THREADS) or {}).get("nodes") or []
        target = next((t.get("comments") for t in threads if t.get("id") == request.node_id), None)
    else:
        target = _connection(raw, request.connection)
    if not isinstance(target, dict):
        raise UpstreamError(f"page for a connection that is not there: {request.connection}")
    target["nodes"] = [*(target.get("nodes") or []), *(page.get("nodes") or [])]
    target["pageInfo"] = page.get("pageInfo") or {}
    target["totalCount"] = page.get("totalCount", target.get("totalCount"))


def _warn_short(repo: str, number: int, raw: dict[str, Any]) -> None:
    """Log connections with fewer nodes than ``totalCount`` after the last page.

    GitHub counts items the token may not see (an issue in a private repository); pagination
    has ended, so the rest cannot be fetched; the record keeps what is visible.
    """
    parts = [(c.value, _connection(raw, c)) for c in (*PR_CONNECTIONS, Connection.CONTEXTS)]
    for name, conn in parts:
        if conn is not None and len(conn.get("nodes") or []) < int(conn.get("totalCount") or 0):
            log.warning(
                "%s#%d: GitHub counts %s %s but returned %d",
                repo,
                number,
                conn.get("totalCount"),
                name,
                len(conn.get("nodes") or []),
            )


def _warn_missing_text(record: PullRequest, texts: dict[str, FileText]) -> None:
    missing = [f.path for f in record.files or () if f.path not in texts]
    if missing:
        log.warning(
            "%s: no diff text for %d file(s), e.g. %s; their patch stays unknown",
            record.ref,
            len(missing),
            missing[0],
        )
