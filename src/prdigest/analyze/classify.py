"""Kind of change and areas of the repository, from title tags, wording and paths.

Kind, first rule that applies: a title tag the preset maps to a kind; a revert title; words in
the title ("fix", "speed up", "refactor", …); the roles of the changed files (all docs → docs);
otherwise ``feature``. A code kind (fix, perf, feature, refactor) from the title must be
corroborated by the diff: without a source file changed the kind follows the files (a
``[BugFix]`` of a CI script is CI work), and a fix whose source change only adds logging is a
chore. So a word in a title cannot make a PR more than its diff is. The other way round, a
CI, test or docs tag over a diff that is at least half runtime source yields to the code kind
the title also states (a tag or a word): "[CI] fix nightly test" that changes `fused_moe.py`
is a fix.

Areas: every changed file votes for the most specific area whose globs match it (the glob
with the longest literal prefix), weighted by its changed lines and by its role (source counts
fully, docs and config less); title tags add a vote of their own. Test files vote only in a PR
that changes nothing else: a fix whose test is larger than its code stays a fix of its area.
Areas with under 10% of the votes are dropped unless a title tag named them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.core.models import AreaRef, FileFact, Kind, Role
from prdigest.core.presets import AreaRule, Preset

_TITLE_WORDS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.REVERT, re.compile(r"^revert\b", re.I)),
    (
        Kind.FIX,
        re.compile(
            r"\b(?:fix(?:es|ed)?|bug|crash|race|leak|hang|deadlock|regression|"
            r"incorrect|wrong|broken|avoid|prevent|handle)\b",
            re.I,
        ),
    ),
    (
        Kind.PERF,
        re.compile(
            r"\b(?:perf|speed ?up|faster|optimi[sz]e|accelerat\w*|fuse|fused|"
            r"overlap|throughput|latency|async(?:hronous)?)\b",
            re.I,
        ),
    ),
    (
        Kind.REFACTOR,
        re.compile(
            r"\b(?:refactor|clean ?up|move|rename|simplify|restructure|"
            r"deduplicate|split)\b",
            re.I,
        ),
    ),
    (Kind.DEPS, re.compile(r"\b(?:bump|upgrade|pin|update)\b.*\b(?:to|version|v?\d+\.\d+)", re.I)),
    (Kind.DOCS, re.compile(r"\b(?:docs?|documentation|readme|typo)\b", re.I)),
    (Kind.TEST, re.compile(r"\b(?:tests?|unit ?test|e2e)\b", re.I)),
    (Kind.CI, re.compile(r"\b(?:ci|buildkite|pipeline|workflow|docker image)\b", re.I)),
)

ROLE_VOTE = {
    Role.SOURCE: 1.0,
    Role.TEST: 0.5,
    Role.BUILD: 0.6,
    Role.CI: 0.6,
    Role.DEPS: 0.5,
    Role.CONFIG: 0.4,
    Role.DOCS: 0.3,
}
TAG_VOTE_SHARE = 0.25
MIN_SHARE = 0.10


CODE_KINDS = (Kind.FIX, Kind.PERF, Kind.FEATURE, Kind.REFACTOR)
_FILE_KINDS = (
    (Role.DOCS, Kind.DOCS),
    (Role.CI, Kind.CI),
    (Role.BUILD, Kind.CI),
    (Role.TEST, Kind.TEST),
    (Role.DEPS, Kind.DEPS),
    (Role.CONFIG, Kind.CHORE),
)
_LOGGING_LINE = re.compile(
    r"^\s*(?:#|$|(?:self\.)?_?log(?:ger)?\.\w+\(|logging\.\w+\(|print\(|warnings\.warn\(|"
    r"[)\]}],?\s*$|f?[\"'].*[\"'],?\)?\s*$)"
)


def classify_kind(
    tags: Sequence[str],
    subject: str,
    files: Sequence[FileFact],
    preset: Preset,
    added_source: Sequence[str] | None = None,
) -> tuple[Kind, str]:
    """(kind, evidence) for a PR; ``added_source`` are its added source lines, when known."""
    kind, evidence = _stated_kind(tags, subject, files, preset)
    source = [f for f in files if f.role is Role.SOURCE and not f.generated]
    if kind in _UPGRADABLE and _source_dominant(files, source):
        stated = _title_kind(tags, subject, preset, CODE_KINDS)
        if stated is not None:
            return stated[0], f"{evidence}, but runtime source changed: {stated[1]}"
    if kind not in CODE_KINDS:
        return kind, evidence
    if files and not source:
        lines: dict[Kind, int] = {}
        for f in files:
            for role, by_file in _FILE_KINDS:
                if f.role is role:
                    lines[by_file] = lines.get(by_file, 0) + f.additions + f.deletions + 1
        by_files = max(lines, key=lambda k: lines[k]) if lines else Kind.CHORE
        return by_files, f"{evidence}, but no source file changed"
    if kind is Kind.FIX and added_source and all(_LOGGING_LINE.match(x) for x in added_source):
        return Kind.CHORE, f"{evidence}, but the source change only adds logging"
    if kind is Kind.FIX and not _changes_existing_code(files):
        return Kind.FEATURE, f"{evidence}, but the diff only adds code"
    return kind, evidence


# a CI, test or docs tag over a diff that is mostly runtime source: the code kind the title
# also states wins ("[CI] fix nightly test" that changes `fused_moe.py` is a fix)
_UPGRADABLE = (Kind.CI, Kind.TEST, Kind.DOCS)


def _source_dominant(files: Sequence[FileFact], source: Sequence[FileFact]) -> bool:
    """Whether runtime source makes up at least half of the changed lines."""
    own = sum(f.additions + f.deletions for f in source)
    return own > 0 and 2 * own >= sum(f.additions + f.deletions for f in files if not f.generated)


def _title_kind(
    tags: Sequence[str], subject: str, preset: Preset, kinds: Sequence[Kind] | None = None
) -> tuple[Kind, str] | None:
    """The first kind a title tag, then a title word, states (of ``kinds`` when given)."""
    for tag in tags:
        rule = preset.tag_rule(tag)
        if rule is not None and rule.kind is not None and (kinds is None or rule.kind in kinds):
            return rule.kind, f"title tag [{tag}]"
    for kind, pattern in _TITLE_WORDS:
        match = pattern.search(subject) if kinds is None or kind in kinds else None
        if match:
            return kind, f"title word '{match.group(0)}'"
    return None


def _changes_existing_code(files: Sequence[FileFact]) -> bool:
    """What a fix looks like in a diff: existing source changed (a guard or a reset may only
    add lines to it), or tests touched. A title that says "fix" over new files only is not
    believed (a word cannot lift a PR)."""
    return any(
        (
            f.role is Role.SOURCE
            and f.status != "added"
            and not f.generated
            and f.additions + f.deletions
        )
        or f.role is Role.TEST
        for f in files
    )


def _stated_kind(
    tags: Sequence[str], subject: str, files: Sequence[FileFact], preset: Preset
) -> tuple[Kind, str]:
    """The kind the title says (tag, then wording), else the files' roles, else feature."""
    stated = _title_kind(tags, subject, preset)
    if stated is not None:
        return stated
    roles = {f.role for f in files}
    for role, kind in (
        (Role.DOCS, Kind.DOCS),
        (Role.CI, Kind.CI),
        (Role.TEST, Kind.TEST),
        (Role.DEPS, Kind.DEPS),
    ):
        if roles == {role}:
            return kind, f"only {role.value} files"
    return Kind.FEATURE, "default"


def _specificity(rule: AreaRule, path: str) -> int:
    from prdigest.core.presets import glob_to_regex

    best = -1
    for pattern in rule.paths:
        if glob_to_regex(pattern).match(path):
            literal = re.split(r"[*?]", pattern, maxsplit=1)[0]
            best = max(best, len(literal))
    return best


def best_area(path: str, preset: Preset) -> AreaRule | None:
    """The most specific area a path belongs to (memoised per preset: paths recur)."""
    seen = preset.best_areas_seen
    if path not in seen:
        candidates = preset.areas_of(path)
        seen[path] = (
            max(candidates, key=lambda rule: (_specificity(rule, path), -preset.area.index(rule)))
            if candidates
            else None
        )
    return seen[path]


def classify_areas(tags: Sequence[str], files: Sequence[FileFact], preset: Preset) -> list[AreaRef]:
    votes: dict[str, float] = {}
    evidence: dict[str, str] = {}
    tests_vote = all(f.role is Role.TEST for f in files)
    for fact in files:
        rule = best_area(fact.path, preset)
        if rule is None or (fact.role is Role.TEST and not tests_vote):
            continue
        weight = max(1, fact.additions + fact.deletions) * ROLE_VOTE[fact.role]
        if fact.generated:
            weight *= 0.1
        votes[rule.id] = votes.get(rule.id, 0.0) + weight
        evidence.setdefault(rule.id, fact.path)
    file_total = sum(votes.values())
    tagged: set[str] = set()
    for tag in tags:
        rules = preset.areas_for_tag(tag)
        tag_rule = preset.tag_rule(tag)
        if tag_rule is not None and tag_rule.area:
            named = preset.area_by_id(tag_rule.area)
            rules = rules + ([named] if named and named not in rules else [])
        for rule in rules:
            tagged.add(rule.id)
            votes[rule.id] = votes.get(rule.id, 0.0) + max(file_total, 1.0) * TAG_VOTE_SHARE
            evidence.setdefault(rule.id, f"[{tag}]")
    total = sum(votes.values()) or 1.0
    refs = []
    for area_id, vote in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
        share = vote / total
        if share < MIN_SHARE and area_id not in tagged:
            continue
        rule = preset.area_by_id(area_id)
        if rule is None:
            continue
        refs.append(
            AreaRef(
                id=rule.id,
                readers=bool(rule.audience),
                core=rule.core,
                weight=rule.weight,
                share=round(share, 3),
                evidence=evidence[area_id],
            )
        )
    return refs
