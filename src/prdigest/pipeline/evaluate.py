"""``prdigest eval triage``: triage's verdicts on labelled PRs against the labels.

The labelled PRs' records come from the store (import or sync them first); each is analyzed
with its repository's preset and assessed as a digest would. With ``cv`` the fitted model is
judged the honest way: k-fold cross-validation over days, the model fitted (and its thresholds
tuned) on the other days only — this needs the ``fit`` extra.

Daily picks count on the days whose every merged PR is labelled (a "complete" day).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.errors import NotFoundError
from prdigest.core.models import Dossier, Level
from prdigest.core.presets import Preset, load_preset
from prdigest.core.window import DEFAULT_TZ, day_window
from prdigest.store import Store
from prdigest.triage import assess, pickable
from prdigest.triage.evaluate import Judged, TriageReport, report
from prdigest.triage.features import features
from prdigest.triage.fit import (
    Sample,
    cross_validated,
    fit_boundaries,
    folds_by_day,
    model_of,
    tune_floor,
    tune_threshold,
)
from prdigest.triage.labels import Label
from prdigest.triage.model import TriageModel, bundled_model
from prdigest.triage.rules import lesson_in_code, review_prior, review_values, ruled

TOP = 8


@dataclass(frozen=True)
class Labelled:
    """A labelled PR: its dossier, its preset's bots, and the model's view of it."""

    dossier: Dossier
    sample: Sample
    bots: tuple[str, ...]
    ruled: bool  # decided by a rule (bot churn, ownership files), not the model

    def judge(self, model: TriageModel) -> tuple[Sample, Level, float]:
        assessment = assess(self.dossier, bots=self.bots, model=model)
        return self.sample, assessment.level, assessment.score


def _presets(labels: Sequence[Label], preset_path: Path | None) -> dict[str, Preset]:
    return {repo: load_preset(repo, preset_path) for repo in {x.repo for x in labels}}


def labelled(
    store: Store, labels: Sequence[Label], preset_path: Path | None = None
) -> list[Labelled]:
    presets = _presets(labels, preset_path)
    missing = [
        f"{x.repo}#{x.number}" for x in labels if store.records.find(x.repo, x.number) is None
    ]
    if missing:
        raise NotFoundError(
            f"{len(missing)} labelled PR(s) are not in the store, e.g. {', '.join(missing[:3])}: "
            "import or sync their records first (for the development set: "
            "scripts/build_dev_records.py, then prdigest import)"
        )
    out = []
    for label in labels:
        preset = presets[label.repo]
        dossier = analyze(store.records.get(label.repo, label.number), preset)
        prior = review_prior(review_values(dossier))
        sample = Sample(label, features(dossier), lesson_in_code(dossier), prior, label.weight)
        rule = ruled(dossier, preset.bots) is not None
        out.append(Labelled(dossier, sample, preset.bots, rule))
    return out


def complete_days(store: Store, labels: Sequence[Label], tz: str = DEFAULT_TZ) -> set[str]:
    """Days of a repository on which every merged PR in the store is labelled."""
    by_day: dict[tuple[str, str], set[int]] = {}
    for x in labels:
        by_day.setdefault((x.repo, x.day), set()).add(x.number)
    days = set()
    for (repo, day), numbers in by_day.items():
        window = day_window(day, tz)
        merged = {r.number for r in store.records.in_window(repo, window.since, window.until)}
        if merged and merged <= numbers:
            days.add(day)
    return days


def daily_picks(
    judged: Sequence[tuple[Sample, Level, float]], floor: float, top: int = TOP
) -> set[int]:
    """``id`` of the samples that would get a paragraph, day by day (as :func:`select`)."""
    chosen: set[int] = set()
    days: dict[str, list[tuple[Sample, Level, float]]] = {}
    for item in judged:
        days.setdefault(item[0].label.day, []).append(item)
    for items in days.values():
        eligible = [x for x in items if pickable(x[1], x[2], floor)]
        eligible.sort(key=lambda x: (x[1].rank, -x[2], -x[0].label.number))
        chosen |= {id(x[0]) for x in eligible[:top]}
    return chosen


def _judged(triples: Sequence[tuple[Sample, Level, float]], floor: float) -> list[Judged]:
    picked = daily_picks(triples, floor)
    return [Judged(s.label, lv, sc, id(s) in picked) for s, lv, sc in triples]


def evaluate(
    store: Store,
    labels: Sequence[Label],
    *,
    model: TriageModel | None = None,
    preset_path: Path | None = None,
) -> TriageReport:
    """The figures of ``model`` (default: the bundled one) on the labelled PRs."""
    model = model or bundled_model()
    triples = [x.judge(model) for x in labelled(store, labels, preset_path)]
    return report(_judged(triples, model.pick_floor), complete_days(store, labels))


def fit_and_tune(
    samples: Sequence[Sample], names: Sequence[str], days: set[str], c: float
) -> TriageModel:
    """A model fitted on ``samples``, its threshold and floor tuned by an inner cross-validation."""
    inner = cross_validated(samples, names, c)
    threshold = tune_threshold(samples, inner)
    floor = tune_floor(samples, inner, threshold, days, daily_picks)
    return model_of(fit_boundaries(samples, names, c), names, threshold, floor)


def cross_validate(
    store: Store,
    labels: Sequence[Label],
    *,
    names: Sequence[str],
    c: float,
    preset_path: Path | None = None,
) -> TriageReport:
    """k-fold over days: fit and tune without a fold, judge the fold; every fold in turn."""
    items = labelled(store, labels, preset_path)
    days = complete_days(store, labels)
    judged: list[Judged] = []
    modelled = [x.sample for x in items if not x.ruled]
    for held in folds_by_day(modelled):
        train = [s for s in modelled if s.label.day not in held]
        model = fit_and_tune(train, names, days - held, c)
        triples = [x.judge(model) for x in items if x.sample.label.day in held]
        judged += _judged(triples, model.pick_floor)
    return report(judged, days)
