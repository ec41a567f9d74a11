"""One run at a time per store and repository, and delivery as close to exactly-once as each
service allows.

Reproduces issue 14: a second ``run-all`` on one store died with ``IntegrityError`` (exit 10) and
still built a site; nothing said "another run is in progress". A run killed right after the SMTP
server accepted a mail, or while a Feishu webhook was answering, posted the message again.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kill_support import kill_server
from pg_support import PgServer
from publish_support import REPO, fixture_record_data, receiver, smtp_receiver, write_jsonl

HOLD = textwrap.dedent(
    """
    import sys
    from prdigest.store import open_store
    with open_store(sys.argv[1]) as store, store.lock(sys.argv[2]):
        print("held", flush=True)
        sys.stdin.readline()
    """
)


def hold_lock(db: str, key: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, db, key],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    holder.wait()
    holder.stdout.close()


def write_config(tmp: Path, db: str | None = None, channels: str = "") -> Path:
    write_jsonl(tmp / "prs.jsonl", fixture_record_data())
    path = tmp / "prdigest.toml"
    db_line = f'db = "{db}"\n' if db and "://" not in db else ""
    path.write_text(
        f'{db_line}[site]\ndir = "public"\n\n[[repos]]\nname = "{REPO}"\npath = "prs.jsonl"\n'
        + channels,
        encoding="utf-8",
    )
    return path


def check_second_run_is_refused(tmp_path: Path, db: str, env: dict[str, str]) -> None:
    config = write_config(tmp_path, db)
    args = ["run-all", "--config", str(config), "--date", "2026-06-10"]
    with kill_server(tmp_path / "jobs") as server:
        first, _ = server.counts(args, env=env, cwd=tmp_path)
        assert first.status == 0, first.stderr
        index = (tmp_path / "public" / "index.html").read_bytes()
        holder = hold_lock(db, REPO)
        try:
            second = server.run("count:" + str(tmp_path / "c2.json"), args, env=env, cwd=tmp_path)
            digest = server.run(
                "count:" + str(tmp_path / "c3.json"),
                [
                    "digest",
                    "--repo",
                    REPO,
                    "--date",
                    "2026-06-10",
                    *(["--db", db] if "://" not in db else []),
                ],
                env=env,
                cwd=tmp_path,
            )
        finally:
            release(holder)
        third, _ = server.counts(args, env=env, cwd=tmp_path)
    assert second.status == 11, second.stderr
    line = second.stderr.strip().splitlines()[-1]
    assert line.startswith(f"Error: another run of {REPO} is in progress (pid {holder.pid} on ")
    assert "since 20" in line and "Traceback" not in second.stderr
    assert "site: not rebuilt: no repository produced a digest" in second.stdout
    assert (tmp_path / "public" / "index.html").read_bytes() == index
    assert digest.status == 11 and "another run of" in digest.stderr
    assert third.status == 0, third.stderr  # the lock went with its holder


def test_a_second_run_on_one_sqlite_store_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "state.sqlite3")
    check_second_run_is_refused(tmp_path, db, {})


def test_a_second_run_on_one_postgresql_database_is_refused(
    pg_server: PgServer, tmp_path: Path
) -> None:
    url = pg_server.create_database()
    check_second_run_is_refused(tmp_path, url, {"PRDIGEST_DB": url})


def test_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    db = str(tmp_path / "state.sqlite3")
    holder = hold_lock(db, REPO)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    holder.stdout.close()
    again = hold_lock(db, REPO)
    release(again)


CHANNELS = """
[channels.team]
type = "feishu"
webhook_env = "PRD_SAFETY_FEISHU_URL"

[channels.mail]
type = "email"
host = "127.0.0.1"
port = {port}
security = "none"
from = "bot@example.org"
to = ["team@example.org"]
"""


@pytest.mark.parametrize(("kill", "mail", "posts"), [("smtp:1", 2, 1), ("http:1", 1, 1)])
def test_a_kill_after_the_service_took_a_message(
    kill: str, mail: int, posts: int, tmp_path: Path
) -> None:
    """smtp:1 kills right after the SMTP server accepted the mail: e-mail is at-least-once, so
    it is sent again with the same Message-ID (clients fold the two). http:1 kills after the
    webhook answered: chat is at-most-once, so it is reported and not posted again."""
    with smtp_receiver() as (mailbox, port):
        order = CHANNELS.format(port=port)
        if kill.startswith("smtp"):  # mail first, so the kill comes before the webhook
            order = order.split("[channels.mail]")[1]
            order = "[channels.mail]" + order + CHANNELS.split("[channels.mail]")[0]
        config = write_config(tmp_path, "state.sqlite3", order)
        args = ["run-all", "--config", str(config), "--date", "2026-06-10"]
        with receiver() as hook, kill_server(tmp_path / "jobs") as server:
            env = {"PRD_SAFETY_FEISHU_URL": f"{hook.url}/hook"}
            killed = server.run(kill, args, env=env, cwd=tmp_path)
            assert killed.status == -signal.SIGKILL
            again, _ = server.counts(args, env=env, cwd=tmp_path)
            third, _ = server.counts(args, env=env, cwd=tmp_path)
            webhook_posts = len(hook.requests)
    assert again.status == 0, again.stdout + again.stderr
    assert third.status == 0, third.stdout + third.stderr
    assert webhook_posts == posts
    assert len(mailbox.messages) == mail
    assert len({m["Message-ID"] for m in mailbox.messages}) == 1
    if kill.startswith("http"):
        assert "UNKNOWN       team: " in again.stdout and "at-most-once" in again.stdout
