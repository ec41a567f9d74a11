"""Triage: a verdict level, a score and its reasons for each dossier; ranking and selection.

The verdict is computed here from dossier facts only — never from what the PR body or a model
says about itself (DESIGN §1). A level comes from the first that applies of:

1. **Rules, where a rule is the truth**: a PR authored by a bot (the preset's ``bots`` or a
   ``[bot]`` login) is bot churn → ``skip``; a PR that only touches ownership files
   (CODEOWNERS) → ``skip``; a docs-only PR is ``list_only`` unless it documents a new
   environment variable or option (then ``skim``): its title says what it is.
2. **The fitted model** (:mod:`.model`, weights in ``model.json``): the features of
   :mod:`.features` — the kind the diff corroborates, the size of the source change and how much
   of it is deletion, a stated root cause, a measured effect, the design the code shows, tests,
   and whether only docs, CI or tests changed — give the probability of each level; the most
   probable wins, ``must_read`` needs a lesson (a root cause, a measurement, a mechanism, an
   ordered test), never volume alone, and code in the diff: a body cannot talk a PR into
   ``must_read``.
3. **Review priors**: the development set has no review data, so what a review adds is not
   fitted but set by hand (:data:`REVIEW_PRIORS`): changes requested or several threads by
   people lift the logits. They show as reasons like every other contribution.

Every contribution is a :class:`~prdigest.core.models.Reason` (the feature's value times its
weight at the boundary that decided the level), so ``prdigest explain`` shows why a PR landed
where it did. The score is the expected level (0–3); the digest ranks by level, then score, and
gives a paragraph only to PRs above the model's ``pick_floor`` (:func:`select`).
"""

from __future__ import annotations

from collections.abc import Sequence

from prdigest.core.models import Assessment, Dossier, Level, Reason
from prdigest.triage.features import features
from prdigest.triage.model import TriageModel, bundled_model, sorted_contributions
from prdigest.triage.rules import (
    REVIEW_PRIORS,
    capped,
    lesson_in_code,
    review_prior,
    review_values,
    ruled,
)

__all__ = ["assess", "pickable", "rank", "select", "triage_version"]

MAX_REASONS = 8


def triage_version(model: TriageModel | None = None) -> str:
    """What assessments depend on besides the dossier: the rules' version and the model."""
    return f"triage/3|{(model or bundled_model()).key}"


def _reason(code: str, detail: str, weight: float) -> Reason:
    return Reason(code=code, detail=detail, weight=round(weight, 2))


def _area(d: Dossier) -> tuple[str | None, str | None]:
    area = d.primary_area
    focused = area is not None and area.share >= 0.5 and area.readers
    return (area.id if area else None), (area.id if focused and area else None)


def assess(
    dossier: Dossier, *, bots: Sequence[str] = (), model: TriageModel | None = None
) -> Assessment:
    """The verdict of one PR; ``bots`` are the preset's bot logins."""
    model = model or bundled_model()
    area, audience = _area(dossier)
    rule = ruled(dossier, bots)
    if rule is not None:
        return Assessment(
            repo=dossier.repo,
            number=dossier.number,
            level=Level.SKIP,
            score=0.0,
            reasons=(_reason("level", rule, 0.0),),
            audience=audience,
            area=area,
            triage_version=triage_version(model),
        )
    values = features(dossier)
    priors = review_values(dossier)
    prediction = model.predict(values, lesson=lesson_in_code(dossier), prior=review_prior(priors))
    level, why = capped(prediction.level, values)
    if why is None:
        chances = ", ".join(
            f"{lv.value} {p:.0%}" for lv, p in prediction.probabilities.items() if p >= 0.05
        )
        why = f"model: {chances}"
    reasons = [_reason("level", why, 0.0)]
    contributions = prediction.decisive.contributions(values)
    contributions.update({n: REVIEW_PRIORS[n] * v for n, v in priors.items() if v})
    for name, weight in sorted_contributions(contributions)[:MAX_REASONS]:
        if round(weight, 2) == 0:
            continue  # a reason shown as +0.00 explains nothing
        detail = f"{name} = {values.get(name, priors.get(name, 0.0)):g}"
        reasons.append(_reason(name, detail, weight))
    return Assessment(
        repo=dossier.repo,
        number=dossier.number,
        level=level,
        score=prediction.score,
        reasons=tuple(reasons),
        audience=audience,
        area=area,
        triage_version=triage_version(model),
    )


def rank(assessments: Sequence[Assessment]) -> list[Assessment]:
    """Best first: level, then score, then the newer PR number."""
    return sorted(assessments, key=lambda a: (a.level.rank, -a.score, -a.number))


def select(
    assessments: Sequence[Assessment], top: int, *, floor: float | None = None
) -> list[Assessment]:
    """The PRs that get a paragraph: those with something to say — every must-read and
    worth-reading PR, and a skim whose score reaches ``floor`` (the model's ``pick_floor``) —
    best first, at most ``top``. ``top`` is a cap, not a quota: a quiet day yields fewer."""
    bar = bundled_model().pick_floor if floor is None else floor
    eligible = [a for a in rank(assessments) if pickable(a.level, a.score, bar)]
    return eligible[: max(0, top)]


def pickable(level: Level, score: float, floor: float) -> bool:
    """Whether a PR of this level and score has something to say beyond its title."""
    if level in (Level.MUST_READ, Level.WORTH_READING):
        return True
    return level is Level.SKIM and score >= floor
