"""Repository names (``owner/name``), checked in one place by GitHub's character rules.

A repository name is data, never a path: it becomes a store key, a URL and directories of the
static site (``site/<owner>/<name>/``), so every option, config value and record that names a
repository goes through :func:`is_repo_name` or :func:`check_repo`.

The rules, as GitHub applies them and slightly wider where old accounts exist:

* owner: 1–39 letters, digits or ``-``, starting with a letter or digit (GitHub forbids a
  trailing or doubled ``-`` for new accounts only, so both are accepted);
* name: 1–100 letters, digits, ``.``, ``_`` or ``-``, but never ``.`` or ``..`` (which would
  climb out of a directory);
* exactly one ``/``, no spaces, no other characters.

File paths of a PR (``files[].path``) are links into the repository: :func:`is_repo_path`
accepts only a normalised relative path (no empty, ``.`` or ``..`` segment, no leading ``/``,
no backslash, no control character), which is all git itself can store.
"""

from __future__ import annotations

import re

from prdigest.core.errors import ConfigError

REPO_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_PATH = 4096
RULE = "the owner: letters, digits, '-'; the name: also '.', '_', but not '.' or '..'"


def is_repo_name(value: str) -> bool:
    """Whether ``value`` is a valid ``owner/name`` (never ``a/.`` or ``a/..``)."""
    if not REPO_PATTERN.fullmatch(value):
        return False
    return value.partition("/")[2] not in {".", ".."}


def check_repo(value: str, *, key: str = "--repo") -> str:
    """``value`` when it is a valid ``owner/name``; else a :class:`ConfigError` naming ``key``."""
    if is_repo_name(value):
        return value
    hint = "give the owner too, e.g. vllm-project/vllm" if "/" not in value else RULE
    raise ConfigError(f"expected owner/name, got {value!r} ({hint})", key=key)


def repo_problem(value: str) -> str | None:
    """Why ``value`` is not a valid ``owner/name`` (None: it is one), for messages."""
    return None if is_repo_name(value) else f"expected owner/name, got {value!r} ({RULE})"


def is_repo_path(path: str) -> bool:
    """True for a normalised path inside a repository (``src/a.py``), never ``../x``."""
    if not path or len(path) > MAX_PATH or "\\" in path or _CONTROL.search(path):
        return False
    return all(part not in {"", ".", ".."} for part in path.split("/"))
