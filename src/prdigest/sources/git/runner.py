"""Running ``git``: short commands whose output is read whole, and one streamed ``git log``.

Every command runs with a pinned configuration (``-c`` here, diff options at the call sites)
so that a user's settings (colours, diff prefixes, quoted paths, external diff drivers,
signatures) cannot change the text we parse. The environment is inherited as it is; git's own
error messages are passed on verbatim. stderr goes to a temporary file, never a pipe: a chatty
git cannot block on a full stderr pipe while we are reading stdout.
"""

from __future__ import annotations

import functools
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from prdigest.core.errors import ConfigError, SourceError

ReadLine = Callable[[int], bytes]

# Settings that would change the output format; each is pinned to git's default.
_CONFIG = (
    "core.quotePath=false",  # non-ASCII paths as UTF-8 bytes, not octal escapes
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "log.showSignature=false",
    "color.ui=false",
)


def command(path: Path, *args: str) -> list[str]:
    config = [item for setting in _CONFIG for item in ("-c", setting)]
    return ["git", "-C", str(path), *config, *args]


def _first_line(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return text.splitlines()[0] if text else "no message"


def run(path: Path, *args: str, check: bool = True) -> tuple[int, bytes, str]:
    """Run a short git command; returns (exit code, stdout, first line of stderr)."""
    try:
        done = subprocess.run(command(path, *args), capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise SourceError("git is not installed (no 'git' on PATH)") from exc
    stderr = _first_line(done.stderr)
    if check and done.returncode != 0:
        raise SourceError(f"git {args[0]} failed in {path}: {stderr}")
    return done.returncode, done.stdout, stderr


@functools.cache
def version(path: Path) -> tuple[int, int]:
    """(major, minor) of the installed git; (0, 0) when the version text is unusual."""
    _, out, _ = run(path, "version")
    match = re.search(rb"(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def check_repository(path: Path) -> None:
    """Raise :class:`ConfigError` unless ``path`` is a directory inside a git repository."""
    if not path.is_dir():
        raise ConfigError(f"{path} is not a directory", key="--git")
    code, _, stderr = run(path, "rev-parse", "--git-dir", check=False)
    if code != 0:
        reason = "not a git repository" if "not a git repository" in stderr else stderr
        raise ConfigError(f"{path}: {reason}", key="--git")


@contextmanager
def stream(path: Path, *args: str, stdin: bytes | None = None) -> Iterator[ReadLine]:
    """Run a git command and hand out ``readline(limit)`` on its stdout, as bytes.

    ``stdin`` (e.g. the commits of ``--stdin``) is fed from a temporary file, so git never
    waits on us to write while we wait on it to read. The process is killed when the caller
    stops early (a generator closed half way); a non-zero exit after a full read becomes a
    :class:`SourceError` with git's message.
    """
    with tempfile.TemporaryFile() as errors, tempfile.TemporaryFile() as given:
        given.write(stdin or b"")
        given.seek(0)
        try:
            process = subprocess.Popen(
                command(path, *args),
                stdin=given if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                bufsize=1 << 20,
            )
        except FileNotFoundError as exc:
            raise SourceError("git is not installed (no 'git' on PATH)") from exc
        assert process.stdout is not None  # stdout=PIPE guarantees it
        finished = False
        try:
            yield process.stdout.readline
            finished = True
        finally:
            if not finished:
                process.kill()
            process.stdout.close()
            code = process.wait()
        if code != 0:
            errors.seek(0)
            raise SourceError(f"git {args[0]} failed in {path}: {_first_line(errors.read())}")
