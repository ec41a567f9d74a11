"""Run the prdigest CLI and SIGKILL it at a chosen moment (the kill tests' driver).

    python tests/kill_driver.py KIND:N prdigest-args...
    python tests/kill_driver.py serve     (jobs as JSON lines on stdin: see kill_support.py)

The process kills itself, with SIGKILL (nothing is cleaned up, as with ``kill -9``), at the
N-th event of KIND, counted from the start of the command:

* ``ddl``      after the N-th ``CREATE``/``ALTER``/``DROP`` statement reached the database;
* ``sql``      after the N-th SQL statement of any kind;
* ``commit``   just before the N-th transaction commit is sent;
* ``replace``  just before the N-th ``os.replace`` (a site file: the temp file is written);
* ``http``     after the N-th HTTP response was received, before the caller sees it (GitHub,
               the LLM, a webhook that has already taken the message);
* ``smtp``     after the SMTP server accepted the N-th message.

``count:PATH`` kills nothing and writes the number of events of each kind to PATH (JSON) at
exit, so a test can spread its kill points over a whole run. Points are events, never time, so
the tests hold on a loaded machine.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from typing import Any

COUNTS: Counter[str] = Counter()
TARGET: tuple[str, int] | None = None


def _event(kind: str) -> None:
    COUNTS[kind] += 1
    if TARGET is not None and TARGET[0] == kind and COUNTS[kind] >= TARGET[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def _install() -> None:
    import os as os_module
    import smtplib

    import httpx
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "after_cursor_execute")
    def _after(*args: Any) -> None:
        statement = str(args[2]).lstrip().upper()
        if statement.startswith(("CREATE", "ALTER", "DROP")):
            _event("ddl")
        _event("sql")

    @event.listens_for(Engine, "commit")
    def _commit(_conn: Any) -> None:
        _event("commit")

    real_replace = os_module.replace

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        _event("replace")
        real_replace(src, dst, **kwargs)

    os_module.replace = replace

    real_send = httpx.Client.send

    def send(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = real_send(self, request, **kwargs)
        _event("http")
        return response

    httpx.Client.send = send  # type: ignore[method-assign]

    real_sendmail = smtplib.SMTP.sendmail

    def sendmail(self: smtplib.SMTP, *args: Any, **kwargs: Any) -> Any:
        result = real_sendmail(self, *args, **kwargs)
        _event("smtp")
        return result

    smtplib.SMTP.sendmail = sendmail  # type: ignore[method-assign]


def _run(spec: str, args: list[str]) -> None:
    """Run one command in this process, killed at ``spec`` (or counting, ``count:PATH``)."""
    global TARGET
    kind, _, value = spec.partition(":")
    COUNTS.clear()
    TARGET = None if kind == "count" else (kind, int(value))
    from prdigest.cli import main as cli_main

    try:
        cli_main(args)
    finally:
        if kind == "count":
            with open(value, "w") as out:
                out.write(json.dumps(dict(COUNTS)))


def _child(job: dict[str, Any]) -> None:
    os.chdir(job["cwd"])
    os.environ.update(job.get("env", {}))
    for fd, name in ((1, "stdout"), (2, "stderr")):
        handle = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, fd)
        os.close(handle)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's own streams
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    code = 0
    try:
        _run(job["spec"], job["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 99
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    """Fork server: prdigest is imported once; each job (a JSON line on stdin) runs in a fresh
    fork and its exit status (negative: killed by that signal) is written as a JSON line."""
    # Imported before forking, so each job starts at once (the CLI loads most of them lazily;
    # openai alone takes about a second).
    import prdigest.cli
    import prdigest.pipeline.run_all
    import prdigest.publish.channels
    import prdigest.publish.site.builder
    import prdigest.render.atom
    import prdigest.render.html
    import prdigest.sources.jsonl
    import prdigest.write.llm.writer  # noqa: F401

    _install()
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(job)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        sys.stdout.write(json.dumps({"status": code}) + "\n")
        sys.stdout.flush()


def main() -> None:
    if sys.argv[1] == "serve":
        serve()
        return
    _install()
    _run(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    main()
