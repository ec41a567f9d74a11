"""Human-readable view of one PR's dossier and assessment (``prdigest explain``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prdigest.core.models import AreaText, Assessment, Dossier, Entry


def _section(title: str, rows: list[str]) -> list[str]:
    if not rows:
        return []
    return ["", f"{title}:"] + [f"  {row}" for row in rows]


def _where(path: str | None, line: int | None) -> str:
    if not path:
        return ""
    return f"{path}:{line}" if line else path


def _name(area: str, areas: Mapping[str, AreaText]) -> str:
    text = areas.get(area)
    return text.name if text else area


def _audience(a: Assessment, areas: Mapping[str, AreaText]) -> str:
    text = areas.get(a.audience) if a.audience else None
    return text.audience if text and text.audience else "-"


def _thread_state(resolved: bool, outdated: bool) -> str:
    return "resolved" if resolved else "outdated" if outdated else "OPEN"


def entry_rows(entries: Sequence[Entry]) -> list[str]:
    """The stored entries, newest first: writer, whether it fell back, and the findings."""
    rows: list[str] = []
    for e in entries:
        state = "template fallback" if e.fallback else "used"
        rows.append(f"{e.writer} ({e.lang}, {state}): {e.title}")
        rows += [f"  finding: {f}" for f in e.findings]
    return rows


def explain_text(
    d: Dossier, a: Assessment, areas: Mapping[str, AreaText], entries: Sequence[Entry] = ()
) -> str:
    """``areas``: the name and readers of each area id, in the language of the view."""
    lines = [
        f"{d.ref}  {d.title}",
        f"level: {a.level.value}   score: {a.score}   kind: {d.kind.value} ({d.kind_evidence})",
        f"coverage: diff {d.coverage.diff.value}, "
        f"discussion {'yes' if d.coverage.discussion else 'no'}, "
        f"checks {'yes' if d.coverage.checks else 'no'}"
        + (f" ({d.coverage.note})" if d.coverage.note else ""),
        f"audience: {_audience(a, areas)}",
    ]
    lines += _section("reasons", [f"{r.weight:+5.2f}  {r.code}: {r.detail}" for r in a.reasons])
    lines += _section(
        "areas",
        [f"{x.id} {_name(x.id, areas)} {x.share:.0%} ({x.evidence})" for x in d.areas],
    )
    lines += _section(
        "files",
        [
            f"[{f.id}] {f.role.value:6} {f.status:8} +{f.additions}/-{f.deletions} {f.path}"
            for f in d.files
        ],
    )
    lines += _section(
        "symbols",
        [
            f"[{s.id}] {s.change:8} {s.kind:8} {s.name}  {_where(s.path, s.line)}"
            f"  ({s.lines_changed} lines, {s.via})"
            for s in d.symbols[:40]
        ],
    )
    lines += _section(
        "tests added", [f"[{t.id}] {t.name}  {_where(t.path, t.line)}" for t in d.tests]
    )
    lines += _section(
        "test techniques", [f"[{q.id}] {q.label}  {_where(q.path, q.line)}" for q in d.techniques]
    )
    lines += _section(
        "body sections",
        [f"[{s.id}] {s.heading}{' (empty)' if s.empty else ''}" for s in d.sections],
    )
    lines += _section("claims", [f"[{c.id}] {c.figure}  {c.text}" for c in d.claims])
    lines += _section(
        "reviewers",
        [
            f"[{r.id}] {r.login}{' (bot)' if r.is_bot else ''}: {' → '.join(r.states)}"
            for r in d.reviewers
        ],
    )
    lines += _section(
        "threads",
        [
            f"[{t.id}] {_where(t.path, t.line) or 'PR'} by {t.started_by}"
            f"{' (bot)' if t.started_by_bot else ''}, {t.comment_count} comment(s), "
            f"{_thread_state(t.is_resolved, t.is_outdated)}: {t.excerpt}"
            for t in d.threads
        ],
    )
    lines += _section(
        "remarks",
        [f"[{m.id}] {m.author}{' (bot)' if m.is_bot else ''}: {m.excerpt}" for m in d.remarks],
    )
    lines += _section(
        "commits",
        [
            f"[{c.id}] {c.sha[:7]} {c.headline}{'  (after review)' if c.after_review else ''}"
            for c in d.commits
        ],
    )
    lines += _section(
        "issues",
        [
            f"[{i.id}] #{i.number} {'closes' if i.closing else 'mentions'}"
            f"{' ' + i.title if i.title else ''}"
            for i in d.issues
        ],
    )
    lines += _section(
        "signals",
        [f"[{s.id}] {s.kind.value}: {s.detail}  {_where(s.path, s.line)}" for s in d.signals],
    )
    lines += _section("stored entries", entry_rows(entries))
    return "\n".join(lines)
