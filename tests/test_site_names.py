"""Names are data, never paths: file paths, stored digests, site files (names: test_names.py).

Reproduces issue 14: ``prdigest site --out /x/a/b/c/site --repo '../../etc' --date D`` wrote four
files under ``/x/a/b/etc/`` (exit 0) and stored the digest under that name; ``x/../../../../PWNED``
too; the config and the importer accepted ``a/..``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import insert

from prdigest.core.errors import ConfigFileError, RecordError, SiteError, StorageError
from prdigest.core.names import is_repo_name, is_repo_path, repo_problem
from prdigest.core.records import parse_record
from prdigest.pipeline.config import load_config
from prdigest.publish.site.builder import SiteOptions, build_site
from prdigest.store import open_store, schema

from cli_support import run_args as run
from publish_support import REPO, fixture_record_data, fixture_store, make_digest, write_jsonl

BAD_REPOS = [
    "../../etc",
    "x/../../../../PWNED",
    "a/..",
    "a/.",
    "/etc",
    "a/b/c",
    "-a/b",
    "a/b\n",
    "a\\b/c",
    "a/b c",
    "a" * 40 + "/b",
    "a/" + "b" * 101,
    "",
    "a/",
]


@pytest.mark.parametrize("name", BAD_REPOS)
def test_bad_repository_names_are_refused(name: str) -> None:
    assert not is_repo_name(name)
    assert repo_problem(name)


@pytest.mark.parametrize(
    "name", ["vllm-project/vllm", "a/.github", "x/a..b", "A1-b/n_a.m-e", "a" * 39 + "/b" * 1]
)
def test_good_repository_names_pass(name: str) -> None:
    assert is_repo_name(name), repo_problem(name)


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a\\b", "a\0"])
def test_file_paths_must_be_normalised_in_repo_paths(path: str) -> None:
    assert not is_repo_path(path)


@pytest.mark.parametrize("name", ["../../etc", "x/../../../../PWNED", "a/.."])
def test_site_repo_option_cannot_write_outside(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db.sqlite3"
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    run(["import", str(tmp_path / "prs.jsonl"), "--db", str(db)], capsys)
    out = tmp_path / "x" / "a" / "b" / "c" / "site"
    before = {p for p in tmp_path.rglob("*")}
    code, _, err = run(
        ["site", "--out", str(out), "--db", str(db), "--repo", name, "--date", "2026-06-10"],
        capsys,
    )
    assert code == 2 and err.startswith("Error: --repo: ") and "Traceback" not in err
    assert {p for p in tmp_path.rglob("*")} - before <= {
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-shm"),
    }
    with open_store(db) as store:
        assert store.digests.query() == []


def test_digest_command_refuses_a_bad_repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["digest", "--db", str(tmp_path / "d.sqlite3"), "--repo", "a/..", "--date", "2026-06-10"],
        capsys,
    )
    assert code == 2 and "--repo" in err


def test_config_refuses_a_dot_dot_name(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[[repos]]\nname = "a/.."\npath = "x.jsonl"\n', encoding="utf-8")
    with pytest.raises(ConfigFileError, match=r"repos\[0\]\.name"):
        load_config(path)


def test_importer_refuses_dot_dot_repo_and_file_paths() -> None:
    data = fixture_record_data()[0]
    with pytest.raises(RecordError, match="repo"):
        parse_record({**data, "repo": "a/.."})
    files = [{**data["files"][0], "path": "../../outside.py"}]
    with pytest.raises(RecordError, match=r"files\.0\.path"):
        parse_record({**data, "files": files})


def test_a_stored_digest_with_a_bad_name_is_refused_not_rendered(tmp_path: Path) -> None:
    store = fixture_store(tmp_path / "db.sqlite3")
    good = store.digests.put(make_digest(store, "2026-06-10"))
    with store._engine.begin() as conn:  # as an older version could have stored it
        row = {
            "repo": "../../etc",
            "label": good.label,
            "lang": good.lang,
            "tz": good.tz,
            "since": datetime(2026, 6, 9, 16),
            "until": datetime(2026, 6, 10, 16),
            "content_hash": "0" * 64,
            "total": 0,
            "counts": "{}",
            "payload": json.dumps({"bad": True}),
            "created_at": datetime.now(UTC),
            "updated_at": datetime.now(UTC),
        }
        conn.execute(insert(schema.digests).values(**row))
    out = tmp_path / "a" / "b" / "site"
    report = build_site(store.digests, SiteOptions(out_dir=out))
    assert report.digests == 1
    assert len(report.refused) == 1 and "../../etc" in report.refused[0]
    assert not (tmp_path / "a" / "etc").exists()
    assert all(p.resolve().is_relative_to(out.resolve()) for p in out.rglob("*"))
    with pytest.raises(StorageError, match="refused"):
        bad = make_digest(store, "2026-06-10").model_copy(update={"repo": "x/.."})
        store.digests.put(bad)
    store.close()


def test_site_never_follows_a_link_out_of_its_directory(tmp_path: Path) -> None:
    store = fixture_store(tmp_path / "db.sqlite3")
    store.digests.put(make_digest(store, "2026-06-10"))
    out = tmp_path / "site"
    outside = tmp_path / "outside"
    outside.mkdir()
    (out / REPO.split("/")[0]).mkdir(parents=True)
    os.symlink(outside, out / REPO.split("/")[0] / REPO.split("/")[1])
    with pytest.raises(SiteError, match="leaves the site directory"):
        build_site(store.digests, SiteOptions(out_dir=out))
    assert list(outside.iterdir()) == []
    store.close()


def test_run_all_counts_a_refused_digest_as_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db.sqlite3"
    store = fixture_store(db)
    with store._engine.begin() as conn:
        conn.execute(
            insert(schema.digests).values(
                repo="x/..",
                label="2026-06-10",
                lang="zh",
                tz="UTC",
                since=datetime(2026, 6, 10),
                until=datetime(2026, 6, 11),
                content_hash="0" * 64,
                total=0,
                counts="{}",
                payload="{}",
                created_at=datetime.now(UTC),
                updated_at=datetime.now(UTC),
            )
        )
    store.close()
    code, _, err = run(["site", "--out", str(tmp_path / "site"), "--db", str(db)], capsys)
    assert code == 10
    assert "refused stored digest 2026-06-10 (zh)" in err and "x/.." in err
