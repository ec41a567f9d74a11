"""``prdigest run-all`` killed with SIGKILL at many points, then run again, ends as an
uninterrupted run does.

The run syncs from the fake GitHub, writes with the LLM writer against the fake model server,
builds the site and delivers to a local webhook (Feishu) and a local SMTP server. The kill
points are events of the run (schema statements, commits, site file renames, HTTP answers, the
SMTP server accepting the mail), spread over an uninterrupted run's counts, so they do not
depend on time. After each kill the same command runs to the end; then the store (records and
digests), the site (every file, byte for byte) and the deliveries must equal the reference run's,
within the documented rule: the chat message at most once (none only when the run reports it
``UNKNOWN``), the e-mail at least once with a single ``Message-ID``.

The figures go to ``RELIABILITY.md`` (``tests/reliability_report.py``).
"""

from __future__ import annotations

import re
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from prdigest.store import open_store

from fakegithub import REPO, FakeClock, FakeGitHub, window_records
from fakellm import FakeLLM, Reply
from kill_support import KillServer, kill_server
from publish_support import Mailbox, receiver, smtp_receiver
from reliability_report import record

RECORDS = window_records(14)
KINDS = {"ddl": 4, "commit": 10, "http": 10, "replace": 5, "smtp": 1}  # points per kind
SCENARIO = "run-all SIGKILLed {what}, then run again"
WHERE = {  # what each kind of kill point interrupts
    "ddl": "after a schema statement",
    "commit": "before a commit (sync, digest, delivery log)",
    "http": "after an HTTP answer (GitHub, the model, the webhook)",
    "replace": "before a site file's rename",
    "smtp": "after the SMTP server took the mail",
}


CONFIG = """
db = "state.sqlite3"

[site]
dir = "public"
base_url = "https://digests.example.org/"

[llm]
base_url = "{llm}"
model = "m"
concurrency = 1
retries = 0
repairs = 0

[[repos]]
name = "{repo}"
source = "github"
timezone = "UTC"
writer = "llm"
top = 4

[channels.mail]
type = "email"
host = "127.0.0.1"
port = {smtp}
security = "none"
from = "bot@example.org"
to = ["team@example.org"]

[channels.team]
type = "feishu"
webhook_env = "PRD_KILL_FEISHU_URL"
"""


def snapshot(workdir: Path) -> dict[str, Any]:
    with open_store(workdir / "state.sqlite3") as store:
        records = {pr.number: pr.to_json_dict() for pr in store.records.stream(REPO)}
        digests = [(d.label, d.lang, d.content_hash) for d in store.digests.query()]
    site = workdir / "public"
    files = {str(p.relative_to(site)): _timeless(p) for p in site.rglob("*") if p.is_file()}
    return {"records": records, "digests": digests, "site": files}


def _timeless(path: Path) -> bytes:
    """A site file's bytes; a feed's ``<updated>`` says when the digest was stored, which
    differs between two runs by design, so it is blanked."""
    data = path.read_bytes()
    if path.suffix == ".xml":
        data = re.sub(rb"<updated>[^<]*</updated>", b"<updated/>", data)
    return data


def spread(count: int, points: int) -> list[int]:
    """``points`` event numbers spread over 1..count (first and last included)."""
    if count <= points:
        return list(range(1, count + 1))
    step = (count - 1) / (points - 1)
    return sorted({1 + round(i * step) for i in range(points)})


@pytest.mark.slow
def test_run_all_killed_at_30_points_ends_as_an_uninterrupted_run(tmp_path: Path) -> None:
    tried: Counter[str] = Counter()
    survived: Counter[str] = Counter()
    with (
        smtp_receiver() as (mailbox, port),
        FakeGitHub(RECORDS, clock=FakeClock(time.time())) as github,
        FakeLLM(lambda call: Reply(content="not a JSON object")) as llm,
        receiver() as hook,
        kill_server(tmp_path / "jobs") as server,
    ):
        env = {
            "GITHUB_TOKEN": github.token,
            "GITHUB_API_URL": github.url,
            "GITHUB_GRAPHQL_URL": github.graphql_url,
            "PRDIGEST_LLM_API_KEY": "sk-kill-test",
            "PRD_KILL_FEISHU_URL": f"{hook.url}/hook",
        }
        config_text = CONFIG.format(llm=llm.url, repo=REPO, smtp=port)

        def fresh(name: str) -> Path:
            workdir = tmp_path / name
            workdir.mkdir()
            (workdir / "prdigest.toml").write_text(config_text, encoding="utf-8")
            hook.requests.clear()
            mailbox.clear()
            return workdir

        args = ["run-all", "--date", "2026-06-10", "--config", "prdigest.toml"]
        reference_dir = fresh("reference")
        done, counts = server.counts(args, env=env, cwd=reference_dir)
        assert done.status == 0, done.stdout + done.stderr
        reference = snapshot(reference_dir)
        assert len(reference["records"]) == len(RECORDS) and reference["digests"]
        assert len(hook.requests) == 1 and len(mailbox.messages) == 1
        points = [(k, n) for k, many in KINDS.items() for n in spread(counts[k], many)]
        assert len(points) >= 30, counts
        for kind, number in points:
            tried[kind] += 1
            survived[kind] += _kill_and_rerun(
                server,
                fresh(f"{kind}{number}"),
                args,
                env,
                f"{kind}:{number}",
                reference,
                hook,
                mailbox,
            )
    for kind, what in WHERE.items():
        record(SCENARIO.format(what=what), tried[kind], survived[kind])
    assert survived == tried and sum(tried.values()) >= 30


def _kill_and_rerun(
    server: KillServer,
    workdir: Path,
    args: list[str],
    env: dict[str, str],
    spec: str,
    reference: dict[str, Any],
    hook: Any,
    mailbox: Mailbox,
) -> int:
    killed = server.run(spec, args, env=env, cwd=workdir)
    assert killed.status == -signal.SIGKILL, f"{spec}: not killed ({killed.status})"
    again, _ = server.counts(args, env=env, cwd=workdir)
    assert again.status == 0, f"{spec}: {again.stdout}{again.stderr}"
    state = snapshot(workdir)
    assert state["records"] == reference["records"], spec  # no PR lost, none changed
    assert state["digests"] == reference["digests"], spec  # no digest lost or duplicated
    assert state["site"] == reference["site"], spec  # every page as an uninterrupted run's
    posts = len(hook.requests)
    assert posts == 1 or (posts == 0 and "UNKNOWN       team" in again.stdout), spec
    ids = {m["Message-ID"] for m in mailbox.messages}
    assert 1 <= len(mailbox.messages) <= 2 and len(ids) == 1, spec
    return 1
