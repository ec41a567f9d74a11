"""Client of the kill driver's fork server (``tests/kill_driver.py serve``).

prdigest is imported once in the server; every job is a fork that runs one CLI command and is
SIGKILLed at its kill point, so a test can try dozens of points for the cost of one import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DRIVER = Path(__file__).parent / "kill_driver.py"


@dataclass(frozen=True)
class Outcome:
    status: int  # exit code; negative: killed by that signal
    stdout: str
    stderr: str


class KillServer:
    def __init__(self, process: subprocess.Popen[str], workdir: Path) -> None:
        self._process = process
        self._workdir = workdir
        self._jobs = 0

    def run(
        self,
        spec: str,
        args: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Outcome:
        """Run ``prdigest ARGS`` killed at ``spec`` (``ddl:3``; ``count:PATH`` kills nothing)."""
        self._jobs += 1
        out = self._workdir / f"job{self._jobs}.out"
        err = self._workdir / f"job{self._jobs}.err"
        job = {
            "spec": spec,
            "args": args,
            "env": dict(env or {}),
            "cwd": str(cwd or self._workdir),
            "stdout": str(out),
            "stderr": str(err),
        }
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(job) + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline()
        if not answer:
            raise RuntimeError("the kill driver stopped")
        status = int(json.loads(answer)["status"])
        return Outcome(status, out.read_text(errors="replace"), err.read_text(errors="replace"))

    def counts(self, args: list[str], **kwargs: object) -> tuple[Outcome, dict[str, int]]:
        """Run without a kill; how many events of each kind the command had."""
        path = self._workdir / f"counts{self._jobs + 1}.json"
        outcome = self.run(f"count:{path}", args, **kwargs)  # type: ignore[arg-type]
        return outcome, {k: int(v) for k, v in json.loads(path.read_text()).items()}


@contextmanager
def kill_server(workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[KillServer]:
    workdir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, str(DRIVER), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(env) if env else None,
    )
    try:
        yield KillServer(process, workdir)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
