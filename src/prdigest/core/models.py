"""Typed, immutable records passed between pipeline stages (DESIGN §2).

``records.PullRequest`` enters; analyze makes a :class:`Dossier`; triage an :class:`Assessment`;
a writer an :class:`Entry`; the digest stage a :class:`Digest` that renderers turn into bytes.

Every fact in a dossier has an ``id`` (stable within the dossier, e.g. ``sym3``) and a
:class:`Provenance` saying where in the PR data it was seen, so a writer can cite facts and a
verifier can check them. All records are frozen pydantic models (those a digest holds per PR,
frozen pydantic dataclasses): they serialise to JSON for the store and for ``--format json``
without hand-written code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Self

from pydantic import AwareDatetime, BaseModel, ConfigDict, TypeAdapter
from pydantic.dataclasses import dataclass

ANALYZER_VERSION = "analyze/76"

# How deep analyze went: ``triage`` leaves out the facts only a paragraph's writer reads (the
# salience ranking and in-place edits, :data:`FULL_ONLY`); ``full`` has every fact.
Depth = Literal["triage", "full"]
FULL_ONLY = ("salient", "edits")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# The records a digest holds one of per PR of its window (verdict, head, entry, item) and the
# verdict's reasons are slotted pydantic dataclasses, not models: without a model's
# per-instance dict and field set they take a quarter of the memory (docs/scale.md). Their
# JSON is a model's; :class:`_Slim` gives them the model methods the code calls.
_SLIM = ConfigDict(extra="forbid")


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    found = _ADAPTERS.get(cls)
    if found is None:
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


class _Slim:
    __slots__ = ()

    @classmethod
    def model_validate_json(cls, raw: str | bytes) -> Self:
        found: Self = _adapter(cls).validate_json(raw)
        return found

    def model_dump_json(self) -> str:
        return _adapter(type(self)).dump_json(self).decode("utf-8")

    def model_dump(self, *, mode: Literal["json", "python"] = "python") -> dict[str, Any]:
        data: dict[str, Any] = _adapter(type(self)).dump_python(self, mode=mode)
        return data

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update`` applied (validated, unlike a model's)."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]


class Level(StrEnum):
    """Verdict levels, best first (DESIGN §1)."""

    MUST_READ = "must_read"
    WORTH_READING = "worth_reading"
    SKIM = "skim"
    SKIP = "skip"
    LIST_ONLY = "list_only"

    @property
    def rank(self) -> int:
        return list(Level).index(self)


class Kind(StrEnum):
    FIX = "fix"
    PERF = "perf"
    FEATURE = "feature"
    REFACTOR = "refactor"
    CI = "ci"
    DOCS = "docs"
    TEST = "test"
    DEPS = "deps"
    REVERT = "revert"
    CHORE = "chore"


class Role(StrEnum):
    """What a changed file is for."""

    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    CI = "ci"
    BUILD = "build"
    CONFIG = "config"
    DEPS = "deps"


class DiffCoverage(StrEnum):
    FULL = "full"  # every text file has its patch
    PARTIAL = "partial"  # some patches or files are missing
    NONE = "none"  # metadata only


class Provenance(_Frozen):
    """Where a fact was seen: ``kind`` names the part of the record, ``ref`` the item in it."""

    kind: Literal[
        "title", "body", "label", "file", "review", "thread", "comment", "commit", "issue", "check"
    ]
    ref: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.kind}:{self.ref}" + (f":{self.line}" if self.line is not None else "")


class Fact(_Frozen):
    id: str
    provenance: Provenance


class AreaRef(_Frozen):
    """An area of the repository (from the preset) and how much of the PR falls in it.

    Only the id: the area's name and readers, per language, stay in the preset.
    """

    id: str
    readers: bool = False  # the preset names this area's readers (an audience phrase)
    core: bool = False
    weight: float = 1.0
    share: float = 0.0  # fraction of changed lines in this area
    evidence: str = ""  # the path or title tag that put the PR here


class FileFact(Fact):
    path: str
    previous_path: str | None = None
    status: str
    role: Role
    language: str | None = None
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    has_patch: bool = False
    generated: bool = False  # lock files and other generated text
    moved_from: str | None = None  # an added file whose text a removed file had (no git rename)
    duplicate_of: str | None = None  # the same change as in this other file (a copied header)
    # lines removed and added back as they were, in place (the line endings or trailing blanks
    # of a whole file changed): counted in additions and deletions, changed in no way a reader sees
    relaid: int = 0

    @property
    def lines_seen(self) -> int:
        """Lines added or removed, without those only laid out again in place."""
        return self.additions + self.deletions - 2 * self.relaid


class SymbolFact(Fact):
    """A function or class whose code the PR adds, changes or removes."""

    name: str
    kind: Literal[
        "function",
        "method",
        "class",
        "struct",
        "enum",
        "trait",
        "macro",
        "shell",
        "constant",
        "step",
        "field",
    ]
    path: str
    line: int | None = None
    change: Literal["added", "modified", "removed"]
    language: str | None = None
    via: Literal["ast", "hunk_header", "pattern"]
    in_test: bool = False
    lines_changed: int = 0
    parent: str | None = None  # enclosing class for methods (the class that holds it after)
    # renames and moves (analyze.moves): on the added side where it came from, on the removed
    # side where it went; a moved or renamed definition is neither new nor deleted
    moved_from: str | None = None  # the path it was defined in before
    renamed_from: str | None = None  # the name it had before
    moved_to: str | None = None  # the path it is defined in now
    renamed_to: str | None = None  # the name it has now
    reworked: bool = False  # moved or renamed, and its body rewritten on the way
    # a new function most of whose lines the PR took out of code of its file (extracted), and
    # the function they sat in when the diff shows it
    extracted: bool = False
    extracted_from: str | None = None
    # a new function the PR assigns in another module's or class's place (a monkey patch):
    # that attribute, by its last two parts (``Eagle3LlamaForCausalLM.compute_logits``)
    replaces: str | None = None
    # a modified function's signature, where the diff shows it whole on both sides
    parameters_added: tuple[str, ...] = ()
    parameters_removed: tuple[str, ...] = ()

    @property
    def relocated(self) -> bool:
        """Moved or renamed (either side): not a new or a deleted definition."""
        return bool(self.moved_from or self.renamed_from or self.moved_to or self.renamed_to)


class TestFact(Fact):
    """A test function added by the PR."""

    name: str
    path: str
    line: int | None = None
    parametrized: bool = False
    existed: bool = False  # its def line was edited (a new signature), the test was there before
    moved_from: str | None = None  # a test moved from another file (analyze.moves)
    renamed_from: str | None = None  # a test renamed (same body, another name)
    reworked: bool = False  # moved or renamed, and its body rewritten on the way


class TechniqueFact(Fact):
    """A notable testing technique seen in added test lines (e.g. ``threading.Event``)."""

    technique: str
    label: str  # the code name as it appears, e.g. ``monkeypatch``
    path: str
    line: int | None = None
    # what the code shows beyond the name, so a phrase claims no more than that:
    cases: int | None = None  # parametrize: the largest number of cases one test gets
    asserts_calls: bool = False  # fake_object / mock: an assert reads the calls it recorded
    sleeps: bool = False  # threading_event: the same test file also sleeps
    # the functions whose added lines show it (a fake class: those that name it); None where
    # the language's scopes are not read, so a writer cannot tie it to a particular test
    used_in: tuple[str, ...] | None = None
    # mock: the functions whose added lines assert on recorded calls (None: scopes not read)
    asserted_in: tuple[str, ...] | None = None


class SectionFact(Fact):
    """A section of the PR body (vLLM's template: Purpose / Test Plan / Test Result)."""

    name: str
    heading: str
    text: str
    empty: bool


class RationaleFact(Fact):
    """A sentence of the PR body that says why: a root cause, a symptom, or the motivation."""

    kind: Literal["root_cause", "symptom", "motivation"]
    text: str  # the sentence as written, clipped
    claim: str = ""  # the sentence reduced to its claim (analyze.body.reduce_claim), verbatim words
    code_unseen: bool = False  # it names code in backticks, none of which the diff shows


class DesignFact(Fact):
    """A design idea the diff shows in code (a lock, an event, a state enum, a fail-closed
    raise …), found in added (or, for a removed host sync, deleted) source lines."""

    pattern: str  # an id of ``analyze.design.PATTERNS``
    label: str  # the code as it appears, e.g. ``threading.Lock``
    path: str
    line: int | None = None
    in_test: bool = False
    net: bool = True  # not also on the other side of the file's patch (code that only moved)
    guard: str = ""  # the one-line ``if`` condition whose body the code is, verbatim (raises)
    # the function a guarded raise sits in (its condition holds there); for a raise without a
    # condition the function or, outside one, the class it sits in: where it is added
    scope: str = ""


class EditFact(Fact):
    """An expression the PR rewrote in place: what it was and what it became, verbatim
    (``self.runner.block_size`` → ``self.kernel_block_size``)."""

    path: str
    line: int | None = None
    before: str
    after: str
    symbol: str | None = None  # the definition the line sits in (new side), when known


class SalientFact(Fact):
    """A code name ranked by how much of the design it carries, not by its size
    (``analyze.salience``): named in the title or body, exercised by new tests, a new class or
    hook, a dispatch function, used from several files; logging helpers, duplicated files and
    kernels whose Python side carries the change rank low."""

    name: str
    kind: Literal["symbol", "identifier"]
    path: str
    line: int | None = None
    score: float
    reasons: tuple[str, ...] = ()  # ids of analyze.salience.REASONS
    symbol: str | None = None  # the SymbolFact id, for a definition
    change: Literal["added", "modified", "removed", "used", "introduced", "gone"] = "used"
    files: int = 1  # changed files whose lines use the name


class ComparisonFact(Fact):
    """A before → after figure the body reports (``4360us -> 3949us``), both verbatim."""

    before: str
    after: str
    metric: str | None = None
    text: str  # the line it was read from, clipped
    section: str | None = None  # the body section it stands in (``test_result`` …)


class ClaimFact(Fact):
    """A sentence of the PR body that states an effect with a figure."""

    text: str
    figure: str
    metric: str | None = None
    in_table: bool = False  # one row of a results table: the table as a whole makes the claim


class ReviewerFact(Fact):
    login: str
    is_bot: bool
    states: tuple[str, ...]
    last_state: str
    first_review_at: AwareDatetime | None = None


class ThreadFact(Fact):
    path: str | None
    line: int | None
    is_resolved: bool
    is_outdated: bool
    authors: tuple[str, ...]
    started_by: str | None
    started_by_bot: bool
    comment_count: int
    excerpt: str
    code_names: tuple[str, ...] = ()  # backticked names in the thread's comments


class RemarkFact(Fact):
    """A conversation comment worth citing (a bot's remark or a person's note)."""

    author: str | None
    is_bot: bool
    excerpt: str


class IssueFact(Fact):
    number: int
    title: str | None = None
    state: str | None = None
    closing: bool  # True: the PR closes it; False: only mentioned


class CommitFact(Fact):
    sha: str
    headline: str
    author: str | None = None
    committed_at: AwareDatetime | None = None
    after_review: bool = False  # pushed after the first non-bot review


class SignalKind(StrEnum):
    TODO = "todo"
    SKIP_ADDED = "skip_added"
    TESTS_DELETED = "tests_deleted"
    NO_TESTS = "no_tests"
    MAGIC_NUMBER = "magic_number"
    ENV_VAR = "env_var"
    CONFIG_FLAG = "config_flag"
    SWALLOWED_EXCEPTION = "swallowed_exception"
    SILENT_CLAMP = "silent_clamp"
    EMPTY_TEST_RESULT = "empty_test_result"
    LINT_ONLY_TESTING = "lint_only_testing"  # the test section names only linters or compiles
    BREAKING_CHANGE = "breaking_change"  # the body says users must change something
    DEFAULT_CHANGED = "default_changed"  # an option's default value changed in the code
    UNRESOLVED_THREADS = "unresolved_threads"
    FAILED_CHECKS = "failed_checks"
    STALE_BODY = "stale_body"
    HUGE_DIFF = "huge_diff"
    BROKEN_PATCH = "broken_patch"
    FOLLOWUP_PROMISED = "followup_promised"


class SignalFact(Fact):
    """A risk or follow-up signal: something a careful reader would want pointed out."""

    kind: SignalKind
    detail: str  # the code name or text that triggered it, verbatim from the record
    value: str | None = None  # e.g. the number a magic constant is set to
    path: str | None = None
    line: int | None = None
    owner: str | None = None  # TODO(owner)
    condition: str | None = None  # the ``if`` the changed line sits under (a default set there)
    parameter_of: str | None = None  # a changed default of this function's parameter


class ChecksSummary(_Frozen):
    total: int = 0
    succeeded: int = 0
    failed: tuple[str, ...] = ()
    skipped: int = 0


class Coverage(_Frozen):
    diff: DiffCoverage
    discussion: bool  # reviews/threads/comments are known
    checks: bool
    note: str = ""

    @property
    def label(self) -> str:
        if self.diff is DiffCoverage.NONE:
            return "metadata"
        return self.diff.value


class Series(_Frozen):
    index: int
    total: int


KERNEL_SHARE = 5  # kernel lines per Python line past which the kernel carries the change
PYTHON_CARRIES_FROM = 50  # Python lines that carry a change whatever the kernels beside them


def python_carries(files: Sequence[FileFact]) -> bool:
    """Whether the PR's Python source carries its change beside its C/C++ kernels: it changes
    :data:`PYTHON_CARRIES_FROM` Python lines or more, or some and no more than
    :data:`KERNEL_SHARE` kernel lines per Python line (a two-line binding call beside a 60-line
    kernel is the kernel's change)."""

    def lines(language: str) -> int:  # lines a patch only lays out again are no change
        return sum(f.lines_seen for f in files if f.role is Role.SOURCE and f.language == language)

    python = lines("python")
    kernels = lines("cpp")
    return python >= PYTHON_CARRIES_FROM or (python > 0 and kernels <= KERNEL_SHARE * python)


class Dossier(_Frozen):
    """Everything analyze learned about one PR, each fact with its provenance."""

    repo: str
    number: int
    title: str
    subject: str  # the title without its bracket tags
    tags: tuple[str, ...]
    url: str
    author: str | None
    merged_at: AwareDatetime
    merge_commit_sha: str | None
    head_sha: str | None
    labels: tuple[str, ...]
    additions: int
    deletions: int
    changed_files: int
    kind: Kind
    kind_evidence: str
    areas: tuple[AreaRef, ...]
    files: tuple[FileFact, ...]
    symbols: tuple[SymbolFact, ...]
    tests: tuple[TestFact, ...]
    techniques: tuple[TechniqueFact, ...]
    sections: tuple[SectionFact, ...]
    claims: tuple[ClaimFact, ...]
    rationale: tuple[RationaleFact, ...] = ()
    design: tuple[DesignFact, ...] = ()
    edits: tuple[EditFact, ...] = ()
    comparisons: tuple[ComparisonFact, ...] = ()
    testing: Literal["unknown", "none", "lint", "described"] = "unknown"  # the test section says
    user_facing: str = ""  # the body's user-facing change, reduced (empty: none stated)
    salient: tuple[SalientFact, ...] = ()  # best first
    narrow: tuple[str, ...] = ()  # the preset's audience-confining words in the title
    documented_knobs: tuple[str, ...] = ()  # variables and flags that added docs lines name
    reviewers: tuple[ReviewerFact, ...]
    threads: tuple[ThreadFact, ...]
    remarks: tuple[RemarkFact, ...]
    issues: tuple[IssueFact, ...]
    commits: tuple[CommitFact, ...]
    signals: tuple[SignalFact, ...]
    checks: ChecksSummary | None
    coverage: Coverage
    series: Series | None = None
    reverts: int | None = None  # the PR number this one reverts, when stated
    analyzer_version: str = ANALYZER_VERSION
    pr_version: str = ""
    # a triage-depth dossier has no :data:`FULL_ONLY` facts: fit to assess and to title a PR,
    # never to write its paragraph (rows stored before depths existed were full)
    depth: Depth = "full"

    @property
    def ref(self) -> str:
        return f"{self.repo}#{self.number}"

    @property
    def primary_area(self) -> AreaRef | None:
        return self.areas[0] if self.areas else None

    def source_lines_changed(self) -> int:
        """Source lines added or removed, without those only laid out again in place."""
        return sum(f.lines_seen for f in self.files if f.role is Role.SOURCE)

    def python_carries(self) -> bool:
        return python_carries(self.files)


@dataclass(frozen=True, slots=True, config=_SLIM)
class Reason(_Slim):
    """One reason behind a verdict: a stable code, a human phrase, its score contribution."""

    code: str
    detail: str
    weight: float


@dataclass(frozen=True, slots=True, config=_SLIM)
class Assessment(_Slim):
    """A verdict: level, score and reasons. ``area`` is the id of the PR's primary area;
    ``audience`` the id of the area whose readers the PR is mostly for (None: everyone)."""

    repo: str
    number: int
    level: Level
    score: float
    reasons: tuple[Reason, ...]
    audience: str | None
    area: str | None
    triage_version: str = ""  # the rules and the model that made it (triage.triage_version)


class CodeRef(_Frozen):
    """A code name an entry mentions and where it lives, for permalinks."""

    name: str
    path: str
    line: int | None = None


class AreaText(_Frozen):
    """An area's name and its readers' phrase in one language (from the preset)."""

    name: str
    audience: str = ""


@dataclass(frozen=True, slots=True, config=_SLIM)
class Entry(_Slim):
    repo: str
    number: int
    lang: str
    title: str
    paragraph: str | None  # None for list_only
    writer: str  # "template" or "llm:<model>"
    fallback: bool = False  # an LLM entry that failed verification was replaced by the template
    cites: tuple[str, ...] = ()
    code_refs: tuple[CodeRef, ...] = ()
    # why a model entry fell back, what prdigest fixed in it, or what it reported (made-up
    # cite ids), in the entry's language
    findings: tuple[str, ...] = ()


class Window(_Frozen):
    since: AwareDatetime
    until: AwareDatetime
    tz: str
    label: str  # "2026-06-10" for a day, "since..until" otherwise


@dataclass(frozen=True, slots=True, config=_SLIM)
class PRHead(_Slim):
    """The few PR fields every renderer needs."""

    repo: str
    number: int
    title: str
    url: str
    author: str | None
    additions: int
    deletions: int
    merged_at: datetime
    merge_commit_sha: str | None
    kind: Kind
    area: str | None  # the id of the primary area
    coverage: str
    discussion: bool = True  # False when the record has no review data (e.g. from git)


@dataclass(frozen=True, slots=True, config=_SLIM)
class DigestItem(_Slim):
    pr: PRHead
    assessment: Assessment
    entry: Entry
    selected: bool


class AreaGroup(_Frozen):
    area: str | None  # the area id; None for PRs outside every area
    name: str  # in the digest's language
    items: tuple[DigestItem, ...]


class Digest(_Frozen):
    """A window's digest: the selected entries in rank order, then everything else by area."""

    repo: str
    window: Window
    lang: str
    selected: tuple[DigestItem, ...]
    others: tuple[AreaGroup, ...]
    total: int
    counts: dict[str, int]  # by level value
    areas: dict[str, str] = {}  # area id → name in ``lang``, for every area an item names

    def all_items(self) -> tuple[DigestItem, ...]:
        return self.selected + tuple(i for g in self.others for i in g.items)

    def area_name(self, area: str | None) -> str | None:
        """The name of an item's area in the digest's language (None: no area)."""
        return self.areas.get(area) if area else None


class UsageRecord(_Frozen):
    """What one logical model write cost; ``number`` is ``None`` for a batched titles request."""

    number: int | None
    purpose: Literal["paragraph", "titles"]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # HTTP attempts, retries and timed-out requests included
    # paragraphs: model | repaired | fixed | fallback | error | budget;
    # titles: model | partial | failed | error | budget
    outcome: str = "model"
    estimated: bool = False  # the server sent no usage (or the request timed out): estimates
    entry_key: str | None = None
    requests: int = 0  # model requests: the first attempt and each repair
    seconds: float = 0.0  # wall time of the requests
    accepted: int = 0  # titles: how many of the batch were accepted
    asked: int = 0  # titles: how many the batch asked for
    findings: tuple[str, ...] = ()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
