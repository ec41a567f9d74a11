"""run-all as a daily job: clones are fetched first, offline is a warning when it matters,
empty windows post nothing (``skip_empty``), and ``--json`` says what happened."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from git_helpers import ScriptedRepo
from prdigest.cli import main
from prdigest.core.secrets import Secret
from prdigest.pipeline.config import Config, parse_config
from prdigest.pipeline.run_all import RunReport, run_all
from prdigest.publish.channels import Channel, make_channel
from prdigest.store import Store, open_store

from publish_support import receiver

NOW = datetime(2026, 6, 11, 0, 30, tzinfo=UTC)  # 08:30 in Shanghai: yesterday is 2026-06-10
WIDGETS = "acme/widgets"


@pytest.fixture
def remote(tmp_path: Path) -> ScriptedRepo:
    repo = ScriptedRepo(tmp_path / "upstream")
    repo.write("src/app.py", "def parse(line):\n    return line[1:]\n")
    repo.commit("Initial commit", "2026-06-01T12:00:00+00:00")
    return repo


def clone_of(remote: ScriptedRepo, target: Path) -> Path:
    subprocess.run(
        ["git", "clone", "-q", str(remote.path), str(target)],
        env=remote.env(("x", "x@example.com"), ("x", "x@example.com"), "2026-06-01T00:00:00Z"),
        check=True,
        capture_output=True,
    )
    return target


def merge_upstream(remote: ScriptedRepo) -> None:
    remote.write("src/app.py", "def parse(line):\n    return line\n")
    remote.commit("Fix the parser's off-by-one (#101)", "2026-06-10T01:00:00+00:00")


def config_for(clone: Path, extra: str = "", channels: str = "") -> Config:
    text = (
        f'[site]\ndir = "public"\n\n[[repos]]\nname = "{WIDGETS}"\nsource = "git"\n'
        f'path = "{clone}"\n{extra}\n{channels}'
    )
    return parse_config(text, base=clone.parent)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "db.sqlite3") as opened:
        yield opened


def channels_for(config: Config, url: str, client: httpx.Client) -> dict[str, Channel]:
    secrets = {"webhook_env": Secret(url + "/hook")}
    return {
        name: make_channel(name, channel, secrets, client=client)
        for name, channel in config.channels.items()
    }


def daily(store: Store, config: Config, **kwargs: object) -> RunReport:
    return run_all(store, config, channels={}, now=NOW, publish=False, **kwargs)  # type: ignore[arg-type]


def test_a_stale_clone_is_fetched_before_the_window_is_read(
    tmp_path: Path, remote: ScriptedRepo, store: Store
) -> None:
    clone = clone_of(remote, tmp_path / "clone")
    merge_upstream(remote)  # merged upstream after the clone was made
    report = daily(store, config_for(clone))
    run = report.repos[0]
    assert run.error is None and run.warnings == []
    assert run.sync is not None and run.sync.stored.new == 1
    assert run.digest is not None and run.digest.total == 1


def test_fetch_false_reads_the_clone_as_it_is(
    tmp_path: Path, remote: ScriptedRepo, store: Store
) -> None:
    clone = clone_of(remote, tmp_path / "clone")
    merge_upstream(remote)
    report = daily(store, config_for(clone, "fetch = false"))
    assert report.repos[0].digest is not None and report.repos[0].digest.total == 0


def test_a_failing_fetch_is_an_error_of_that_repository(
    tmp_path: Path, remote: ScriptedRepo, store: Store
) -> None:
    clone = clone_of(remote, tmp_path / "clone")
    subprocess.run(
        ["git", "-C", str(clone), "remote", "set-url", "origin", str(tmp_path / "gone.git")],
        check=True,
    )
    run = daily(store, config_for(clone)).repos[0]
    assert run.digest is None
    assert run.error is not None
    assert run.error.startswith(f"git fetch origin failed in {clone}: fatal: '{tmp_path}/gone.git'")


def test_offline_warns_only_when_the_clone_ends_before_the_window(
    tmp_path: Path, remote: ScriptedRepo, store: Store
) -> None:
    clone = clone_of(remote, tmp_path / "clone")
    unreachable = "http://127.0.0.1:9/widgets.git"  # the discard port: connection refused
    subprocess.run(
        ["git", "-C", str(clone), "remote", "set-url", "origin", unreachable], check=True
    )
    run = daily(store, config_for(clone)).repos[0]
    assert run.error is None and run.digest is not None
    assert len(run.warnings) == 1
    warning = run.warnings[0]
    assert warning.startswith(f"could not fetch origin for {clone} (")
    assert warning.endswith(
        "the clone's newest commit on main is from 2026-06-01 20:00, before the window ends, "
        "so PRs merged since are missing"
    )
    covered = daily(store, config_for(clone), day="2026-05-31").repos[0]
    assert covered.error is None and covered.warnings == []


SLACK = """
[channels.team]
type = "slack"
webhook_env = "PRD_SLACK"
{extra}
"""


@pytest.mark.parametrize(("extra", "posts"), [("", 0), ("skip_empty = false", 1)])
def test_an_empty_window_posts_nothing_unless_the_channel_asks(
    tmp_path: Path, remote: ScriptedRepo, store: Store, extra: str, posts: int
) -> None:
    clone = clone_of(remote, tmp_path / "clone")
    config = config_for(clone, channels=SLACK.format(extra=extra))
    with receiver(answer=b"ok") as service, httpx.Client() as client:
        report = run_all(store, config, channels=channels_for(config, service.url, client), now=NOW)
        assert len(service.requests) == posts
    (outcome,) = report.repos[0].deliveries
    assert outcome.status == ("skipped_empty" if posts == 0 else "sent")
    assert report.ok


def test_run_all_json_summary(
    tmp_path: Path,
    remote: ScriptedRepo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clone_of(remote, tmp_path / "clone")
    merge_upstream(remote)
    path = tmp_path / "prdigest.toml"
    path.write_text(
        f'db = "state.sqlite3"\n[site]\ndir = "public"\n\n[[repos]]\nname = "{WIDGETS}"\n'
        f'source = "git"\npath = "clone"\n' + SLACK.format(extra=""),
        encoding="utf-8",
    )
    with receiver(answer=b"ok") as service:
        monkeypatch.setenv("PRD_SLACK", service.url + "/hook")
        code = 0
        try:
            main(["run-all", "-c", str(path), "-d", "2026-06-10", "--json"])
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        code2 = 0
        try:
            main(["run-all", "-c", str(path), "-d", "2026-06-09", "--json"])
        except SystemExit as exc:
            code2 = int(exc.code or 0)
        empty = json.loads(capsys.readouterr().out)
    assert (code, err) == (0, "")
    summary = json.loads(out)
    assert summary["ok"] is True and summary["problems"] == 0
    assert summary["totals"] == {
        "synced": 1,
        "stored": 1,
        "sent": 1,
        "already_sent": 0,
        "skipped": 0,
        "failed": 0,
    }
    (repo,) = summary["repos"]
    assert repo["repo"] == WIDGETS and repo["label"] == "2026-06-10" and repo["error"] is None
    assert repo["synced"] == {"found": 1, "new": 1, "updated": 0, "unchanged": 0, "problems": []}
    assert repo["stored"] == {"lang": "zh", "prs": 1, "changed": True}
    assert [(c["channel"], c["status"]) for c in repo["channels"]] == [("team", "sent")]
    assert summary["site"]["digests"] == 1 and summary["site_error"] is None
    assert code2 == 0
    assert empty["totals"]["skipped"] == 1 and empty["totals"]["sent"] == 0
    assert empty["repos"][0]["channels"][0]["status"] == "skipped_empty"
