"""What the environment says about endpoints and credentials, read from a mapping the CLI hands
in (the library itself never reads the process environment).

* GitHub: the token from ``GITHUB_TOKEN`` or ``GH_TOKEN`` (never an option, so it stays out of
  shell history and process lists); the API base from ``GITHUB_API_URL`` and the GraphQL endpoint
  from ``GITHUB_GRAPHQL_URL`` or derived from the base.
* The model endpoint: ``PRDIGEST_LLM_BASE_URL``, ``PRDIGEST_LLM_MODEL`` and
  ``PRDIGEST_LLM_API_KEY``, each falling back to ``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and
  ``OPENAI_API_KEY``; the other settings of :data:`LLM_VARIABLES` (timeout, concurrency,
  context, output allowance, temperature, retries, repairs, JSON mode, budgets). The key goes
  into a ``SecretStr``. Values of the ``[llm]`` table of ``prdigest.toml`` come first, the
  environment overrides them, a command's options override both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr, ValidationError

from prdigest.core.errors import AuthError, ConfigError
from prdigest.write.llm.settings import LLMSettings

if TYPE_CHECKING:
    from prdigest.sources.github import Endpoints, Token

Environment = Mapping[str, str]
TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")
OPENAI_URL = "https://api.openai.com/v1"


def _token_like(value: str) -> bool:
    return value.isascii() and value.isprintable() and " " not in value


def github_token(env: Environment) -> Token:
    from prdigest.sources.github import Token  # the GitHub client loads only for a GitHub sync

    for name in TOKEN_VARIABLES:
        value = env.get(name, "").strip()
        if value and not _token_like(value):  # it could never be sent in a header: say so
            raise AuthError(
                f"{name} is not a usable token: it holds a space, a line break or a "
                "non-ASCII character (check how it was copied)"
            )
        if value:
            return Token(value)
    raise AuthError(
        "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read the repository"
    )


def github_endpoints(
    env: Environment, api_url: str | None = None, graphql_url: str | None = None
) -> Endpoints:
    """Options first, then ``GITHUB_API_URL`` / ``GITHUB_GRAPHQL_URL``, then github.com."""
    from prdigest.sources.github import Endpoints

    return Endpoints.from_urls(
        api_url or env.get("GITHUB_API_URL"), graphql_url or env.get("GITHUB_GRAPHQL_URL")
    )


def _first(env: Environment, *names: str) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)


# environment variable → setting (and the ``[llm]`` key of prdigest.toml, the same name
# without the prefix, lower case)
LLM_VARIABLES: dict[str, str] = {
    "PRDIGEST_LLM_TIMEOUT": "timeout_s",
    "PRDIGEST_LLM_CONCURRENCY": "concurrency",
    "PRDIGEST_LLM_CONTEXT": "context_tokens",
    "PRDIGEST_LLM_MAX_OUTPUT_TOKENS": "max_output_tokens",
    "PRDIGEST_LLM_TEMPERATURE": "temperature",
    "PRDIGEST_LLM_RETRIES": "max_retries",
    "PRDIGEST_LLM_REPAIRS": "repairs",
    "PRDIGEST_LLM_PACK": "pack_entries",
    "PRDIGEST_LLM_JSON_MODE": "json_mode",
    "PRDIGEST_LLM_BUDGET_TOKENS": "budget_tokens",
    "PRDIGEST_LLM_MAX_COST_TOKENS": "max_cost_tokens",
}


def llm_settings(
    env: Environment, file: Mapping[str, Any] | None = None, **overrides: Any
) -> LLMSettings:
    """Settings from the ``[llm]`` table (``file``, already validated), the environment (see
    the module docstring) and explicit overrides, in that order of precedence."""
    table = {k: v for k, v in (file or {}).items() if v is not None}
    model = (
        overrides.pop("model", None)
        or _first(env, "PRDIGEST_LLM_MODEL", "OPENAI_MODEL")
        or table.pop("model", None)
    )
    table.pop("model", None)
    if not model:
        raise ConfigError("no model: set PRDIGEST_LLM_MODEL (or OPENAI_MODEL)", key="llm.model")
    base_url = _first(env, "PRDIGEST_LLM_BASE_URL", "OPENAI_BASE_URL") or table.pop(
        "base_url", None
    )
    table.pop("base_url", None)
    values: dict[str, Any] = {
        **table,
        "base_url": base_url or OPENAI_URL,
        "model": model,
        "api_key": SecretStr(_first(env, "PRDIGEST_LLM_API_KEY", "OPENAI_API_KEY") or ""),
    }
    for name, key in LLM_VARIABLES.items():
        if env.get(name):
            values[key] = env[name]
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return LLMSettings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], key=f"llm.{field}") from None
