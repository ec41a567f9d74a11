"""Daily use without traps: what `run` and `digest` make is what `site` and `publish` see, and an
unknown repository or an unsynced window says so instead of printing an empty digest."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from git_helpers import ScriptedRepo
from prdigest.cli import main
from prdigest.core.records import PullRequest

from cli_support import run
from conftest import DAY_A, REPO
from publish_support import receiver

WIDGETS = "acme/widgets"


@pytest.fixture
def db(tmp_path: Path, records: list[PullRequest]) -> str:
    path = tmp_path / "prs.jsonl"
    path.write_text("".join(json.dumps(r.to_json_dict()) + "\n" for r in records), "utf-8")
    store = str(tmp_path / "store.sqlite3")
    main(["import", str(path), "--db", store, "-q"])
    return store


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = ScriptedRepo(tmp_path / "widgets")
    repo.write("src/app.py", "def parse(line):\n    return line[1:]\n")
    repo.commit("Initial commit", "2026-06-09T12:00:00+00:00")
    repo.write("src/app.py", "def parse(line):\n    return line\n")
    repo.commit("Fix the parser's off-by-one (#101)", "2026-06-10T01:00:00+00:00")
    return repo.path


def test_digest_stores_what_it_prints_and_site_sees_it(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    code, printed, err = run(capsys, "digest", "-r", REPO, "-d", DAY_A, "--db", db)
    assert code == 0
    assert err == f"digest stored: {REPO} {DAY_A} (zh) in {db}\n"
    code, _, err = run(capsys, "digest", "-r", REPO, "-d", DAY_A, "--db", db)
    assert err == f"digest unchanged: {REPO} {DAY_A} (zh) in {db}\n"
    site = tmp_path / "site"
    code, out, _ = run(capsys, "site", "-o", str(site), "--db", db)
    assert code == 0 and out.startswith("site: 1 digest(s)")
    page = (site / "vllm-project" / "vllm" / f"{DAY_A}.html").read_text(encoding="utf-8")
    first_title = [line for line in printed.splitlines() if line][1]  # after the repo line
    assert html.escape(first_title, quote=False) in page


def test_no_store_keeps_the_store_as_it_was(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    code, out, err = run(capsys, "digest", "-r", REPO, "-d", DAY_A, "--db", db, "--no-store")
    assert code == 0 and out and err == ""
    code, out, err = run(capsys, "site", "-o", str(tmp_path / "site"), "--db", db)
    assert out.startswith("site: 0 digest(s)")
    assert err == (
        f"note: the store {db} holds no digest; `prdigest digest`, `prdigest run` and "
        "`prdigest run-all` store the digests they make\n"
    )


def test_run_from_a_clone_then_site_and_the_digest_is_there(
    capsys: pytest.CaptureFixture[str], clone: Path, tmp_path: Path
) -> None:
    db = str(tmp_path / "git.sqlite3")
    code, out, err = run(
        capsys,
        "run",
        "--git",
        str(clone),
        "-r",
        WIDGETS,
        "-d",
        "2026-06-10",
        "--db",
        db,
        "-f",
        "md",
    )
    assert code == 0, err
    assert "#101" in out
    assert err.splitlines()[-1] == f"digest stored: {WIDGETS} 2026-06-10 (zh) in {db}"
    code, out, _ = run(capsys, "site", "-o", str(tmp_path / "site"), "--db", db)
    assert out.startswith("site: 1 digest(s)")
    assert (tmp_path / "site" / "acme" / "widgets" / "2026-06-10.json").is_file()


def test_an_unknown_repository_is_not_found_with_the_store_and_the_command(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "digest", "-r", "nosuch/repo", "-d", DAY_A, "--db", db)
    assert (code, out) == (5, "")
    assert err == (
        f"Error: no records of nosuch/repo in the store {db} (it has: {REPO}); fill it with "
        f"`prdigest sync -r nosuch/repo -d {DAY_A} [--git CLONE]`\n"
    )
    code, _, err = run(
        capsys,
        "digest",
        "-r",
        "nosuch/repo",
        "--since",
        "2026-06-10T00:00",
        "--until",
        "2026-06-12T00:00",
        "--db",
        db,
    )
    assert code == 5
    assert "`prdigest sync -r nosuch/repo --since 2026-06-10T00:00:00+08:00 --until " in err


def test_a_name_without_owner_is_a_usage_error(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, err = run(capsys, "digest", "-r", "vllm", "-d", DAY_A, "--db", db)
    assert (code, out) == (2, "")
    assert err == (
        "Error: --repo: expected owner/name, got 'vllm' (give the owner too, e.g. "
        "vllm-project/vllm)\n"
    )


def test_export_of_an_unknown_repository_is_not_found(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "export", "-r", "nosuch/x", "--db", db)
    assert (code, out) == (5, "")
    assert err == f"Error: no records of nosuch/x in the store {db} (it has: {REPO})\n"


def test_an_empty_window_of_a_known_repository_gets_a_note(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "digest", "-r", REPO, "-d", "2026-05-01", "--db", db)
    assert code == 0
    assert out.startswith(REPO)
    assert err.splitlines() == [
        f"note: no PRs of {REPO} merged in 2026-05-01 are in the store {db}; if that window was "
        f"never synced: `prdigest sync -r {REPO} -d 2026-05-01 [--git CLONE]`",
        f"digest stored: {REPO} 2026-05-01 (zh) in {db}",
    ]


def test_site_refuses_to_digest_a_window_with_no_stored_records(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    code, out, err = run(
        capsys, "site", "-o", str(site), "-r", REPO, "-d", "2026-05-01", "--db", db
    )
    assert (code, out) == (5, "")
    assert err == (
        f"Error: no stored PRs of {REPO} merged in 2026-05-01 in the store {db}; if that window "
        f"was never synced, fill it with `prdigest sync -r {REPO} -d 2026-05-01 [--git CLONE]`\n"
    )
    assert not site.exists()
    code, out, _ = run(capsys, "site", "-o", str(site), "-r", REPO, "-d", DAY_A, "--db", db)
    assert code == 0 and out.startswith("site: 1 digest(s)")


def test_publish_sends_the_digest_that_digest_stored(
    capsys: pytest.CaptureFixture[str],
    db: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(
        f'db = "{db}"\n[[repos]]\nname = "{REPO}"\nsource = "github"\n\n'
        '[channels.team]\ntype = "slack"\nwebhook_env = "PRD_TEST_SLACK_URL"\n',
        encoding="utf-8",
    )
    code, _, err = run(capsys, "publish", "--to", "team", "-c", str(config))
    assert code == 5 and err.startswith(f"Error: no stored digest of {REPO} (zh) yet in the store")
    run(capsys, "digest", "-r", REPO, "-d", DAY_A, "--db", db)
    with receiver(answer=b"ok") as service:  # Slack answers a plain "ok"
        monkeypatch.setenv("PRD_TEST_SLACK_URL", f"{service.url}/hook")
        code, out, err = run(capsys, "publish", "--to", "team", "-c", str(config), "-d", DAY_A)
        assert (code, out) == (0, f"  sent          team: {REPO} {DAY_A}\n"), err
        assert len(service.requests) == 1
