"""The rules of triage, where a rule is the truth, and the hand-set review priors.

* Bot churn (a PR authored by the preset's bots or a ``[bot]`` login) and ownership files are
  ``skip``, before any model.
* A docs-only PR is ``list_only`` — its title says what it is — unless it documents a new
  environment variable or option (``skim``).
* ``must_read`` needs a lesson shown by code: the diff must change more than docs.
* Review facts lift every boundary of the model by hand-set weights (:data:`REVIEW_PRIORS`):
  the development set has no review data to fit them on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prdigest.core.models import Dossier, Level, Role
from prdigest.triage.features import lesson

OWNERSHIP_FILES = ("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", "OWNERS", "MAINTAINERS")
BOT_SUFFIXES = ("[bot]", "-bot", "-robot")
REVIEW_PRIORS = {"review_shaped": 1.0, "commits_after_review": 0.3}


def is_bot(login: str | None, bots: Sequence[str]) -> bool:
    if not login:
        return False
    low = login.lower()
    return low.endswith(BOT_SUFFIXES) or low in {b.lower() for b in bots}


def ruled(d: Dossier, bots: Sequence[str]) -> str | None:
    """Why a PR is ``skip`` before any model, or None."""
    if is_bot(d.author, bots):
        return f"authored by a bot ({d.author}): bot churn"
    paths = [f.path for f in d.files]
    if paths and all(p.endswith(OWNERSHIP_FILES) for p in paths):
        return "ownership files only"
    return None


def capped(level: Level, values: Mapping[str, float]) -> tuple[Level, str | None]:
    """The level after the docs-only rule, and why it was changed (None: it was not)."""
    if not values.get("docs_only"):
        return level, None
    if values.get("new_knob"):
        return Level.SKIM, "docs only, documents a new option or variable"
    return Level.LIST_ONLY, "docs only"


def lesson_in_code(d: Dossier) -> bool:
    """A lesson (a root cause, a measurement, a mechanism, an ordered test) and code to show it."""
    has_code = any(f.role is not Role.DOCS and f.additions + f.deletions for f in d.files)
    return has_code and lesson(d)


def review_values(d: Dossier) -> dict[str, float]:
    """The review facts the priors weigh (all zero for records without review data)."""
    people = [t for t in d.threads if not t.started_by_bot]
    requested = any("CHANGES_REQUESTED" in r.states and not r.is_bot for r in d.reviewers)
    human_reviews = any(not r.is_bot for r in d.reviewers)
    after = sum(1 for c in d.commits if c.after_review)
    return {
        "review_shaped": float(requested or len(people) >= 3),
        "commits_after_review": float(bool(after and human_reviews)),
    }


def review_prior(values: Mapping[str, float]) -> float:
    return sum(REVIEW_PRIORS[name] * value for name, value in values.items())
