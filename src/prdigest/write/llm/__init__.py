"""The LLM writer (``--writer llm``): any OpenAI-compatible endpoint, verified, cached, cheap.

* :mod:`.settings` — :class:`LLMSettings` (endpoint, model, key as a secret, budgets);
* :mod:`.client` — async chat client: timeouts, bounded retries honouring ``retry-after``,
  a concurrency limit, JSON mode with tolerant parsing;
* :mod:`.budget` — token estimates and the relevance-ordered slice of a PR for a prompt;
* :mod:`.prompt` — messages from the versioned data file ``prompts/entry-v1.toml``;
* :mod:`.style` — reference digests in the text layout and style examples;
* :mod:`.writer` — :class:`LLMWriter`, which verifies every entry (:mod:`prdigest.write.llm.verify`),
  repairs once and falls back to the template writer.
"""

from __future__ import annotations

from prdigest.write.llm.settings import LLMSettings
from prdigest.write.llm.writer import LLMWriter

__all__ = ["LLMSettings", "LLMWriter"]
