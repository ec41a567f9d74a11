"""What every part of ``prdigest.toml`` shares: a strict, frozen model and problem keys.

The pipeline's config (repositories, site) and each channel's config (declared beside its
channel) are built from these, so every problem is reported with the key it concerns.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ConfigModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def problem(key: str, message: str) -> PydanticCustomError:
    """A validation problem about ``key`` (relative to the table being validated)."""
    return PydanticCustomError("config_key", message, {"key": key})


def env_name(value: str | None) -> str | None:
    if value is not None and not ENV_NAME.match(value):
        raise ValueError(
            f"must be the NAME of an environment variable (like PRDIGEST_WEBHOOK), got {value!r}"
        )
    return value


EnvName = Annotated[str, Field(min_length=1, max_length=128)]
