"""Settings of the LLM writer, resolved by the caller (CLI or config file) and passed down.

Nothing here reads the environment: the CLI maps ``PRDIGEST_LLM_*`` / ``OPENAI_*`` variables
and the ``[llm]`` table of ``prdigest.toml`` onto :class:`LLMSettings`. The API key is a
``SecretStr``: it shows as ``**********`` in reprs, logs and errors and is only unwrapped when
the HTTP client is built.

Time is measured as *progress*, not as a total: replies are streamed, and ``timeout_s`` is the
longest silence allowed between two pieces of a reply. Before the first piece the server reads
the whole prompt, so the wait allowed there grows with the prompt (see :mod:`.client`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

DEFAULT_BUDGET_TOKENS = 8_000
DEFAULT_CONCURRENCY = 8  # a remote API that reports no slots
LOCAL_CONCURRENCY = 1  # a server on this machine that reports no slots: one request at a time
DEFAULT_MAX_OUTPUT_TOKENS = 1_200
DEFAULT_PACK_ENTRIES = 4  # paragraph entries per request
OUTPUT_MARGIN_TOKENS = 64  # chat-template tokens a server adds around the messages


class LLMSettings(BaseModel):
    """Where the model is and how to talk to it.

    ``budget_tokens`` bounds the prompt of one must-read PR (other levels get a share, see
    :mod:`.prompt`); ``context_tokens`` is the server's context window: no request is sent whose
    prompt plus ``max_output_tokens`` would not fit it. ``max_cost_tokens`` bounds prompt +
    completion tokens of a whole run (``None``: no bound). ``concurrency`` ``None`` asks the
    server for its slots (llama.cpp's ``/props``), else one request at a time for a server on
    this machine and :data:`DEFAULT_CONCURRENCY` for a remote one. ``retries`` are transport
    retries (connection refused, 429, 5xx); a request that timed out is never sent again, since
    the server may still be computing it. ``repairs`` bounds the repair requests per entry.
    ``json_mode``: ``auto`` asks for ``response_format=json_object`` and drops it for the rest
    of the run when the server rejects it; tolerant parsing handles replies either way.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str
    model: str = Field(min_length=1)
    api_key: SecretStr = SecretStr("")
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=6)
    concurrency: int | None = Field(default=None, ge=1, le=64)
    context_tokens: int | None = Field(default=None, ge=1_024)
    budget_tokens: int = Field(default=DEFAULT_BUDGET_TOKENS, ge=1_000)
    max_cost_tokens: int | None = Field(default=None, ge=0)
    json_mode: Literal["auto", "on", "off"] = "auto"
    temperature: float = Field(default=0.2, ge=0, le=2)
    max_output_tokens: int = Field(default=DEFAULT_MAX_OUTPUT_TOKENS, ge=100)
    repairs: int = Field(default=1, ge=0, le=3)
    pack_entries: int = Field(default=DEFAULT_PACK_ENTRIES, ge=1, le=8)
    max_retry_after_s: float = Field(default=60.0, ge=0)  # a longer wait is not worth it

    def __repr__(self) -> str:  # the key is a SecretStr already; keep the repr short too
        return (
            f"LLMSettings(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key={'**********' if self.api_key.get_secret_value() else ''!r})"
        )

    __str__ = __repr__

    @property
    def prompt_room(self) -> int:
        """Prompt tokens a request may use: the budget, within the server's context."""
        if self.context_tokens is None:
            return self.budget_tokens
        room = self.context_tokens - self.max_output_tokens - OUTPUT_MARGIN_TOKENS
        return max(1, min(self.budget_tokens, room))
