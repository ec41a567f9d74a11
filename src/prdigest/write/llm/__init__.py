"""The LLM writer (``--writer llm``): any OpenAI-compatible endpoint, verified, cached, cheap.

* :mod:`.settings` — :class:`LLMSettings` (endpoint, model, key as a secret, budgets);
* :mod:`.client` — async chat client: timeouts, bounded retries honouring ``retry-after``,
  a concurrency limit, JSON mode with tolerant parsing;
* :mod:`.budget` — token estimates and the relevance-ordered slice of a PR for a prompt;
* :mod:`.prompt` — messages from the ``[llm]`` texts of the locale files;
* :mod:`.style` — reference digests in the text layout and style examples;
* :mod:`.verify` — every entry checked against the PR record;
* :mod:`.writer` — :class:`LLMWriter`, which verifies every entry, repairs once and falls back
  to the template writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prdigest.write.llm.settings import LLMSettings

if TYPE_CHECKING:
    from prdigest.write.llm.writer import LLMWriter

__all__ = ["LLMSettings", "LLMWriter"]


def __getattr__(name: str) -> Any:
    # the writer pulls in the model client (openai): load it only when it is asked for
    if name == "LLMWriter":
        from prdigest.write.llm.writer import LLMWriter

        return LLMWriter
    raise AttributeError(name)
