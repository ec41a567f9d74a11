"""Helpers for the LLM-writer tests: fixture PRs, their dossiers, and "good model" replies."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.models import Assessment, Dossier
from prdigest.core.presets import load_preset
from prdigest.core.records import PullRequest, parse_record
from prdigest.triage import assess
from prdigest.write.template import TemplateWriter

FIXTURES = Path(__file__).parent / "fixtures" / "prs"
REPO = "vllm-project/vllm"


@functools.cache
def fixture_prs() -> tuple[PullRequest, ...]:
    paths = sorted(FIXTURES.glob("*.json"), key=lambda p: int(p.stem))
    return tuple(parse_record(json.loads(p.read_text(encoding="utf-8"))) for p in paths)


@functools.cache
def analyzed(number: int) -> tuple[PullRequest, Dossier, Assessment]:
    pr = next(p for p in fixture_prs() if p.number == number)
    dossier = analyze(pr, load_preset(pr.repo), pr_version=pr.version_key)
    return pr, dossier, assess(dossier)


def good_title(number: int) -> str:
    """A short Chinese title made only of words from the PR title."""
    _, dossier, _ = analyzed(number)
    words = [w for w in dossier.subject.replace("`", "").split() if w.isascii()][:3]
    return "改动要点：" + " ".join(words)


def good_paragraph(number: int) -> str:
    """The template writer's paragraph: grounded, Chinese, the right verdict."""
    _, dossier, assessment = analyzed(number)
    entry = TemplateWriter().write(dossier, assessment, lang="zh", paragraph=True)
    assert entry.paragraph is not None
    return entry.paragraph
