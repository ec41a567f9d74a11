"""Running the CLI in-process, as the CLI tests do: exit code, stdout and stderr."""

from __future__ import annotations

import pytest

from prdigest.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``prdigest ARGS…`` in this process; a normal return is exit code 0."""
    code = 0
    try:
        main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def run_args(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """:func:`run` with the arguments as one list first."""
    return run(capsys, *args)
