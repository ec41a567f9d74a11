"""Repository names: one rule for options, config and records (``core/names.py``)."""

from __future__ import annotations

import pytest

from prdigest.core.errors import ConfigError
from prdigest.core.names import check_repo, is_repo_name


@pytest.mark.parametrize(
    "name",
    ["vllm-project/vllm", "vllm-project/vllm-ascend", "a/b", "A1/.github", "o/x_y.z", "o-/n"],
)
def test_real_names_pass(name: str) -> None:
    assert is_repo_name(name)
    assert check_repo(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "vllm",
        "",
        "a/..",
        "a/.",
        "../../etc",
        "x/../../../../PWNED",
        "a/b/c",
        "-a/b",
        "a /b",
        "a/b\n",
        "a/b c",
        "a/b%2e",
        "o/" + "n" * 101,
        "o" * 40 + "/n",
        "ö/n",
    ],
)
def test_names_that_are_not_owner_slash_name_fail(name: str) -> None:
    assert not is_repo_name(name)
    with pytest.raises(ConfigError, match=r"^--repo: expected owner/name"):
        check_repo(name)


def test_a_name_without_owner_gets_a_hint() -> None:
    with pytest.raises(ConfigError, match=r"give the owner too, e\.g\. vllm-project/vllm\)$"):
        check_repo("vllm")


def test_the_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"^repos\[0\]\.name: "):
        check_repo("a/..", key="repos[0].name")
