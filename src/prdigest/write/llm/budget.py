"""Token estimates and the budgeted view of a PR that goes into a prompt.

Estimator (no tokenizer download, DESIGN §7): a linear count over the pieces a BPE
pre-tokenizer splits text into — Chinese characters, Latin words (and the letters of long ones),
digits (one token each in Qwen's and Llama 3's vocabularies), punctuation, line breaks — with
weights fitted on 74 real prompts of the development set against Qwen2.5's tokenizer
(llama.cpp, ``vocab_only``) and raised until no prompt was under-counted: on those prompts the
estimate runs 0.4–9.5 % above the true count (5 % in total). The old rule (3.5 characters per
token) ran 17 % low on code-heavy prompts and 40 % high on Chinese. For other tokenizers the
estimate is an assumption; where the server tokenizes (llama.cpp, vLLM), ``prdigest llm-check``
measures its error.

Budget (pr-agent's greedy fill, adapted to a reading digest): the dossier facts go first (they
are what an entry may cite), then the PR body, then the discussion — changes-requested reviews
and unresolved threads first — then the diff. Diff hunks are ranked: hunks around the named
source symbols, then test hunks, then other source hunks, then everything else, with
deletion-only hunks and lock/generated files last. What does not fit is listed by name only,
so the model knows it exists and the entry can say it was not read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from prdigest.analyze.body import heading_of, visible_lines
from prdigest.analyze.design import REMOVED_SIDE
from prdigest.core.models import Dossier, FileFact, Role, SymbolFact, TestFact, ThreadFact
from prdigest.core.records import Comment, PullRequest

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_WORD = re.compile(r"[A-Za-z]+")
_DIGIT = re.compile(r"[0-9]")
_LONG_WORD = re.compile(r"[A-Za-z]{7,}")
# tokens per piece (see the module docstring)
PER_CJK = 0.74
PER_WORD = 1.13
PER_LONG_LETTER = 0.25  # each letter of a word past its sixth
LONG_WORD = 6
PER_DIGIT = 1.25
PER_PUNCT = 0.49
PER_NEWLINE = 1.08
MAX_COMMENT_CHARS = 600
MAX_THREAD_COMMENTS = 4
MAX_ISSUE_BODY_CHARS = 500
KERNEL_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".c", ".h", ".hpp", ".inc")
LOCK_NAMES = frozenset(
    {
        "uv.lock",
        "poetry.lock",
        "Cargo.lock",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
    }
)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, estimated without a tokenizer (see the module docstring)."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    words = _WORD.findall(text)
    letters = sum(map(len, words))
    long_words = _LONG_WORD.findall(text)
    long_letters = sum(map(len, long_words)) - LONG_WORD * len(long_words)
    digits = len(_DIGIT.findall(text))
    spaces = len(text) - len("".join(text.split()))
    punct = len(text) - cjk - letters - digits - spaces
    count = (
        PER_CJK * cjk
        + PER_WORD * len(words)
        + PER_LONG_LETTER * long_letters
        + PER_DIGIT * digits
        + PER_PUNCT * punct
        + PER_NEWLINE * text.count("\n")
    )
    return max(1, math.ceil(count))


def clip_text(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word boundary, with an ellipsis when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut).rstrip() + "…"


def clip_to_tokens(text: str, tokens: int) -> str:
    """The longest prefix of ``text`` (whole lines) within ``tokens``, marked when cut."""
    if estimate_tokens(text) <= tokens:
        return text
    out: list[str] = []
    used = 0
    for line in text.splitlines():
        cost = estimate_tokens(line) + 1
        if used + cost > tokens - 12:
            break
        out.append(line)
        used += cost
    return "\n".join(out) + "\n…（截断 / clipped）"


# -- facts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactLine:
    id: str
    text: str
    priority: int  # lower goes first when the facts do not all fit
    key: bool  # a key fact: what an entry is expected to draw on
    group: str = ""  # facts of one group (a symbol's file) share a line: ``group: a, b``
    owner: str = ""  # a member's class: after that class's own fact, ``short`` is shown
    short: str = ""
    defines: str = ""  # a class's name (its members that follow are shown short)


# Block headers of the facts; the notation they use is explained once per request (the
# locale's ``notation``), not once per PR of a pack.
SYMBOL_LEGEND = "symbols:"
FILES_LEGEND = "files:"
FOLDER = "files in "  # a file group's key; the folder alone is shown
_CHANGE_MARK = {"added": "+", "removed": "−", "deleted": "−", "modified": "~"}
_KIND_SHORT = {"function": "fn", "method": "method", "constant": "const"}


def _symbol_text(s_id: str, change: str, kind: str, name: str, lines: int, extra: str = "") -> str:
    mark = _CHANGE_MARK.get(change, change + " ")
    return f"{s_id} {mark}{_KIND_SHORT.get(kind, kind)} {name} ({lines}{extra})"


def _symbol_line(s: SymbolFact, priority: int, key: bool, test: TestFact | None = None) -> FactLine:
    """A symbol's line in its file's group; a new test's (``test``) when the symbol is one,
    under the test's id, so the test is listed once."""
    name = f"{s.parent}.{s.name}" if s.parent else s.name
    fact_id, kind = (test.id, "test") if test else (s.id, s.kind)
    extra = ", parametrized" if test and test.parametrized else ""
    text = _symbol_text(fact_id, s.change, kind, name, s.lines_changed, extra)
    mark = _CHANGE_MARK.get(s.change, s.change + " ")
    short = f"{fact_id} {mark}.{s.name} ({s.lines_changed}{extra})"
    group = PurePosixPath(s.path).name
    defines = s.name if s.kind in ("class", "struct") and not s.parent else ""
    short_text = short if s.parent else ""
    return FactLine(fact_id, text, priority, key, group, s.parent or "", short_text, defines)


def _test_line(t: TestFact) -> FactLine:
    """A new test no symbol fact names, in its file's group."""
    extra = " (parametrized)" if t.parametrized else ""
    return FactLine(t.id, f"{t.id} test {t.name}{extra}", 35, True, PurePosixPath(t.path).name)


def render_facts(lines: Sequence[FactLine]) -> str:
    """The fact lines, grouped ones joined on one line per group (in first-seen order)."""
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    last_class: dict[str, str] = {}  # per group, the class whose fact came last
    for line in lines:
        if not line.group:
            out.append(line.text)
            continue
        short = line.owner and last_class.get(line.group) == line.owner
        text = line.short if short else line.text
        if line.defines or not short:
            last_class[line.group] = line.defines
        if line.group not in groups:
            files = line.group.startswith(FOLDER)
            if not any(g.startswith(FOLDER) is files for g in groups):
                out.append(FILES_LEGEND if files else SYMBOL_LEGEND)
            groups[line.group] = []
            out.append(line.group)  # placeholder, filled below
        groups[line.group].append(text)
    return "\n".join(
        f"{x.removeprefix(FOLDER)}: {', '.join(groups[x])}" if x in groups else x for x in out
    )


def _counts(additions: int, deletions: int) -> str:
    """``+a/−d``, without the side that is zero when the other is not (an added file)."""
    if additions and not deletions:
        return f"+{additions}"
    if deletions and not additions:
        return f"−{deletions}"
    return f"+{additions}/−{deletions}"


def _file_line(f: FileFact) -> FactLine:
    flags = [f.role.value] + (["generated"] if f.generated else [])
    if f.status != "modified":
        flags.append(f.status + (f" from {f.previous_path}" if f.previous_path else ""))
    if f.binary:
        flags.append("binary")
    kind = ", ".join(flags[1:] if f.role is Role.SOURCE else flags)
    path = PurePosixPath(f.path)
    text = f"{f.id} {path.name} ({_counts(f.additions, f.deletions)}{'; ' + kind if kind else ''})"
    key = f.role in (Role.SOURCE, Role.TEST) and not f.generated
    folder = FOLDER + (f"{path.parent}/" if str(path.parent) != "." else "./")
    return FactLine(f.id, text, 60 if key else 90, key, folder)


def fact_lines(d: Dossier) -> list[FactLine]:
    """One line per dossier fact, with its id, in dossier order."""
    lines: list[FactLine] = [_file_line(f) for f in d.files]
    tests = {(t.path, t.name): t for t in d.tests}
    merged: set[str] = set()  # tests listed on their symbol's place
    for s in d.symbols:
        test = tests.get((s.path, s.name)) if s.in_test else None
        if test is not None and test.id not in merged:
            merged.add(test.id)
            lines.append(_symbol_line(s, 35, True, test))
            continue
        key = not s.in_test and s.kind not in ("step", "field")
        # kernel sources after Python: entries cite the Python design first
        priority = (62 if _is_kernel(s.path) else 40) if key else 85
        lines.append(_symbol_line(s, priority, key))
    lines.extend(_test_line(t) for t in d.tests if t.id not in merged)
    for q in d.techniques:
        text = f"{q.id} technique {q.technique}: {q.label} ({PurePosixPath(q.path).name})"
        lines.append(FactLine(q.id, text, 70, False))
    for b in d.sections:
        state = "empty" if b.empty else f"{len(b.text)} chars"
        lines.append(FactLine(b.id, f"{b.id} body section {b.heading} ({state})", 30, True))
    for c in d.claims:
        metric = f" {c.metric}" if c.metric else ""
        text = f"{c.id} claim{metric} {c.figure}: {clip_text(c.text, 200)}"
        lines.append(FactLine(c.id, text, 10, True))
    for r in d.reviewers:
        who = "bot" if r.is_bot else "person"
        text = f"{r.id} reviewer @{r.login} ({who}; {' → '.join(r.states)})"
        lines.append(FactLine(r.id, text, 20 if not r.is_bot else 75, not r.is_bot))
    for h in d.threads:
        lines.append(_thread_line(h))
    for m in d.remarks:
        who = f"@{m.author}" if m.author else "?"
        text = f"{m.id} remark {who}{' (bot)' if m.is_bot else ''}: {clip_text(m.excerpt, 200)}"
        lines.append(FactLine(m.id, text, 72, False))
    for i in d.issues:
        rel = "closes" if i.closing else "mentions"
        text = (
            f"{i.id} issue #{i.number} ({rel}, {i.state or '?'}): {clip_text(i.title or '', 120)}"
        )
        lines.append(FactLine(i.id, text, 45 if i.closing else 80, i.closing))
    for k in d.commits:
        if not k.after_review and k.headline.startswith(d.title[:40]):
            continue  # the squashed commit repeats the PR title
        when = ", after review" if k.after_review else ""
        who = f"@{k.author}" if k.author else "?"
        text = f"{k.id} commit {k.sha[:7]} ({who}{when}): {clip_text(k.headline, 140)}"
        lines.append(FactLine(k.id, text, 50 if k.after_review else 88, k.after_review))
    for g in d.signals:
        where = f" ({PurePosixPath(g.path).name}:{g.line})" if g.path and g.line else ""
        value = f" = {g.value}" if g.value else ""
        text = f"{g.id} signal {g.kind.value}: {clip_text(g.detail, 160)}{value}{where}"
        lines.append(FactLine(g.id, text, 15, True))
    return lines


def _thread_line(h: ThreadFact) -> FactLine:
    state = "unresolved" if not h.is_resolved else "resolved"
    if h.is_outdated:
        state += ", outdated"
    where = PurePosixPath(h.path).name if h.path else "PR"
    starter = f"@{h.started_by}" if h.started_by else "?"
    bot = " (bot)" if h.started_by_bot else ""
    names = f"; names: {', '.join(h.code_names[:6])}" if h.code_names else ""
    text = (
        f"{h.id} thread by {starter}{bot} on {where} ({state}, {h.comment_count} comments{names}):"
        f" {clip_text(h.excerpt, 200)}"
    )
    priority = 18 if not h.is_resolved else (25 if not h.started_by_bot else 74)
    return FactLine(h.id, text, priority, not h.started_by_bot)


def key_fact_ids(d: Dossier) -> frozenset[str]:
    """The facts a DESIGN §1 entry draws on (claims, signals, people, tests, source code…)."""
    return frozenset(line.id for line in fact_lines(d) if line.key)


def _fact_cost(line: FactLine, groups: set[str]) -> int:
    """Tokens ``line`` adds to :func:`render_facts`: its text and separator, and its group's
    header when the group is not in ``groups`` yet."""
    cost = estimate_tokens(line.text) + 2
    if line.group and line.group not in groups:
        cost += estimate_tokens(line.group) + 1
    return cost


_LEGENDS = estimate_tokens(SYMBOL_LEGEND) + estimate_tokens(FILES_LEGEND) + 2


def facts_tokens(lines: Sequence[FactLine]) -> int:
    """What all ``lines`` cost as :func:`pack_facts` counts them."""
    groups: set[str] = set()
    total = _LEGENDS
    for line in lines:
        total += _fact_cost(line, groups)
        groups.add(line.group)
    return total


def pack_facts(lines: Sequence[FactLine], tokens: int) -> tuple[list[FactLine], list[FactLine]]:
    """The fact lines that fit in ``tokens`` (by priority), in dossier order; and the rest."""
    chosen: set[str] = set()
    groups: set[str] = set()
    used = _LEGENDS
    for line in sorted(lines, key=lambda x: x.priority):
        cost = _fact_cost(line, groups)
        if used + cost <= tokens:
            chosen.add(line.id)
            groups.add(line.group)
            used += cost
    kept = [x for x in lines if x.id in chosen]
    return kept, [x for x in lines if x.id not in chosen]


# -- diff ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hunk:
    path: str
    index: int  # position of the file in the PR
    order: int  # position of the hunk in its file
    text: str
    tier: int  # 0 salient source, 1 tests, 2 other source, 3 other, 4 deletions, 5 generated
    hits: float  # salience: weighted symbols and design facts in the hunk (tests for tests)
    folded: str = ""  # changed lines folded as moved: not shown, their names may be listed

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text) + 1


def split_hunks(patch: str) -> list[str]:
    """The ``@@`` hunks of a unified-diff patch (text before the first header is dropped)."""
    hunks: list[list[str]] = []
    for line in patch.splitlines():
        if line.startswith("@@"):
            hunks.append([line])
        elif hunks:
            hunks[-1].append(line)
    return ["\n".join(h) for h in hunks]


CONTEXT_LINES = 1
_RANGES = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def compact_hunk(text: str, context: int = CONTEXT_LINES) -> str:
    """A hunk as the prompt shows it: only ``context`` unchanged lines around each change (a
    run of the rest becomes one ``…`` line, none at either end), no blank line (added,
    removed or unchanged), and a header without its line ranges (``@@ def f(``): the changed lines
    and the names around them are what an entry cites, the rest costs tokens."""
    lines = text.splitlines()
    if not lines:
        return text
    head, body = _RANGES.sub("@@", lines[0]).rstrip(), lines[1:]
    changed = [i for i, line in enumerate(body) if line[:1] in "+-"]
    keep: set[int] = set()
    for i in changed:
        keep.update(range(max(0, i - context), min(len(body), i + context + 1)))
    out: list[str] = []
    for i, line in enumerate(body):
        if i not in keep:
            if out and out[-1] != " …":
                out.append(" …")
        elif line[1:].strip():
            out.append(line)
    if out and out[-1] == " …":
        out.pop()
    return "\n".join([head, *out])


_LICENSE = re.compile(r"copyright|license|spdx", re.I)
_COMMENT_LINE = re.compile(r"^\+\s*(?:#(?:[\s!]|$)|//|/\*|\*|$)")  # not #include


def strip_license(text: str) -> str:
    """A new file's hunk without its leading comment block when that block is a license
    header (boilerplate an entry never cites)."""
    lines = text.splitlines()
    if len(lines) < 3 or not lines[0].startswith("@@ -0,0 "):
        return text
    end = 1
    while end < len(lines) and _COMMENT_LINE.match(lines[end]):
        end += 1
    header = "\n".join(lines[1:end])
    if end == 1 or not _LICENSE.search(header):
        return text
    return "\n".join([lines[0], "+…（license header）", *lines[end:]])


_IMPORT = re.compile(r"^\+\s*(?:import\s|from\s+[\w.]+\s+import\b|#include\s)")


def fold_imports(text: str) -> str:
    """A hunk with each run of more than two added import lines (``import``, ``from … import``
    with its parenthesised names, ``#include``) folded into one line: they cost many tokens
    and carry no design."""
    out: list[str] = []
    run: list[str] = []
    open_paren = False

    def flush() -> None:
        out.extend([f"+…（{len(run)} import lines）"] if len(run) > 2 else run)
        run.clear()

    for line in text.splitlines():
        if open_paren or _IMPORT.match(line):
            run.append(line)
            open_paren = (open_paren and ")" not in line) or line.rstrip().endswith("(")
            continue
        flush()
        out.append(line)
    flush()
    return "\n".join(out)


MOVED_RUN = 4  # consecutive changed lines the other side of the diff also has: a moved block
MOVED_MARK = {  # what a folded run says: only that the other side of the diff has its lines
    "+": "+…（{0} lines the same as lines the PR removes）",
    "-": "-…（{0} lines the same as lines the PR adds）",
}


def changed_line_sets(pr: PullRequest) -> dict[str, frozenset[str]]:
    """The stripped text of every added (``+``) and removed (``-``) line of the PR."""
    sides: dict[str, set[str]] = {"+": set(), "-": set()}
    for change in pr.files or ():
        for line in (change.patch or "").splitlines():
            if line[:1] in sides and not line.startswith(("+++", "---")) and line[1:].strip():
                sides[line[0]].add(line[1:].strip())
    return {side: frozenset(lines) for side, lines in sides.items()}


def fold_moved(text: str, changed: dict[str, frozenset[str]]) -> tuple[str, str]:
    """A hunk with each run of at least :data:`MOVED_RUN` added lines that the PR also removes
    (or removed lines it also adds) folded into one line, and the folded lines: moved or
    re-indented code is not a change, and its text costs tokens without saying so."""
    out: list[str] = []
    folded: list[str] = []
    run: list[str] = []
    other = {"+": "-", "-": "+"}

    def flush() -> None:
        if len(run) >= MOVED_RUN:
            out.append(MOVED_MARK[run[0][0]].format(len(run)))
            folded.extend(run)
        else:
            out.extend(run)
        run.clear()

    for line in text.splitlines():
        side = line[:1]
        moved = side in other and line[1:].strip() in changed[other[side]]
        if run and (not moved or side != run[0][0]):
            flush()
        if moved:
            run.append(line)
        else:
            out.append(line)
    flush()
    return "\n".join(out), "\n".join(folded)


def _deletion_only(text: str) -> bool:
    body = text.splitlines()[1:]
    return not any(line.startswith("+") for line in body) and any(
        line.startswith("-") for line in body
    )


def _name_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """One alternation for all names (longest first), so a hunk is scanned once."""
    ordered = sorted(set(names), key=len, reverse=True)
    if not ordered:
        return None
    return re.compile(r"(?<!\w)(" + "|".join(map(re.escape, ordered)) + r")(?!\w)")


def _names_in(text: str, pattern: re.Pattern[str] | None) -> set[str]:
    return set(pattern.findall(text)) if pattern else set()


_HUNK_RANGE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _new_lines(text: str) -> range:
    match = _HUNK_RANGE.match(text)
    if not match:
        return range(0)
    start = int(match.group(1))
    return range(start, start + int(match.group(2) or 1))


def _is_kernel(path: str) -> bool:
    return path.endswith(KERNEL_SUFFIXES)


def symbol_weights(d: Dossier) -> dict[str, float]:
    """How much a hunk naming a symbol is worth: the more lines a symbol's change has, the more
    it carries the design (the entries' salient symbols); test helpers count little."""
    weights: dict[str, float] = {}
    for s in d.symbols:
        if len(s.name) <= 2 or s.kind in ("step", "field"):
            continue
        weight = 1.0 + min(s.lines_changed, 200) / 20
        if s.in_test:
            weight = 0.5
        weights[s.name] = max(weights.get(s.name, 0.0), weight)
    return weights


def rank_hunks(pr: PullRequest, d: Dossier) -> list[Hunk]:
    """Every hunk of the PR, most salient first: hunks of the design facts and of the changed
    symbols that carry most lines, Python before kernel sources, new tests next; then other
    source, other files, deletion-only hunks and generated files. Within a tier the first picks
    are spread over files, so a huge PR shows more than one corner of itself."""
    facts = {f.path: f for f in d.files}
    weights = symbol_weights(d)
    source_names = _name_pattern(n for n in weights if weights[n] >= 1.0)
    test_names = _name_pattern([t.name for t in d.tests] + [s.name for s in d.symbols if s.in_test])
    design_at: dict[str, list[int]] = {}
    for x in d.design:
        if x.line is not None and x.pattern not in REMOVED_SIDE:  # lines of the new side
            design_at.setdefault(x.path, []).append(x.line)
    new_tests = {t.name for t in d.tests}
    changed = changed_line_sets(pr)
    hunks: list[Hunk] = []
    seen: set[str] = set()  # hunk bodies already met: a copied kernel is shown once
    for index, change in enumerate(pr.files or ()):
        if not change.patch:
            continue
        fact = facts.get(change.path)
        role = fact.role if fact else Role.SOURCE
        generated = (fact.generated if fact else False) or PurePosixPath(
            change.path
        ).name in LOCK_NAMES
        for order, raw in enumerate(split_hunks(change.patch)):
            text, folded = fold_moved(fold_imports(strip_license(raw)), changed)
            score = 0.0
            body = text.split("\n", 1)[-1]
            duplicate = body in seen and len(body) > 200
            seen.add(body)
            if generated or duplicate:
                tier = 5
            elif _deletion_only(text):
                tier = 4
            elif role is Role.TEST:
                found = _names_in(text, test_names)
                score = len(found) + 2.0 * len(found & new_tests)
                tier = 1
            elif role is Role.SOURCE:
                found = _names_in(text, source_names)
                span = _new_lines(text)
                design = sum(1 for line in design_at.get(change.path, ()) if line in span)
                score = sum(weights.get(n, 0.0) for n in found) + 5.0 * design
                tier = 0 if score else 2
            else:
                tier = 3
            shown = compact_hunk(text)
            hunks.append(Hunk(change.path, index, order, shown, tier, round(score, 2), folded))
    return _spread(hunks)


def _spread(hunks: list[Hunk]) -> list[Hunk]:
    """Sort by tier, Python before kernels, then round-robin over files by salience."""
    by_file: dict[tuple[int, int], list[Hunk]] = {}
    for h in hunks:
        by_file.setdefault((h.tier, h.index), []).append(h)
    rank: dict[int, int] = {}
    for group in by_file.values():
        group.sort(key=lambda h: (-h.hits, h.order))
        for position, h in enumerate(group):
            rank[id(h)] = position
    return sorted(
        hunks,
        key=lambda h: (h.tier, _is_kernel(h.path), rank[id(h)], -h.hits, h.index, h.order),
    )


_IDENTIFIER = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(\s*\()?")
_DEFINED = re.compile(r"\b(?:def|class|struct|async def)\s+(\w+)")
_QUOTED_KEY = re.compile(r"[\"']([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)[\"']")
_HYPHENATED = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w/-])")
_KEYWORDS = frozenset(
    """
    and as assert async await break class continue def del elif else except false finally for
    from global if import in is lambda none nonlocal not or pass raise return self true try while
    with yield int str float bool list dict tuple set len range print cls super isinstance
    """.split()  # noqa: SIM905
)
# what a changed line's name is worth in the index: what entries cite are the definitions,
# the environment variables and config keys, the types and errors, and the functions called
DEFINED_WEIGHT = 8.0
KEY_WEIGHT = 5.0
CALLED_WEIGHT = 3.0
TYPE_WEIGHT = 3.0
KERNEL_NAME_FACTOR = 0.3  # kernel sources repeat macros and types that entries rarely cite


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'")
_COMMENT = re.compile(r"(?:^|\s)(?:#|//)\s.*$")
_PROSE_LINE = re.compile(r"^\s*(?:#|//|/?\*|\"\"\"|''')")  # a comment or a docstring line
_CAMEL = re.compile(r"^_?[A-Z][a-z0-9]+[A-Z]\w*$|^_?[A-Z]\w*_\w*[a-z]\w*$")
# library calls a changed line makes everywhere (``logger.info``, ``np.asarray``): no design
_COMMON_ROOTS = frozenset({"np", "torch", "logger", "logging", "os", "re", "math", "json", "F"})
_COMMON_LEAVES = frozenset({"append", "extend", "get", "items", "keys", "values", "pop", "info"})


def _line_names(line: str) -> dict[str, float]:
    """The citable names of one changed line with their weight (see the constants above):
    code only (comments and the text of string literals are prose), quoted config keys."""
    found: dict[str, float] = {}
    if _PROSE_LINE.match(line):
        return found
    for key in _QUOTED_KEY.findall(line):
        found[key] = KEY_WEIGHT
    for key in _HYPHENATED.findall(line):
        found[key] = CALLED_WEIGHT  # a CI job, step or option name
    code = _COMMENT.sub("", _STRING.sub('""', line))
    defined = set(_DEFINED.findall(code))
    for raw, call in _IDENTIFIER.findall(code):
        name = raw.removeprefix("self.").removeprefix("cls.")
        if len(name) < 4 or name.lower() in _KEYWORDS:
            continue
        root, _, leaf = name.rpartition(".")
        if name in defined:
            weight = DEFINED_WEIGHT
        elif leaf.isupper() and "_" in leaf:
            weight = KEY_WEIGHT  # an environment variable or a constant
        elif _CAMEL.match(leaf):
            weight = TYPE_WEIGHT
        elif "_" in name or root:
            weight = CALLED_WEIGHT if call else 0.0
        else:
            continue
        if root.split(".", 1)[0] in _COMMON_ROOTS or leaf in _COMMON_LEAVES:
            weight = -0.5  # listed only when room is left
        found[name] = max(found.get(name, -1.0), weight)
    return found


def changed_names(hunks: Sequence[Hunk], shown: str, limit: int = 80) -> list[str]:
    """Identifiers of the changed lines of ``hunks`` (snake_case, CamelCase, UPPER_CASE or
    dotted; not keywords), leaving out those ``shown`` has: what a changed line defines, then
    environment variables and config keys, types and errors, functions called, then the other
    names (mostly local variables); the more changed lines name one, the earlier."""
    counts: dict[str, float] = {}
    for hunk in hunks:
        factor = KERNEL_NAME_FACTOR if _is_kernel(hunk.path) else 1.0
        header, _, _ = hunk.text.partition("\n")
        for name in _DEFINED.findall(header.rpartition("@@")[2]):  # the function changed
            counts[name] = counts.get(name, 0.0) + (1.0 + DEFINED_WEIGHT) * factor
        for line in hunk.text.splitlines()[1:]:
            if line[:1] not in "+-":
                continue
            for name, weight in _line_names(line[1:]).items():
                counts[name] = counts.get(name, 0.0) + (1.0 + weight) * factor
    ranked = sorted(counts, key=lambda n: (-counts[n], n))
    return [n for n in ranked if not _mentions(shown, n)][:limit]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None  # also `.name`


@dataclass(frozen=True)
class DiffSlice:
    text: str
    shown: int  # hunks shown (whole or clipped)
    total: int  # hunks in the PR
    names_only: tuple[str, ...]  # files with no hunk shown
    clipped: bool = False  # a hunk shown in part, or names of changed lines listed instead


SMALL_HUNK = 80  # tokens: a hunk this small is kept over the tail of a clipped one
NAMES_SHARE = 0.25  # of the diff budget, for the names of changed lines not shown
NAMES_LABEL = "not shown: "  # the names index (the locale's ``notation`` says what it holds)


def _folded_lines(hunk: Hunk) -> Hunk:
    """The moved lines folded out of a shown hunk, as a hunk of their own (for their names)."""
    return replace(hunk, text="\n".join(["@@", hunk.folded]), folded="")


def diff_slice(
    pr: PullRequest,
    d: Dossier,
    tokens: int,
    known: str = "",
    listed: Iterable[str] = (),
    test_tokens: int | None = None,
    ranked: Sequence[Hunk] | None = None,
) -> DiffSlice:
    """The most salient hunks that fit in ``tokens``, after an index of the citable names of
    the changed lines that did not fit (up to a quarter of the budget; names ``known`` from the
    facts are left out); files neither shown nor ``listed`` among the facts are named only.
    Test hunks take at most ``test_tokens`` of it (the new tests are facts already: their
    bodies are shown while they are cheap, their names when they are not). ``ranked``: the
    PR's :func:`rank_hunks`, when the caller has them already."""
    ranked = list(ranked) if ranked is not None else rank_hunks(pr, d)
    test_room = tokens if test_tokens is None else test_tokens
    tests_whole = sum(h.tokens for h in ranked if h.tier == 1)
    capped = tests_whole > test_room  # some test lines go to the names index
    whole = sum(h.tokens for h in ranked) - max(0, tests_whole - test_room)
    reserve = 0 if whole <= tokens - 40 and not capped else int(tokens * NAMES_SHARE)
    chosen: dict[tuple[int, int], str] = {}
    cut_off: list[Hunk] = []  # the lines of clipped hunks that were not shown
    used = tests_used = 0
    for position, hunk in enumerate(ranked):
        room = tokens - reserve - used - 40  # keep room for the names-only list
        if hunk.tier == 1:
            room = min(room, test_room - tests_used)
        before = used
        if hunk.tokens <= room:
            chosen[(hunk.index, hunk.order)] = hunk.text
            used += hunk.tokens
        elif hunk.tier <= 3 and room > 300:
            # a clipped hunk leaves room for the small salient and test hunks after it
            after = sum(
                h.tokens for h in ranked[position + 1 :] if h.tier <= 1 and h.tokens <= SMALL_HUNK
            )
            clipped = clip_to_tokens(hunk.text, max(300, room - after))
            chosen[(hunk.index, hunk.order)] = clipped
            used += estimate_tokens(clipped) + 1
            kept = clipped.count("\n")  # the header and the lines before the clip mark
            rest = "\n".join(["@@", *hunk.text.splitlines()[kept:]])
            cut_off.append(Hunk(hunk.path, hunk.index, hunk.order, rest, hunk.tier, hunk.hits))
        if hunk.tier == 1:
            tests_used += used - before
    blocks: list[str] = []
    named = set(listed)
    shown_files: set[int] = set()
    for index, change in enumerate(pr.files or ()):
        parts = [chosen[(i, o)] for (i, o) in sorted(chosen) if i == index]
        if parts:
            shown_files.add(index)
            counts = (
                "" if change.path in named else f" ({_counts(change.additions, change.deletions)})"
            )
            blocks.append(f"### {change.path}{counts}")  # a listed file's counts are in its fact
            blocks.extend(parts)
    shown = "\n".join(chosen.values())
    hidden = [h for h in ranked if h.tier <= 3 and (h.index, h.order) not in chosen] + cut_off
    hidden += [_folded_lines(h) for h in ranked if h.folded and (h.index, h.order) in chosen]
    names = changed_names(hidden, shown + "\n" + known)
    if names:
        listing = clip_tokens(", ".join(names), max(40, tokens - used - 60))
        blocks.insert(0, NAMES_LABEL + listing)
        used += estimate_tokens(listing) + 14
    unshown = [c for i, c in enumerate(pr.files or ()) if i not in shown_files]
    missing = tuple(f"{c.path} (+{c.additions}/−{c.deletions})" for c in unshown)
    unlisted = [m for m, c in zip(missing, unshown, strict=True) if c.path not in named]
    if unlisted:
        listing = clip_tokens(", ".join(unlisted), max(60, tokens - used))
        blocks.append("未展示 diff 的文件（仅列名称 / names only）: " + listing)
    return DiffSlice("\n".join(blocks), len(chosen), len(ranked), missing, bool(cut_off or names))


# -- discussion ---------------------------------------------------------------------------------


def _comment(c: Comment) -> str:
    who = f"@{c.author}" if c.author else "?"
    bot = " (bot)" if c.author_type == "Bot" else ""
    return f"{who}{bot}: {clip_text(' '.join((c.body or '').split()), MAX_COMMENT_CHARS)}"


def discussion_items(pr: PullRequest, d: Dossier) -> list[str]:
    """Reviews, threads and comments as text, changes-requested and unresolved first."""
    thread_ids = {h.provenance.ref.rsplit("#", 1)[-1]: h.id for h in d.threads}
    first: list[str] = []
    then: list[str] = []
    last: list[str] = []
    for review in pr.reviews or ():
        if not review.body.strip() and review.state != "CHANGES_REQUESTED":
            continue
        who = f"@{review.author}" if review.author else "?"
        body = clip_text(" ".join(review.body.split()), MAX_COMMENT_CHARS)
        text = f"[review {review.state}] {who}: {body}"
        (first if review.state == "CHANGES_REQUESTED" else last).append(text)
    for index, thread in enumerate(pr.review_threads or (), start=1):
        if not thread.comments:
            continue
        hid = thread_ids.get(str(index), "h?")
        state = "unresolved" if not thread.is_resolved else "resolved"
        where = f"{thread.path}:{thread.line}" if thread.path and thread.line else thread.path
        comments = " / ".join(_comment(c) for c in thread.comments[:MAX_THREAD_COMMENTS])
        text = f"[{hid} thread, {state}] {where or 'PR'} — {comments}"
        bot = thread.comments[0].author_type == "Bot"
        (first if not thread.is_resolved else (last if bot else then)).append(text)
    for comment in pr.comments or ():
        if (comment.body or "").strip():
            last.append("[comment] " + _comment(comment))
    return first + then + last


def fit_items(items: Sequence[str], tokens: int) -> tuple[str, int]:
    """Items in order while they fit; returns the text and how many were left out."""
    out: list[str] = []
    used = 0
    for item in items:
        cost = estimate_tokens(item) + 1
        if used + cost > tokens:
            continue  # a later, shorter item may still fit
        out.append(item)
        used += cost
    return "\n".join(out), len(items) - len(out)


# a template stamp line: ``- vLLM version: v0.19.1``, ``- vLLM main: https://…/commit/<ref>``
_BOILERPLATE = re.compile(
    r"^[-*\s]*(?:[\w .]{1,30}:\s*)?(?:v\d+(?:\.\d+)+\S*|https?://\S+/commit/\S+)\s*$"
)


def _without_stamps(lines: Sequence[str]) -> list[str]:
    """Non-blank lines without template stamps (a stamp's label on the line before too)."""
    kept: list[str] = []
    for line in lines:
        if _BOILERPLATE.match(line):
            if kept and kept[-1].rstrip().endswith(":") and len(kept[-1]) <= 40:
                kept.pop()
        elif line.strip():
            kept.append(line)
    return kept


_IMAGE = re.compile(r"<img\b[^>]*>|!\[[^\]]*\]\([^)\s]*\)", re.I)
_GITHUB_REF = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/(?:pull|issues)/(\d+)\S*")
_URL = re.compile(r"https?://([\w.-]+)[^\s)>\]]*")


def without_media(text: str) -> str:
    """Body text with images as ``[image]``, a GitHub PR or issue link as ``owner/repo#N`` and
    any other link as its host: an entry cites no link (the instructions forbid them), and an
    image tag or a long URL costs tens of tokens."""
    text = _IMAGE.sub("[image]", text)
    text = _GITHUB_REF.sub(r"\1#\2", text)
    return _URL.sub(r"<\1 link>", text)


def body_sections(pr: PullRequest, d: Dossier) -> list[tuple[str, str]]:
    """Every section of the PR body with content under its heading, recognised or not (the
    text before the first heading too), HTML comments, the trailing checklist and template
    stamp lines (a version or a commit link) removed; a recognised section is there even when
    empty, its label carrying its fact id and ``(empty)``. Then the linked issues."""
    facts = {b.heading: b for b in d.sections}
    parts: list[tuple[str, list[str]]] = [("", [])]
    for line in visible_lines(pr.body):
        heading = heading_of(line.text)
        if heading is not None:
            parts.append((heading, []))
        else:
            parts[-1][1].append(line.text)
    out: list[tuple[str, str]] = []
    for heading, body in parts:
        text = without_media("\n".join(_without_stamps(body))).strip()
        fact = facts.get(heading)
        if fact is None:
            if text:
                out.append((f"[{heading or '…'}]", text))
            continue
        # a recognised section is its fact: its id and whether it is empty are in the label
        label = f"[{fact.id} {heading}]{' (empty)' if fact.empty else ''}"
        out.append((label, text or ("" if fact.empty else "(template lines only)")))
    for issue in pr.linked_issues or ():
        about = clip_text(" ".join((issue.body or "").split()), MAX_ISSUE_BODY_CHARS)
        out.append((f"[issue #{issue.number}] {issue.title}", about))
    return out


def described(d: Dossier, sections: Sequence[tuple[str, str]]) -> frozenset[str]:
    """The ids of the section facts that head a block of ``sections`` (their fact lines are
    left out of the facts: the description says the same)."""
    labels = {label.split(" ", 1)[0].removeprefix("[") for label, _ in sections}
    return frozenset(b.id for b in d.sections if b.id in labels)


def fit_sections(sections: Sequence[tuple[str, str]], tokens: int) -> str:
    """Every section, each clipped to a fair share of ``tokens`` (a short section leaves its
    unused share to the long ones), so no section is lost to the one before it."""
    if not sections:
        return ""
    need = [estimate_tokens(text) + estimate_tokens(label) + 2 for label, text in sections]
    grant = [0] * len(sections)
    left = tokens
    open_ = list(range(len(sections)))
    while open_ and left > 0:
        share = left // len(open_)
        done = [i for i in open_ if need[i] - grant[i] <= share]
        if not done:
            for i in open_:
                grant[i] += share
            break
        for i in done:
            left -= need[i] - grant[i]
            grant[i] = need[i]
        open_ = [i for i in open_ if i not in done]
    blocks = []
    for (label, text), room in zip(sections, grant, strict=True):
        body = text if estimate_tokens(text) + estimate_tokens(label) + 2 <= room else None
        if body is None:
            body = clip_with_spans(text, max(0, room - estimate_tokens(label) - 2))
        blocks.append(f"{label}\n{body}" if body.strip() else label)
    return "\n".join(blocks)


_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")
SPANS_SHARE = 0.4  # of a clipped section's room, for the code spans of its cut-off part


def clip_with_spans(text: str, tokens: int) -> str:
    """``text`` clipped to ``tokens``, its cut-off part's code spans (what the author put in
    backticks: the names a description is about) listed after the cut when room allows."""
    spans = list(dict.fromkeys(_CODE_SPAN.findall(text)))
    if not spans:
        return clip_tokens(text, tokens)
    listing_room = int(tokens * SPANS_SHARE)
    head = clip_tokens(text, tokens - listing_room)
    rest = [f"`{x}`" for x in spans if f"`{x}`" not in head]
    if not rest:
        return clip_tokens(text, tokens)
    listing = clip_tokens(" ".join(rest), listing_room - 8)
    return f"{head} (其后的代码名 / later code names: {listing})" if listing else head


def clip_tokens(text: str, tokens: int) -> str:
    """The head of ``text`` within ``tokens``, cut inside a line when need be (whitespace
    folded), marked when cut."""
    flat = " ".join(text.split())
    if estimate_tokens(flat) <= tokens:
        return flat
    low, high = 0, len(flat)
    while low < high:  # the longest prefix that fits, found by bisection
        middle = (low + high + 1) // 2
        if estimate_tokens(flat[:middle]) + 2 <= tokens:
            low = middle
        else:
            high = middle - 1
    return flat[:low].rstrip() + "…" if low else ""


def body_text(pr: PullRequest, d: Dossier) -> str:
    """The whole body by section (see :func:`body_sections`), unclipped."""
    return "\n".join(f"{label}\n{text}" for label, text in body_sections(pr, d))
