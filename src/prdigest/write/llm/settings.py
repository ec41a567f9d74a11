"""Settings of the LLM writer, resolved by the caller (CLI or config file) and passed down.

Nothing here reads the environment: the CLI maps ``PRDIGEST_LLM_*`` / ``OPENAI_*`` variables
(or, later, ``prdigest.toml``) onto :class:`LLMSettings`. The API key is a ``SecretStr``: it
shows as ``**********`` in reprs, logs and errors and is only unwrapped when the HTTP client is
built.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

DEFAULT_BUDGET_TOKENS = 8_000
DEFAULT_CONCURRENCY = 8


class LLMSettings(BaseModel):
    """Where the model is and how to talk to it.

    ``budget_tokens`` bounds the prompt of one PR (estimated, see :mod:`.budget`);
    ``max_cost_tokens`` bounds prompt + completion tokens of a whole run (``None``: no bound).
    ``json_mode``: ``auto`` asks for ``response_format=json_object`` and drops it for the rest
    of the run when the server rejects it; tolerant parsing handles replies either way.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str
    model: str = Field(min_length=1)
    api_key: SecretStr = SecretStr("")
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=6)
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1, le=64)
    budget_tokens: int = Field(default=DEFAULT_BUDGET_TOKENS, ge=1_000)
    max_cost_tokens: int | None = Field(default=None, ge=0)
    json_mode: Literal["auto", "on", "off"] = "auto"
    temperature: float = Field(default=0.2, ge=0, le=2)
    max_output_tokens: int = Field(default=1_200, ge=100)
    max_retry_after_s: float = Field(default=60.0, ge=0)  # a longer wait is not worth it

    def __repr__(self) -> str:  # the key is a SecretStr already; keep the repr short too
        return (
            f"LLMSettings(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key={'**********' if self.api_key.get_secret_value() else ''!r})"
        )

    __str__ = __repr__
