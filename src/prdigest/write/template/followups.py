"""Follow-ups and caveats: what a careful reader would want pointed out, most urgent first."""

from __future__ import annotations

from prdigest.core.models import Dossier, Role, SignalFact, SignalKind
from prdigest.write.template.phrases import (
    Cited,
    Phrases,
    code,
    display_names,
    file_name,
    quote,
)

FOLLOWUP_ORDER = (
    SignalKind.BREAKING_CHANGE,
    SignalKind.DEFAULT_CHANGED,
    SignalKind.STALE_BODY,
    SignalKind.EMPTY_TEST_RESULT,
    SignalKind.LINT_ONLY_TESTING,
    SignalKind.TESTS_DELETED,
    SignalKind.SKIP_ADDED,  # a test switched off is coverage lost, like one deleted
    SignalKind.NO_TESTS,
    SignalKind.TODO,
    SignalKind.FOLLOWUP_PROMISED,
    SignalKind.FAILED_CHECKS,
    SignalKind.MAGIC_NUMBER,
    SignalKind.SILENT_CLAMP,
    SignalKind.SWALLOWED_EXCEPTION,
    SignalKind.HUGE_DIFF,
    SignalKind.BROKEN_PATCH,
)


def weighed_followups(d: Dossier, p: Phrases, cited: Cited, limit: int) -> list[tuple[str, bool]]:
    """The follow-ups, most urgent first, each with whether it is weak: a bare TODO marker
    (no owner or topic in brackets) is common and rarely urgent, so a paragraph says it only
    when there is room after its first three focus points."""
    items: list[tuple[str, bool]] = []
    names = display_names(d.files)
    kinds = {s.kind for s in d.signals}
    for kind in FOLLOWUP_ORDER:
        found = [s for s in d.signals if s.kind is kind]
        if not found or (kind is SignalKind.NO_TESTS and SignalKind.TESTS_DELETED in kinds):
            continue
        weak = kind is SignalKind.TODO and not found[0].owner
        items.append((_followup_text(kind, found, d, p, cited, names), weak))
        if len(items) >= limit:
            break
    return items


def render_followups(items: list[str], p: Phrases) -> str:
    if not items:
        return ""
    return p.get("followup", "lead") + p.word("followup", "sep").join(items) + p.stop


def _detail_name(signal: SignalFact, names: dict[str, str], cited: Cited) -> str:
    """A signal's code name in backticks, never clipped (a clipped name is not in the record)."""
    if signal.detail == signal.path:  # a whole file: its short display name
        return file_name(signal.detail, names, cited)
    return cited.name(signal.detail, signal.path or "", signal.line)


def _followup_text(
    kind: SignalKind,
    found: list[SignalFact],
    d: Dossier,
    p: Phrases,
    cited: Cited,
    names: dict[str, str],
) -> str:
    first = found[0]
    cited.fact(first.id)
    file_ref = file_name(first.path, names, cited) if first.path else ""
    if kind is SignalKind.NO_TESTS:
        lines = d.source_lines_changed()
        relaid = sum(f.relaid for f in d.files if f.role is Role.SOURCE)
        if relaid:  # git counts those lines too: the figure says what it leaves out
            return p.get("followup", "no_tests_relaid", lines=lines, relaid=relaid)
        return p.get("followup", "no_tests", lines=lines)
    if kind in (SignalKind.EMPTY_TEST_RESULT, SignalKind.LINT_ONLY_TESTING):
        return p.get("followup", kind.value, detail=quote(first.detail.strip(" ?？:：#*_"), 60))
    if kind is SignalKind.BREAKING_CHANGE:
        return p.get("followup", kind.value, detail=quote(first.detail, 120))
    if kind is SignalKind.TESTS_DELETED and first.provenance.kind == "commit":
        return p.get(
            "followup",
            "tests_dropped",
            sha=cited.name(first.provenance.ref),
            detail=quote(first.detail, 80),
        )
    if kind is SignalKind.FOLLOWUP_PROMISED:
        return p.get(
            "followup", "followup_promised", who=p.who(first.owner), detail=quote(first.detail, 90)
        )
    if kind is SignalKind.FAILED_CHECKS:
        return p.get("followup", kind.value, detail=cited.name(first.detail.split(", ")[0]))
    if kind in (SignalKind.HUGE_DIFF, SignalKind.BROKEN_PATCH):
        return p.get("followup", kind.value, detail=first.detail)
    if kind is SignalKind.MAGIC_NUMBER:
        shown = [
            cited.name(s.detail, s.path or "", s.line)
            + (f"{p.w.paren[0]}= {s.value}{p.w.paren[1]}" if s.value else "")
            for s in found[:2]
        ]
        return p.get("followup", kind.value, detail=p.listing(shown))
    if kind is SignalKind.DEFAULT_CHANGED and first.value:
        before, after = first.value.split(" → ")
        detail = cited.name(first.detail, first.path or "", first.line)
        if first.parameter_of:  # callers that leave it out change, not deployments
            function = cited.name(first.parameter_of, first.path or "", None)
            return p.get(
                "followup",
                "default_changed_parameter",
                detail=detail,
                function=function,
                before=code(before),
                after=code(after),
            )
        if first.condition:  # a default set under an `if`: only that case changes
            condition = cited.name(first.condition, first.path or "", first.line)
            return p.get(
                "followup",
                "default_changed_when",
                detail=detail,
                before=code(before),
                after=code(after),
                condition=condition,
            )
        return p.get("followup", kind.value, detail=detail, before=code(before), after=code(after))
    if kind is SignalKind.TODO:
        marker = cited.name(first.detail.split(":")[0], first.path or "", first.line)
        return p.get("followup", "todo", detail=marker, file=file_ref)
    details = p.listing([_detail_name(s, names, cited) for s in found[:2]])
    return p.get("followup", kind.value, detail=details, file=file_ref)
