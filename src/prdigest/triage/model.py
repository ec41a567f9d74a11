"""The fitted verdict model: arithmetic over named features, weights from a versioned data file.

The model is ordinal in the Frank & Hall way: the levels that the model decides are ordered
``list_only < skim < worth_reading < must_read`` (``skip`` comes from rules: bot churn and
ownership files), and one logistic model per boundary gives ``P(level > k)``. Each boundary is
an intercept and a weight per feature, so every contribution ``weight × value`` is a reason a
reader can check (``prdigest explain``). The level is the most probable one, except that
``must_read`` is given whenever ``P(must_read)`` reaches the file's ``must_threshold`` and the
PR carries a lesson (see :func:`prdigest.triage.features.lesson`): a missed must-read costs a
reader more than a must-read that was only worth reading. The score is the expected level
(0–3), the order of the day's digest.

The weights are fitted offline on the labelled development set (``eval/labels``) by
:mod:`.fit` (``scripts/fit_triage.py``, scikit-learn), and shipped as ``model.json``; nothing
here imports more than the standard library.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from prdigest.core.errors import ConfigError
from prdigest.core.models import Level
from prdigest.triage.features import NAMES

MODEL_FILE = "model.json"
ORDER = (Level.LIST_ONLY, Level.SKIM, Level.WORTH_READING, Level.MUST_READ)


@dataclass(frozen=True)
class Boundary:
    """``P(level > above)`` = σ(intercept + Σ weight × feature)."""

    above: Level
    intercept: float
    weights: Mapping[str, float]

    def logit(self, values: Mapping[str, float]) -> float:
        return self.intercept + sum(w * values.get(name, 0.0) for name, w in self.weights.items())

    def contributions(self, values: Mapping[str, float]) -> dict[str, float]:
        return {
            name: w * values.get(name, 0.0)
            for name, w in self.weights.items()
            if w and values.get(name, 0.0)
        }


@dataclass(frozen=True)
class Prediction:
    probabilities: dict[Level, float]
    level: Level
    score: float  # expected level, 0 (list_only) … 3 (must_read)
    decisive: Boundary  # the boundary just below the chosen level (or the first one)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@dataclass(frozen=True)
class TriageModel:
    version: str
    features: tuple[str, ...]
    boundaries: tuple[Boundary, ...]  # above list_only, above skim, above worth_reading
    must_threshold: float
    pick_floor: float
    info: Mapping[str, Any]  # how it was fitted and how it scored (for reports)

    @functools.cached_property
    def key(self) -> str:
        data = json.dumps(
            [
                self.version,
                self.features,
                [(b.intercept, dict(b.weights)) for b in self.boundaries],
                self.must_threshold,
                self.pick_floor,
            ],
            sort_keys=True,
        )
        return f"{self.version}:{hashlib.sha256(data.encode()).hexdigest()[:10]}"

    def probabilities(self, values: Mapping[str, float], prior: float = 0.0) -> dict[Level, float]:
        """Each level's probability; ``prior`` is added to every boundary's logit."""
        above = [_sigmoid(b.logit(values) + prior) for b in self.boundaries]
        # keep P(level > k) non-increasing in k, so every level's probability is ≥ 0
        for index in range(1, len(above)):
            above[index] = min(above[index], above[index - 1])
        chances = [1.0 - above[0], *(above[i] - above[i + 1] for i in range(len(above) - 1))]
        chances.append(above[-1])
        return dict(zip(ORDER, chances, strict=True))

    def predict(
        self, values: Mapping[str, float], *, lesson: bool, prior: float = 0.0
    ) -> Prediction:
        chances = self.probabilities(values, prior)
        level = decide(chances, lesson=lesson, threshold=self.must_threshold)
        index = max(0, ORDER.index(level) - 1)
        return Prediction(chances, level, round(expected(chances), 3), self.boundaries[index])


def decide(chances: Mapping[Level, float], *, lesson: bool, threshold: float) -> Level:
    """The most probable level, except: ``must_read`` once its probability reaches
    ``threshold`` for a PR with a lesson, and never for one without."""
    level = max(ORDER, key=lambda x: (chances[x], -ORDER.index(x)))
    if lesson and chances[Level.MUST_READ] >= threshold:
        return Level.MUST_READ
    if level is Level.MUST_READ and not lesson:
        return Level.WORTH_READING  # no lesson, no must-read, whatever the volume
    return level


def expected(chances: Mapping[Level, float]) -> float:
    """The expected level, 0 (list_only) … 3 (must_read): the score that ranks a day."""
    return sum(ORDER.index(x) * p for x, p in chances.items())


def parse_model(data: Mapping[str, Any], *, origin: str) -> TriageModel:
    try:
        boundaries = tuple(
            Boundary(
                above=Level(b["above"]),
                intercept=float(b["intercept"]),
                weights={str(k): float(v) for k, v in b["weights"].items()},
            )
            for b in data["boundaries"]
        )
        model = TriageModel(
            version=str(data["version"]),
            features=tuple(str(x) for x in data["features"]),
            boundaries=boundaries,
            must_threshold=float(data["must_threshold"]),
            pick_floor=float(data["pick_floor"]),
            info=dict(data.get("info", {})),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"not a triage model: {exc}", key=origin) from exc
    if [b.above for b in boundaries] != list(ORDER[:-1]):
        raise ConfigError("boundaries must be above list_only, skim, worth_reading", key=origin)
    # a weight on a feature prdigest does not compute would silently count as zero
    unknown = sorted({n for b in boundaries for n in b.weights} - set(NAMES))
    if unknown:
        raise ConfigError(f"the model weighs unknown features: {', '.join(unknown)}", key=origin)
    return model


@functools.cache
def bundled_model() -> TriageModel:
    text = resources.files("prdigest.triage").joinpath(MODEL_FILE).read_text("utf-8")
    return parse_model(json.loads(text), origin=MODEL_FILE)


def load_model(path: Path | None = None) -> TriageModel:
    """The bundled model, or one from a file (``--model``, or a freshly fitted one)."""
    if path is None:
        return bundled_model()
    try:
        return parse_model(json.loads(path.read_text(encoding="utf-8")), origin=str(path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read triage model: {exc}", key=str(path)) from exc


def model_json(model: TriageModel) -> dict[str, Any]:
    return {
        "version": model.version,
        "features": list(model.features),
        "boundaries": [
            {
                "above": b.above.value,
                "intercept": round(b.intercept, 6),
                "weights": {k: round(v, 6) for k, v in b.weights.items()},
            }
            for b in model.boundaries
        ],
        "must_threshold": model.must_threshold,
        "pick_floor": model.pick_floor,
        "info": dict(model.info),
    }


def sorted_contributions(contributions: Mapping[str, float]) -> Sequence[tuple[str, float]]:
    return sorted(contributions.items(), key=lambda kv: -abs(kv[1]))
