"""The probe of ``prdigest llm-check``: a real entry prompt from the bundled sample day.

The richest must-read PR of the sample (``prdigest demo``'s day) at the configured prompt
budget, so the check measures the server on the kind of request a run sends, not on a
28-token ping.
"""

from __future__ import annotations

import json
from importlib import resources

from prdigest.analyze import analyze
from prdigest.core.models import Level
from prdigest.core.presets import load_preset
from prdigest.core.records import parse_record
from prdigest.triage import assess
from prdigest.write import WriteRequest
from prdigest.write.llm import LLMSettings, LLMWriter
from prdigest.write.llm.client import Message
from prdigest.write.llm.prompt import level_budget

SAMPLE_FILE = "vllm-sample.jsonl"


def sample_probe(settings: LLMSettings, lang: str = "zh") -> tuple[Message, ...]:
    """The largest must-read entry prompt of the bundled sample, at ``settings``' budget."""
    text = resources.files("prdigest.samples").joinpath(SAMPLE_FILE).read_text("utf-8")
    writer = LLMWriter(settings)
    best: tuple[int, tuple[Message, ...]] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        pr = parse_record(json.loads(line))
        dossier = analyze(pr, load_preset(pr.repo), pr_version=pr.version_key)
        assessment = assess(dossier)
        if assessment.level is not Level.MUST_READ:
            continue
        built = writer.prompt_for(WriteRequest(pr, dossier, assessment, True), lang)
        if best is None or built.tokens > best[0]:
            best = (built.tokens, built.messages)
    assert best is not None, "the bundled sample has must-read PRs"
    return best[1]


def run_prompt_tokens(settings: LLMSettings) -> int:
    """The prompt tokens of one must-read paragraph request at the configured budget."""
    return level_budget(settings.prompt_room, Level.MUST_READ)
