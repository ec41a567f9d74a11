"""Fitting the verdict model offline: scikit-learn logistic regressions, one per level boundary.

Used by ``scripts/fit_triage.py`` (which writes ``model.json``) and by the cross-validated
figures of ``prdigest eval triage --cv``; it needs the ``fit`` extra (``pip install
'prdigest[fit]'``). The shipped model needs none of it: :mod:`.model` is arithmetic.

* Each boundary ``level > k`` is an L2-regularised logistic regression on standardised
  features, regularised by how many labels stand on its rarer side (:data:`C_SCALE`); the
  weights are folded back to the raw features' scale, so the model file holds
  plain weights and intercepts.
* ``skip`` labels count as ``list_only`` here: skip comes from rules (bot churn), and for
  reading both are the bottom of the scale.
* Cross-validation holds out whole days (k folds over the sorted days), so a day's PRs never
  teach the model about the same day.
* ``must_threshold`` and ``pick_floor`` are tuned on the cross-validated probabilities: the
  threshold maximises exact agreement plus half the must-read F1, the floor the F1 of the
  daily picks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prdigest.core.errors import ConfigError
from prdigest.core.models import Level
from prdigest.triage.labels import Label
from prdigest.triage.model import ORDER, Boundary, TriageModel, decide, expected
from prdigest.triage.rules import capped

MODEL_VERSION = "triage-model/1"
FOLDS = 6
MUST_WEIGHT = 0.5  # must-reads are what a reader most needs right: their F1 counts extra
DEFAULT_C = 0.02
# the inverse L2 strength of each boundary, as a multiple of ``c``: the two lower boundaries
# have a hundred or more labels on either side and can afford weights of their own; the
# must-read boundary has a few dozen must-reads and is kept close to the prior
C_SCALE = (2.5, 2.5, 1.0)
THRESHOLDS = tuple(x / 100 for x in range(5, 61))
FLOORS = tuple(x / 20 for x in range(61))


@dataclass(frozen=True)
class Sample:
    """One labelled PR as the model sees it."""

    label: Label
    values: Mapping[str, float]
    lesson: bool  # a lesson shown by code in the diff (``rules.lesson_in_code``)
    prior: float = 0.0  # the review priors' lift (0 for records without review data)
    weight: float = 1.0  # how much the sample counts in the fit

    @property
    def target(self) -> int:
        level = Level.LIST_ONLY if self.label.level is Level.SKIP else self.label.level
        return ORDER.index(level)


def _sklearn() -> Any:
    try:
        import numpy
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler
    except ImportError as exc:  # the fit extra is not installed
        raise ConfigError(
            "fitting the triage model needs scikit-learn: pip install 'prdigest[fit]'"
        ) from exc
    return numpy, LogisticRegression, StandardScaler


def fit_boundaries(
    samples: Sequence[Sample], names: Sequence[str], c: float = DEFAULT_C
) -> tuple[Boundary, ...]:
    numpy, logistic, scaler_class = _sklearn()
    matrix = numpy.array([[s.values.get(n, 0.0) for n in names] for s in samples], dtype=float)
    targets = numpy.array([s.target for s in samples])
    scaler = scaler_class().fit(matrix)
    scale = numpy.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    standard = (matrix - scaler.mean_) / scale
    weights = numpy.array([s.weight for s in samples], dtype=float)
    boundaries = []
    for index, above in enumerate(ORDER[:-1]):
        model = logistic(C=c * C_SCALE[index], max_iter=10_000).fit(
            standard, (targets > index).astype(int), sample_weight=weights
        )
        raw = model.coef_[0] / scale
        intercept = float(
            model.intercept_[0] - float((model.coef_[0] * scaler.mean_ / scale).sum())
        )
        kept = {n: float(w) for n, w in zip(names, raw, strict=True) if abs(w) > 1e-9}
        boundaries.append(Boundary(above=above, intercept=intercept, weights=kept))
    return tuple(boundaries)


def model_of(
    boundaries: tuple[Boundary, ...],
    names: Sequence[str],
    must_threshold: float = 0.5,
    pick_floor: float = 1.0,
    info: Mapping[str, Any] | None = None,
) -> TriageModel:
    return TriageModel(
        version=MODEL_VERSION,
        features=tuple(names),
        boundaries=boundaries,
        must_threshold=must_threshold,
        pick_floor=pick_floor,
        info=dict(info or {}),
    )


def folds_by_day(samples: Sequence[Sample], folds: int = FOLDS) -> list[set[str]]:
    days = sorted({s.label.day for s in samples})
    return [set(days[i::folds]) for i in range(min(folds, len(days)))]


def cross_validated(
    samples: Sequence[Sample], names: Sequence[str], c: float = DEFAULT_C, folds: int = FOLDS
) -> list[dict[Level, float]]:
    """Each sample's level probabilities from a model fitted without its day's fold."""
    chances: list[dict[Level, float] | None] = [None] * len(samples)
    for held in folds_by_day(samples, folds):
        train = [s for s in samples if s.label.day not in held]
        model = model_of(fit_boundaries(train, names, c), names)
        for index, sample in enumerate(samples):
            if sample.label.day in held:
                chances[index] = model.probabilities(sample.values, sample.prior)
    return [c for c in chances if c is not None]


def level_of(sample: Sample, chances: Mapping[Level, float], threshold: float) -> Level:
    """The level triage would give the sample (as :func:`prdigest.triage.assess` does)."""
    return capped(decide(chances, lesson=sample.lesson, threshold=threshold), sample.values)[0]


def tune_threshold(samples: Sequence[Sample], chances: Sequence[Mapping[Level, float]]) -> float:
    """The must-read threshold with the best exact agreement + MUST_WEIGHT × must-read F1."""
    must = [i for i, s in enumerate(samples) if s.label.level is Level.MUST_READ]

    def merit(threshold: float) -> float:
        levels = [level_of(s, c, threshold) for s, c in zip(samples, chances, strict=True)]
        exact = sum(1 for s, lv in zip(samples, levels, strict=True) if lv is s.label.level)
        hits = sum(1 for i in must if levels[i] is Level.MUST_READ)
        called = sum(1 for lv in levels if lv is Level.MUST_READ)
        f1 = 2 * hits / max(1, len(must) + called)
        return exact / len(samples) + MUST_WEIGHT * f1

    return max(THRESHOLDS, key=lambda t: (merit(t), -t))


def tune_floor(
    samples: Sequence[Sample],
    chances: Sequence[Mapping[Level, float]],
    threshold: float,
    complete_days: set[str],
    pick: Callable[[Sequence[tuple[Sample, Level, float]], float], set[int]],
) -> float:
    """The pick floor with the best F1 of the daily picks on fully labelled days."""
    judged = [
        (s, level_of(s, c, threshold), expected(c))
        for s, c in zip(samples, chances, strict=True)
        if s.label.day in complete_days
    ]
    wanted = {id(s) for s, _, _ in judged if s.label.pick is not None}

    def f1(floor: float) -> float:
        chosen = pick(judged, floor)
        hit = len(chosen & wanted)
        return 2 * hit / max(1, len(chosen) + len(wanted))

    return max(FLOORS, key=lambda f: (f1(f), f))
