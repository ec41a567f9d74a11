"""How triage agrees with an expert: agreement on levels, must-read recall, the day's picks.

Figures (``prdigest eval triage``, ``bench/bench_triage.py``):

* **exact** — share of PRs whose level equals the label's;
* **within one** — share within one step on the reading scale, where ``must_read`` is 3,
  ``worth_reading`` 2, ``skim`` 1, and ``skip`` and ``list_only`` are both 0 (neither is read);
* **must-read recall / precision** — of the labelled must-reads, the share triage calls
  must-read; of triage's must-reads, the share the label agrees with;
* **daily picks** — over the days whose every PR is labelled, the PRs triage gives a paragraph
  against the label's picks: precision and recall;
* the **confusion matrix** of label (rows) against triage (columns).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from prdigest.core.models import Level
from prdigest.triage.labels import Label

SCALE = {
    Level.MUST_READ: 3,
    Level.WORTH_READING: 2,
    Level.SKIM: 1,
    Level.SKIP: 0,
    Level.LIST_ONLY: 0,
}


@dataclass(frozen=True)
class Judged:
    """One labelled PR and what triage made of it."""

    label: Label
    level: Level
    score: float
    picked: bool  # triage gave it a paragraph


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class TriageReport:
    count: int
    exact: float | None
    within_one: float | None
    must_recall: float | None
    must_precision: float | None
    pick_precision: float | None
    pick_recall: float | None
    complete_days: int
    confusion: dict[tuple[Level, Level], int]

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "exact": self.exact,
            "within_one": self.within_one,
            "must_read_recall": self.must_recall,
            "must_read_precision": self.must_precision,
            "pick_precision": self.pick_precision,
            "pick_recall": self.pick_recall,
            "complete_days": self.complete_days,
            "confusion": {
                f"{label.value}->{judged.value}": n
                for (label, judged), n in sorted(self.confusion.items())
            },
        }


def report(judged: Sequence[Judged], complete_days: Iterable[str] = ()) -> TriageReport:
    """The figures of the module docstring; picks count only on ``complete_days``."""
    days = set(complete_days)
    confusion = Counter((j.label.level, j.level) for j in judged)
    must = [j for j in judged if j.label.level is Level.MUST_READ]
    called = [j for j in judged if j.level is Level.MUST_READ]
    on_days = [j for j in judged if j.label.day in days]
    picked = [j for j in on_days if j.picked]
    wanted = [j for j in on_days if j.label.pick is not None]
    both = [j for j in picked if j.label.pick is not None]
    return TriageReport(
        count=len(judged),
        exact=_ratio(sum(1 for j in judged if j.level is j.label.level), len(judged)),
        within_one=_ratio(
            sum(1 for j in judged if abs(SCALE[j.level] - SCALE[j.label.level]) <= 1),
            len(judged),
        ),
        must_recall=_ratio(sum(1 for j in must if j.level is Level.MUST_READ), len(must)),
        must_precision=_ratio(
            sum(1 for j in called if j.label.level is Level.MUST_READ), len(called)
        ),
        pick_precision=_ratio(len(both), len(picked)),
        pick_recall=_ratio(len(both), len(wanted)),
        complete_days=len(days),
        confusion=dict(confusion),
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def format_report(result: TriageReport, title: str = "") -> str:
    levels = list(Level)
    corner = "label / triage"
    head = f"{corner:>15} " + " ".join(f"{lv.value[:10]:>10}" for lv in levels)
    rows = [title] if title else []
    rows += [
        f"PRs {result.count} · exact {_pct(result.exact)} · within one {_pct(result.within_one)}"
        f" · must-read recall {_pct(result.must_recall)} (precision {_pct(result.must_precision)})",
        f"daily picks over {result.complete_days} fully labelled day(s): precision "
        f"{_pct(result.pick_precision)} · recall {_pct(result.pick_recall)}",
        "",
        head,
    ]
    for label in levels:
        cells = " ".join(f"{result.confusion.get((label, lv), 0):>10}" for lv in levels)
        rows.append(f"{label.value:>15} {cells}")
    return "\n".join(rows)
