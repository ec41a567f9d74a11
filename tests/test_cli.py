"""The CLI: commands end to end, one-line errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prdigest.core.records import PullRequest

from cli_support import run
from conftest import GOLDEN, PR_DIR, REPO


@pytest.fixture
def sample_jsonl(tmp_path: Path, records: list[PullRequest]) -> Path:
    path = tmp_path / "prs.jsonl"
    path.write_text("".join(json.dumps(r.to_json_dict()) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.sqlite3")


def test_demo_prints_the_sample_digest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert out == (GOLDEN / "vllm-2026-06-10.txt").read_text(encoding="utf-8") + "\n"


def test_import_then_digest_to_file(
    capsys: pytest.CaptureFixture[str], sample_jsonl: Path, db: str, tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "import", str(sample_jsonl), "--db", db)
    assert code == 0 and "35 new, 0 updated, 0 unchanged, 0 bad line(s)" in out
    code, out, _ = run(capsys, "import", str(sample_jsonl), "--db", db)
    assert "0 new, 0 updated, 35 unchanged" in out
    target = tmp_path / "out" / "digest.md"
    code, _, err = run(
        capsys,
        "digest",
        "--repo",
        REPO,
        "--date",
        "2026-06-11",
        "--format",
        "markdown",
        "--out",
        str(target),
        "--db",
        db,
    )
    assert code == 0 and f"wrote {target}" in err
    assert target.read_bytes() == (GOLDEN / "vllm-2026-06-11.md").read_bytes()


def test_import_reports_bad_lines_and_keeps_good_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db: str
) -> None:
    good = json.loads((PR_DIR / "56819.json").read_text(encoding="utf-8"))
    missing = dict(good, number=1)
    del missing["title"]
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(good) + "\n{oops\n" + json.dumps(missing) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "import", str(path), "--db", db)
    assert code == 3
    assert "1 new" in out and "2 bad line(s)" in out
    assert f"Error: {path}:2: not valid JSON" in err
    assert f"Error: {path}:3: {REPO}#1 field 'title': required field is missing" in err


def test_json_digest_and_explain(
    capsys: pytest.CaptureFixture[str], sample_jsonl: Path, db: str
) -> None:
    run(capsys, "import", str(sample_jsonl), "--db", db)
    code, out, _ = run(
        capsys,
        "digest",
        "--repo",
        REPO,
        "--since",
        "2026-06-10T00:00",
        "--until",
        "2026-06-12T00:00",
        "--format",
        "json",
        "--top",
        "3",
        "--db",
        db,
    )
    payload = json.loads(out)
    assert code == 0 and payload["total"] == 35 and len(payload["selected"]) == 3
    code, out, _ = run(capsys, "explain", f"{REPO}#56104", "--db", db)
    assert code == 0
    assert "level: must_read" in out and "_try_release_xfer_handle" in out and "TODO(HMA)" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["digest", "--repo", REPO, "--date", "2026-13-40"],
            2,
            "Error: --date: expected today, yesterday or YYYY-MM-DD",
        ),
        (
            ["digest", "--repo", REPO, "--date", "2026-06-10", "--tz", "Mars/Base"],
            2,
            "Error: --tz: unknown time zone 'Mars/Base'",
        ),
        (["digest", "--repo", REPO], 2, "give --date D, or both --since and --until"),
        (
            ["digest", "--repo", REPO, "--since", "2026-06-11", "--until", "2026-06-10"],
            2,
            "Error: --until: must be later than --since",
        ),
        (["explain", f"{REPO}#999999"], 5, f"Error: {REPO}#999999 is not in the store"),
        (["explain", "nonsense"], 2, "expected OWNER/NAME#N"),
    ],
)
def test_errors_are_one_line_with_exit_codes(
    capsys: pytest.CaptureFixture[str], db: str, args: list[str], code: int, message: str
) -> None:
    got, _, err = run(capsys, *args, "--db", db)
    assert got == code
    assert message in err
    assert "Traceback" not in err


def test_export_and_schema(capsys: pytest.CaptureFixture[str], sample_jsonl: Path, db: str) -> None:
    run(capsys, "import", str(sample_jsonl), "--db", db)
    code, out, err = run(capsys, "export", "--repo", REPO, "--db", db)
    assert code == 0 and len(out.splitlines()) == 35 and "exported 35 record(s)" in err
    code, out, _ = run(capsys, "schema")
    assert json.loads(out)["title"] == "prdigest.pr/v1"


def test_db_from_environment(
    capsys: pytest.CaptureFixture[str],
    sample_jsonl: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRDIGEST_DB", str(tmp_path / "env.sqlite3"))
    code, _, _ = run(capsys, "import", str(sample_jsonl))
    assert code == 0 and (tmp_path / "env.sqlite3").exists()


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_database_url_is_never_a_file_and_never_shows_its_password(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    # nothing listens on port 1 of loopback: the connection is refused at once
    url = "postgresql+psycopg://reader:s3cret@127.0.0.1:1/prdigest"
    if how == "environment":
        monkeypatch.setenv("PRDIGEST_DB", url)
        code, out, err = run(capsys, "export")
    else:
        code, out, err = run(capsys, "export", "--db", url)
    assert code == 4, err
    assert err.startswith("Error: cannot open store postgresql+psycopg://reader:***@127.0.0.1:1")
    assert "s3cret" not in out + err
    assert list(tmp_path.rglob("*")) == []  # no SQLite file named after the URL


def test_a_malformed_database_url_is_refused_without_echoing_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "export", "--db", "postgresql+psycopg://u:s3cret@host:notaport/x")
    assert code == 2
    assert "not a valid SQLAlchemy URL" in err and "s3cret" not in err
