"""The PR record, interchange format ``prdigest.pr/v1`` (DESIGN §3).

Every source (GitHub, git, JSONL) yields a :class:`PullRequest`; the store keeps it as JSON.
A field a source cannot provide is ``None`` (unknown), never faked; an empty list means "known
to be empty". That difference drives the coverage level: a git-sourced record has
``reviews=None`` and the digest must not pretend to know its reviews.

Assumptions, where DESIGN §3 is silent:

* Required: ``schema``, ``repo``, ``number``, ``title``, ``merged_at``. A digest is about merged
  PRs, so a record without a merge time cannot be placed in a window.
* Unknown keys are rejected (``extra="forbid"``): a typo in a hand-written record must not pass
  as an absent field.
* ``author_type`` accepts the GitHub actor types that can author comments.

Bounds, checked on the plain JSON data before validation (:func:`check_bounds`), so nothing that
a database or an encoder would choke on reaches the store:

* integers fit in 64 bits (``-2**63 .. 2**63-1``);
* containers nest at most :data:`MAX_DEPTH` levels (a record needs 4);
* a string is at most :data:`MAX_STRING` characters (a patch is the longest field);
* a lone UTF-16 surrogate (``"\\ud800"`` in JSON) is replaced by U+FFFD: it is not text and
  cannot be written as UTF-8, and replacing it keeps the rest of the record.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from prdigest.core.errors import RecordError
from prdigest.core.names import RULE, is_repo_name, is_repo_path

SCHEMA_ID = "prdigest.pr/v1"
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
MAX_DEPTH = 32
MAX_STRING = 16 * 1024 * 1024
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# A GitHub login; git-sourced authors may instead be display names ("Li Wang").
LOGIN_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:\[bot\])?")


def mention(name: str) -> str:
    """``@login`` for a GitHub login, the name unchanged otherwise."""
    return f"@{name}" if LOGIN_PATTERN.fullmatch(name) else name


FileStatus = Literal["added", "modified", "removed", "renamed", "copied"]
ActorType = Literal["User", "Bot", "Organization", "Mannequin", "EnterpriseUserAccount"]
ReviewState = Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]
IssueState = Literal["OPEN", "CLOSED"]
CheckConclusion = Literal[
    "SUCCESS",
    "FAILURE",
    "SKIPPED",
    "NEUTRAL",
    "CANCELLED",
    "TIMED_OUT",
    "ACTION_REQUIRED",
    "STALE",
    "STARTUP_FAILURE",
    "ERROR",
    "PENDING",
    "EXPECTED",
]
Source = Literal["github", "git", "jsonl"]
NonNegative = Annotated[int, Field(ge=0)]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _in_repo_path(value: str | None) -> str | None:
    if value is not None and not is_repo_path(value):
        raise ValueError(
            "must be a normalised path inside the repository (no '..', no leading '/')"
        )
    return value


class FileChange(_Record):
    path: str = Field(min_length=1)
    previous_path: str | None = None
    status: FileStatus = "modified"
    additions: NonNegative = 0
    deletions: NonNegative = 0
    binary: bool = False
    patch: str | None = None

    _paths_in_repo = field_validator("path", "previous_path")(_in_repo_path)


class Commit(_Record):
    sha: str = Field(min_length=4)
    message: str = ""
    author: str | None = None
    committed_at: AwareDatetime | None = None


class Review(_Record):
    author: str | None = None
    author_type: ActorType = "User"
    state: ReviewState
    body: str = ""
    submitted_at: AwareDatetime | None = None


class Comment(_Record):
    author: str | None = None
    author_type: ActorType = "User"
    body: str = ""
    created_at: AwareDatetime | None = None


class ReviewThread(_Record):
    path: str | None = None
    line: int | None = None
    is_resolved: bool = False
    is_outdated: bool = False
    diff_hunk: str | None = None
    comments: tuple[Comment, ...] = ()


class LinkedIssue(_Record):
    number: int = Field(gt=0)
    title: str = ""
    state: IssueState | None = None
    url: str | None = None
    body: str | None = None


class Check(_Record):
    name: str
    status: str | None = None
    conclusion: CheckConclusion | None = None


class PullRequest(_Record):
    """One pull request as every source delivers it (``prdigest.pr/v1``)."""

    schema_id: Literal["prdigest.pr/v1"] = Field(alias="schema")
    repo: str
    number: int = Field(gt=0)
    url: str | None = None
    title: str = Field(min_length=1)
    author: str | None = None
    body: str | None = None
    state: Literal["merged", "closed", "open"] = "merged"
    draft: bool = False
    base_ref: str | None = None
    head_ref: str | None = None
    head_sha: str | None = None
    merge_commit_sha: str | None = None
    created_at: AwareDatetime | None = None
    updated_at: AwareDatetime | None = None
    merged_at: AwareDatetime
    labels: tuple[str, ...] | None = None
    additions: NonNegative | None = None
    deletions: NonNegative | None = None
    changed_files: NonNegative | None = None
    files: tuple[FileChange, ...] | None = None
    commits: tuple[Commit, ...] | None = None
    reviews: tuple[Review, ...] | None = None
    review_threads: tuple[ReviewThread, ...] | None = None
    comments: tuple[Comment, ...] | None = None
    linked_issues: tuple[LinkedIssue, ...] | None = None
    checks: tuple[Check, ...] | None = None
    source: Source = "jsonl"

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @field_validator("repo")
    @classmethod
    def _repo_is_owner_slash_name(cls, value: str) -> str:
        if not is_repo_name(value):
            raise ValueError(f"must be owner/name ({RULE})")
        return value

    @property
    def ref(self) -> str:
        """``owner/name#N``, the name used in every message about this PR."""
        return f"{self.repo}#{self.number}"

    @property
    def html_url(self) -> str:
        return self.url or f"https://github.com/{self.repo}/pull/{self.number}"

    @property
    def version_key(self) -> str:
        """What a derived artefact depends on: the PR's last update and head commit."""
        updated = self.updated_at.isoformat() if self.updated_at else "-"
        return f"{updated}|{self.head_sha or self.merge_commit_sha or '-'}"

    def to_json_dict(self) -> dict[str, Any]:
        """The record as plain JSON data, with ``schema`` first and unknown fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _describe_validation_error(exc: ValidationError) -> tuple[str, str]:
    """The first problem of a pydantic error as (field path, reason)."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "record"
    reason = first["msg"]
    if first["type"] == "missing":
        reason = "required field is missing"
    extra = len(exc.errors()) - 1
    if extra:
        reason += f" (and {extra} more problem{'s' if extra > 1 else ''})"
    return field, reason


def _guess_ref_safely(data: dict[str, Any]) -> str | None:
    """The PR's name for a message, only from a repo and number that are themselves sane."""
    repo, number = data.get("repo"), data.get("number")
    repo_ok = isinstance(repo, str) and len(repo) <= 200 and not _SURROGATE.search(repo)
    number_ok = isinstance(number, int) and INT_MIN <= number <= INT_MAX
    if not repo_ok and not number_ok:
        return None
    return f"{repo if repo_ok else '?'}#{number if number_ok else '?'}"


def _guess_ref(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    repo, number = data.get("repo"), data.get("number")
    if repo is None and number is None:
        return None
    return f"{repo or '?'}#{number if number is not None else '?'}"


def _checked_string(value: str, where: str) -> str:
    if len(value) > MAX_STRING:
        raise ValueError(f"{where}: string of {len(value):,} characters (at most {MAX_STRING:,})")
    return _SURROGATE.sub("\ufffd", value)


def check_bounds(data: Any) -> Any:
    """``data`` (plain JSON) within the bounds of the module doc, lone surrogates replaced.

    Walks without recursion, so no input can exhaust the stack; raises ``ValueError`` naming
    the place (``files.0.additions``) of the first value out of bounds.
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{where or 'record'}: nested deeper than {MAX_DEPTH} levels")
        items: Any
        if isinstance(node, dict):
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        for key, value in items:
            path = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and _SURROGATE.search(key):
                raise ValueError(f"{path}: a key with a lone surrogate")
            if isinstance(value, bool):
                continue
            if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
                raise ValueError(f"{path}: integer out of the 64-bit range")
            if isinstance(value, str):
                node[key] = _checked_string(value, path)
            elif isinstance(value, dict | list):
                stack.append((value, path, depth + 1))
    return data


def parse_record(data: Any) -> PullRequest:
    """Validate one record; raise :class:`RecordError` naming the PR and the field."""
    if not isinstance(data, dict):
        raise RecordError(f"expected a JSON object, got {type(data).__name__}")
    try:
        check_bounds(data)
    except ValueError as exc:
        raise RecordError(str(exc), pr=_guess_ref_safely(data)) from exc
    try:
        return PullRequest.model_validate(data)
    except ValidationError as exc:
        field, reason = _describe_validation_error(exc)
        raise RecordError(reason, pr=_guess_ref(data), field=field) from exc


def record_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``prdigest.pr/v1`` (``prdigest schema`` prints it)."""
    schema = PullRequest.model_json_schema(by_alias=True)
    schema["title"] = SCHEMA_ID
    return schema
