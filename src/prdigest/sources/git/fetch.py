"""Bringing a clone up to date before a scheduled run reads it (``fetch = true`` in the config).

A daily run that reads a clone nobody updates digests nothing, day after day. So ``run-all``
runs ``git fetch`` first. A fetch that fails is an error (a wrong remote, rejected credentials
…) — except when the remote cannot be reached at all (offline): then the run goes on with the
clone as it is, and :class:`FetchOutcome` says so, so the caller can warn when the clone's newest
commit is older than the end of the window (the digest may miss PRs).

``GIT_TERMINAL_PROMPT=0`` keeps git from asking for a password on a terminal nobody watches.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from prdigest.core.errors import SourceError
from prdigest.sources.git import runner

FETCH_TIMEOUT_S = 600.0  # a fetch that hangs longer is treated as offline
_OFFLINE = re.compile(
    r"could not resolve host|temporary failure in name resolution|network is unreachable|"
    r"no route to host|connection refused|connection timed out|failed to connect|"
    r"could not connect|operation timed out|unable to connect",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"(\w+://)[^/@\s]+@")


@dataclass(frozen=True)
class FetchOutcome:
    remote: str | None  # None: the clone has no remote, nothing to fetch from
    offline: str | None = None  # git's message when the remote could not be reached


def _remotes(path: Path) -> list[str]:
    _, out, _ = runner.run(path, "remote")
    return out.decode(errors="replace").split()


def fetch(path: Path, branch_ref: str, environment: Mapping[str, str]) -> FetchOutcome:
    """``git fetch`` the remote the branch comes from (``origin/main`` → ``origin``), else
    ``origin``, else the first remote."""
    runner.check_repository(path)
    remotes = _remotes(path)
    if not remotes:
        return FetchOutcome(remote=None)
    head = branch_ref.split("/", 1)[0]
    remote = head if head in remotes else ("origin" if "origin" in remotes else remotes[0])
    env = {**environment, "GIT_TERMINAL_PROMPT": "0"}  # the caller's environment, no prompt
    try:
        done = subprocess.run(
            runner.command(path, "fetch", "--quiet", "--prune", remote),
            capture_output=True,
            env=env,
            timeout=FETCH_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return FetchOutcome(remote, offline=f"no answer within {FETCH_TIMEOUT_S:.0f} s")
    except FileNotFoundError as exc:
        raise SourceError("git is not installed (no 'git' on PATH)") from exc
    if done.returncode == 0:
        return FetchOutcome(remote)
    message = " ".join(done.stderr.decode("utf-8", errors="replace").split()) or "no message"
    message = _USERINFO.sub(r"\1", message)  # a remote URL may carry a token: never show it
    if _OFFLINE.search(message):
        return FetchOutcome(remote, offline=message)
    raise SourceError(f"git fetch {remote} failed in {path}: {message}")
