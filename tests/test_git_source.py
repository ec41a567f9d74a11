"""The git source over a repository the test scripts: squash and merge commits, renames,
binary, non-UTF-8 and huge files, trailers, skipped commits, windows, errors, store, CLI."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from git_helpers import CAROL, DEPENDABOT, ScriptedRepo
from prdigest.analyze import analyze, coverage_of
from prdigest.cli import cli, main
from prdigest.core.errors import ConfigError
from prdigest.core.models import DiffCoverage, Window
from prdigest.core.presets import load_preset
from prdigest.core.records import FileChange, PullRequest
from prdigest.core.window import day_window
from prdigest.sources.base import Skipped as SkippedCommit
from prdigest.sources.base import SyncReport, sync
from prdigest.sources.git import GitSource, read_prs
from prdigest.sources.git.logparse import MAX_PATCH_BYTES, MAX_PATCH_LINES
from prdigest.store import Store, open_store

REPO = "acme/widgets"
DAY = "2026-06-10"  # Asia/Shanghai: 2026-06-09T16:00Z .. 2026-06-10T16:00Z
FRANK = ("Frank", "frank@example.com")

BODY_101 = """## Purpose

Fix an off-by-one in `parse_line`.

Signed-off-by: Alice Zhang <alice@example.com>

## Test Plan

pytest tests/test_app.py

---------

Signed-off-by: Alice Zhang <alice@example.com>
Co-authored-by: Bob <12345+bob-gh@users.noreply.github.com>
Co-authored-by: Dave Li <dave@example.com>"""

APP_V1 = "def parse_line(line):\n    return line[1:]\n\n\ndef main():\n    return 0\n"
APP_V2 = "def parse_line(line):\n    return line[0:]\n\n\ndef main():\n    return 0\n"
UTIL = "".join(f"def helper_{i}():\n    return {i}\n\n\n" for i in range(6))
LATIN1 = "café crème\n".encode("latin-1")
HUGE_LINES = MAX_PATCH_LINES + 5_000


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = ScriptedRepo(tmp_path_factory.mktemp("git") / "widgets")
    repo.write("src/app.py", APP_V1)
    repo.write("src/util.py", UTIL)
    repo.write("README.md", "# widgets\n")
    repo.commit("Initial commit", "2026-06-09T12:00:00+00:00")
    repo.write("src/app.py", APP_V2)
    repo.write("tests/test_app.py", "def test_parse_line():\n    assert parse_line('ab') == 'ab'\n")
    repo.commit(
        f"[Bugfix] Fix the parser's off-by-one (#101)\n\n{BODY_101}", "2026-06-10T01:00:00+00:00"
    )
    repo.git("mv", "src/util.py", "src/helpers.py")
    repo.write("src/helpers.py", UTIL.replace("return 5", "return 50"))
    repo.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    repo.write("data/latin.txt", LATIN1)
    repo.commit(
        "Rename util to helpers, add logo and latin-1 data (#102)", "2026-06-10T02:00:00+00:00"
    )
    repo.git("checkout", "-q", "-b", "feature-x")
    repo.write("src/feature.py", "def feature_x():\n    return 'x'\n")
    repo.commit("Add feature X core", "2026-06-10T02:30:00+00:00", author=CAROL, committer=CAROL)
    repo.write("tests/test_feature.py", "def test_feature_x():\n    assert feature_x() == 'x'\n")
    repo.commit("Test feature X", "2026-06-10T03:00:00+00:00", author=CAROL, committer=CAROL)
    repo.git("checkout", "-q", "main")
    repo.write("data/huge.txt", "".join(f"row {i}\n" for i in range(HUGE_LINES)))
    repo.write("data/bundle.min.js", "x" * (MAX_PATCH_BYTES + 10) + "\n")
    repo.commit("Add generated data (#104)", "2026-06-10T03:30:00+00:00")
    message = (
        "Merge pull request #103 from carol/feature-x\n\nAdd feature X\n\n"
        "Feature X lets users do Y.\n\nCo-authored-by: Erin <erin@example.com>"
    )
    repo.git(
        "merge",
        "-q",
        "--no-ff",
        "feature-x",
        "-m",
        message,
        author=FRANK,
        when="2026-06-10T04:00:00+00:00",
    )
    repo.write("README.md", "# widgets\n\nTypo fixed.\n")
    repo.commit("Fix typo directly on main", "2026-06-10T05:00:00+00:00")
    repo.write("requirements.txt", "requests==2.32\n")
    repo.commit(
        "Bump requests from 2.31 to 2.32 (#105)\n\nBumps requests.\n\n"
        "Signed-off-by: dependabot[bot] <support@github.com>",
        "2026-06-10T06:00:00+00:00",
        author=DEPENDABOT,
    )
    repo.write("src/app.py", APP_V2 + "\n# later\n")
    repo.commit("Later change (#106)", "2026-06-12T03:00:00+00:00")
    return repo.path


def sync_git(
    store: Store, path: Path, repo: str, *, since: datetime, until: datetime
) -> SyncReport:
    """One sync of a window of the clone through the sync loop, as ``prdigest sync --git``."""
    window = Window(since=since, until=until, tz="UTC", label="w")
    return sync(GitSource(path, repo), store.records, window)


def day_items(clone: Path, repo: str = REPO) -> list[PullRequest | SkippedCommit]:
    window = day_window(DAY)
    return list(read_prs(clone, repo, since=window.since, until=window.until))


def by_number(clone: Path, repo: str = REPO) -> dict[int, PullRequest]:
    return {item.number: item for item in day_items(clone, repo) if isinstance(item, PullRequest)}


def file_of(pr: PullRequest, path: str) -> FileChange:
    return next(f for f in pr.files or () if f.path == path)


# -- records ------------------------------------------------------------------------------


def test_window_holds_the_day_newest_first_and_skips_commits_without_a_number(clone: Path) -> None:
    items = day_items(clone)
    assert [i.number if isinstance(i, PullRequest) else "skip" for i in items] == [
        105,
        "skip",
        103,
        104,
        102,
        101,
    ]
    skipped = [i for i in items if isinstance(i, SkippedCommit)]
    assert skipped[0].subject == "Fix typo directly on main"
    assert skipped[0].reason == "no PR number in the subject"


def test_squash_commit_becomes_the_pr_with_trailers_as_authors(clone: Path) -> None:
    pr = by_number(clone)[101]
    assert pr.title == "[Bugfix] Fix the parser's off-by-one"
    assert pr.body == (
        "## Purpose\n\nFix an off-by-one in `parse_line`.\n\n## Test Plan\n\n"
        "pytest tests/test_app.py"
    )
    assert pr.author == "alice"  # login from the no-reply address
    assert [c.author for c in pr.commits or ()] == ["alice", "bob-gh", "Dave Li"]
    assert {c.sha for c in pr.commits or ()} == {pr.merge_commit_sha}
    assert pr.merged_at == datetime(2026, 6, 10, 1, tzinfo=UTC)
    assert pr.url == "https://github.com/acme/widgets/pull/101"
    assert (pr.source, pr.state, pr.base_ref, pr.head_sha) == ("git", "merged", "main", None)
    assert (pr.additions, pr.deletions, pr.changed_files) == (3, 1, 2)


def test_discussion_is_unknown_not_empty(clone: Path) -> None:
    pr = by_number(clone)[101]
    assert (pr.reviews, pr.review_threads, pr.comments, pr.checks, pr.linked_issues, pr.labels) == (
        None,
        None,
        None,
        None,
        None,
        None,
    )
    coverage = coverage_of(pr)
    assert coverage.discussion is False and coverage.checks is False
    assert coverage.diff is DiffCoverage.FULL


def test_patch_is_github_hunk_text(clone: Path) -> None:
    app = file_of(by_number(clone)[101], "src/app.py")
    assert app.status == "modified"
    assert app.patch == (
        "@@ -1,5 +1,5 @@\n def parse_line(line):\n-    return line[1:]\n+    return line[0:]\n"
        " \n \n def main():"
    )


def test_rename_binary_and_non_utf8_files(clone: Path) -> None:
    pr = by_number(clone)[102]
    renamed = file_of(pr, "src/helpers.py")
    assert (renamed.status, renamed.previous_path) == ("renamed", "src/util.py")
    assert (renamed.patch or "").startswith("@@ ")
    assert (renamed.additions, renamed.deletions) == (1, 1)
    logo = file_of(pr, "assets/logo.png")
    assert (logo.status, logo.binary, logo.patch) == ("added", True, None)
    assert (logo.additions, logo.deletions) == (0, 0)
    latin = file_of(pr, "data/latin.txt")
    assert latin.patch == "@@ -0,0 +1 @@\n+caf\ufffd cr\ufffdme"
    assert coverage_of(pr).diff is DiffCoverage.FULL  # a binary file is not a missing patch


def test_huge_files_keep_counts_but_drop_the_patch(clone: Path) -> None:
    pr = by_number(clone)[104]
    huge = file_of(pr, "data/huge.txt")
    assert (huge.additions, huge.patch) == (HUGE_LINES, None)
    one_line = file_of(pr, "data/bundle.min.js")
    assert (one_line.additions, one_line.patch) == (1, None)
    assert pr.additions == HUGE_LINES + 1
    assert coverage_of(pr).diff is DiffCoverage.NONE


def test_true_merge_is_the_pr_with_the_merged_range(clone: Path) -> None:
    pr = by_number(clone)[103]
    assert pr.title == "Add feature X"
    assert pr.body == "Feature X lets users do Y."
    assert pr.author == "carol"  # the fork owner in "from carol/feature-x"
    assert pr.head_ref == "feature-x"
    assert sorted(f.path for f in pr.files or ()) == ["src/feature.py", "tests/test_feature.py"]
    assert [(c.message, c.author) for c in pr.commits or ()] == [
        ("Add feature X core", "Carol"),
        ("Test feature X", "Carol"),
        ("Merge pull request #103 from carol/feature-x", "Erin"),
    ]
    assert pr.head_sha == (pr.commits or ())[1].sha
    assert pr.merged_at == datetime(2026, 6, 10, 4, tzinfo=UTC)


def test_merge_from_a_branch_of_the_same_repository_takes_the_first_commit_author(
    clone: Path,
) -> None:
    pr = by_number(clone, repo="carol/widgets")[103]
    assert pr.author == "Carol"


def test_bot_author_keeps_its_login(clone: Path) -> None:
    pr = by_number(clone)[105]
    assert pr.author == DEPENDABOT[0]
    assert [c.author for c in pr.commits or ()] == ["dependabot[bot]"]
    assert pr.body == "Bumps requests."


def test_whole_history_and_other_windows(clone: Path) -> None:
    everything = list(read_prs(clone, REPO))
    numbers = [i.number for i in everything if isinstance(i, PullRequest)]
    assert numbers == [106, 105, 103, 104, 102, 101]
    assert [i.subject for i in everything if isinstance(i, SkippedCommit)] == [
        "Fix typo directly on main",
        "Initial commit",
    ]
    empty = day_window("2026-06-11")
    assert list(read_prs(clone, REPO, since=empty.since, until=empty.until)) == []


def test_window_survives_committer_dates_out_of_order(tmp_path: Path) -> None:
    repo = ScriptedRepo(tmp_path / "unordered")
    for number, when in [
        (1, "2026-06-10T01:00:00+00:00"),
        (2, "2026-06-08T12:00:00+00:00"),
        (3, "2026-06-10T03:00:00+00:00"),
    ]:
        repo.write("f.txt", f"{number}\n")
        repo.commit(f"Change {number} (#{number})", when)
    window = day_window(DAY)
    items = read_prs(repo.path, REPO, since=window.since, until=window.until)
    assert [i.number for i in items if isinstance(i, PullRequest)] == [3, 1]


def test_stopping_early_ends_the_git_process(clone: Path) -> None:
    items = read_prs(clone, REPO)
    first = next(items)
    items.close()  # e.g. a caller that needed only the newest PR
    assert isinstance(first, PullRequest) and first.number == 106


def test_branch_option_reads_another_branch(clone: Path) -> None:
    items = list(read_prs(clone, REPO, branch="feature-x"))
    assert [i.number if isinstance(i, PullRequest) else i.subject for i in items] == [
        "Test feature X",
        "Add feature X core",
        102,
        101,
        "Initial commit",
    ]
    assert {i.base_ref for i in items if isinstance(i, PullRequest)} == {"feature-x"}


def test_shallow_clone_boundary_is_not_a_pr(clone: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", f"file://{clone}", str(shallow)],
        check=True,
        capture_output=True,
    )
    items = list(read_prs(shallow / "src", REPO))  # any directory inside the clone will do
    assert [i.number for i in items if isinstance(i, PullRequest)] == [106]
    assert [i.reason for i in items if isinstance(i, SkippedCommit)] == [
        "history cut by a shallow clone"
    ]


def test_analyzer_runs_on_git_records(clone: Path) -> None:
    preset = load_preset(REPO)
    for pr in by_number(clone).values():
        dossier = analyze(pr, preset)
        assert dossier.coverage.discussion is False
        assert dossier.reviewers == () and dossier.threads == ()


# -- errors -------------------------------------------------------------------------------


def test_not_a_git_repository(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--git: .* not a git repository"):
        read_prs(tmp_path, REPO)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a directory"):
        read_prs(tmp_path / "nope", REPO)


def test_unknown_branch(clone: Path) -> None:
    with pytest.raises(ConfigError, match="--branch: unknown branch 'nope'"):
        read_prs(clone, REPO, branch="nope")


def test_bad_repository_name(clone: Path) -> None:
    with pytest.raises(ConfigError, match="--repo: expected owner/name"):
        read_prs(clone, "widgets")


def test_repository_without_commits(tmp_path: Path) -> None:
    ScriptedRepo(tmp_path / "empty")
    with pytest.raises(ConfigError, match="has no commits yet"):
        read_prs(tmp_path / "empty", REPO)


# -- store ----------------------------------------------------------------------------------


def test_sync_stores_and_a_second_sync_changes_nothing(clone: Path, tmp_path: Path) -> None:
    window = day_window(DAY)
    with open_store(tmp_path / "db.sqlite3") as store:
        first = sync_git(store, clone, REPO, since=window.since, until=window.until)
        second = sync_git(store, clone, REPO, since=window.since, until=window.until)
        stored = store.records.get(REPO, 101)
    assert (first.details.commits, first.found, first.skipped, first.stored.new) == (6, 5, 1, 5)
    assert (second.stored.new, second.stored.updated, second.stored.unchanged) == (0, 0, 5)
    assert first.skipped_examples[0].subject == "Fix typo directly on main"
    assert stored.source == "git" and stored.reviews is None


def test_sync_never_replaces_a_richer_record(clone: Path, tmp_path: Path) -> None:
    window = day_window(DAY)
    richer = PullRequest.model_validate(
        {
            "schema": "prdigest.pr/v1",
            "repo": REPO,
            "number": 101,
            "title": "From GitHub",
            "merged_at": "2026-06-10T01:00:00+00:00",
            "reviews": [],
            "source": "github",
        }
    )
    with open_store(tmp_path / "db.sqlite3") as store:
        store.records.upsert([richer])
        result = sync_git(store, clone, REPO, since=window.since, until=window.until)
        kept = store.records.get(REPO, 101)
    assert (result.kept, result.stored.new) == (1, 4)
    assert kept.title == "From GitHub"


def test_empty_window_reports_the_newest_commit(clone: Path, tmp_path: Path) -> None:
    window = day_window("2026-07-01")
    with open_store(tmp_path / "db.sqlite3") as store:
        result = sync_git(store, clone, REPO, since=window.since, until=window.until)
    assert (result.details.commits, result.found) == (0, 0)
    assert result.details.newest_commit_at == datetime(2026, 6, 12, 3, tzinfo=UTC)


# -- CLI --------------------------------------------------------------------------------------


def test_cli_sync_then_digest_shows_discussion_unknown(clone: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "db.sqlite3")
    runner = CliRunner()
    synced = runner.invoke(
        cli, ["sync", "--git", str(clone), "--repo", REPO, "--date", DAY, "--db", db]
    )
    assert synced.exit_code == 0, synced.output
    assert (
        "acme/widgets (main) 2026-06-10 (Asia/Shanghai): 6 commit(s), 5 PR(s) found; "
        "stored 5 new, 0 updated, 0 unchanged"
    ) in synced.stdout
    assert "Fix typo directly on main — no PR number in the subject" in synced.stdout
    digest = runner.invoke(cli, ["digest", "--repo", REPO, "--date", DAY, "--db", db])
    assert digest.exit_code == 0, digest.output
    assert digest.stdout.startswith("acme/widgets\n\n")
    assert "评审" not in digest.stdout  # entries do not pretend to know reviews
    markdown = runner.invoke(
        cli, ["digest", "--repo", REPO, "--date", DAY, "--db", db, "--format", "markdown"]
    )
    assert "5 个 PR 的记录不含评审数据" in markdown.stdout
    explained = runner.invoke(cli, ["explain", f"{REPO}#101", "--format", "json", "--db", db])
    coverage = json.loads(explained.stdout)["dossier"]["coverage"]
    assert coverage == {"diff": "full", "discussion": False, "checks": False, "note": ""}


def test_cli_run_git_prints_the_digest_and_the_summary(clone: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--git",
            str(clone),
            "--repo",
            REPO,
            "--date",
            DAY,
            "--db",
            str(tmp_path / "db.sqlite3"),
            "--format",
            "markdown",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "5 PR(s) found" in result.stderr
    assert "#103" in result.stdout and "#101" in result.stdout


def test_cli_empty_window(clone: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--git",
            str(clone),
            "--repo",
            REPO,
            "--date",
            "2026-07-01",
            "--db",
            str(tmp_path / "db.sqlite3"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (
        "no commits in the window, 0 PRs found; the newest commit on main is from "
        "2026-06-12 11:00 (update the clone for later days"
    ) in result.stderr
    assert "窗口内没有合并的 PR" in result.stdout


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (["--git", "{tmp}"], "Error: --git: {tmp}: not a git repository", 2),
        (["--git", "{clone}", "--branch", "nope"], "Error: --branch: unknown branch 'nope' in", 2),
    ],
)
def test_cli_errors(
    clone: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
    code: int,
) -> None:
    filled = [a.format(tmp=tmp_path, clone=clone) for a in args]
    with pytest.raises(SystemExit) as exited:
        main(
            [
                "sync",
                *filled,
                "--repo",
                REPO,
                "--date",
                DAY,
                "--db",
                str(tmp_path / "db.sqlite3"),
            ]
        )
    assert exited.value.code == code
    assert message.format(tmp=tmp_path) in capsys.readouterr().err


def _sync_known(store: Store, path: Path, window: Window) -> SyncReport:
    """A sync as the CLI runs it: the source asks the store which commits it holds."""
    from prdigest.pipeline.registry import SourceSpec, sync_repo

    return sync_repo(store, SourceSpec(repo=REPO, source="git", path=path), window, {})


def test_rerun_reads_only_the_commits_not_stored(
    clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prdigest.sources.git import runner

    window = day_window(DAY)
    streamed: list[bytes | None] = []
    original = runner.stream

    def spy(path: Path, *args: str, stdin: bytes | None = None) -> object:
        streamed.append(stdin)
        return original(path, *args, stdin=stdin)

    with open_store(tmp_path / "db.sqlite3") as store:
        first = _sync_known(store, clone, window)
        full = {r.number: r for r in store.records.stream(REPO)}
        monkeypatch.setattr(runner, "stream", spy)
        second = _sync_known(store, clone, window)
        again = {r.number: r for r in store.records.stream(REPO)}
    assert (first.found, first.stored.new) == (5, 5)
    assert again == full
    # only the commit without a PR number is read again (it is never stored)
    assert len(streamed) == 1 and streamed[0] is not None and streamed[0].count(b"\n") == 1
    assert (second.found, second.details.known, second.stored.new) == (0, 5, 0)
    lines = second.lines()
    assert "6 commit(s), 5 PR(s) found; stored 0 new, 0 updated, 5 unchanged" in lines[0]
    assert "5 PR(s) already stored from their commit, not read again" in lines[1]


def test_known_commits_give_the_records_a_full_read_gives(clone: Path, tmp_path: Path) -> None:
    wide = Window(
        since=datetime(2026, 6, 1, tzinfo=UTC),
        until=datetime(2026, 6, 30, tzinfo=UTC),
        tz="UTC",
        label="june",
    )
    with open_store(tmp_path / "a.sqlite3") as partial, open_store(tmp_path / "b.sqlite3") as whole:
        _sync_known(partial, clone, day_window(DAY))  # one day first, then the month
        report = _sync_known(partial, clone, wide)
        sync_git(whole, clone, REPO, since=wide.since, until=wide.until)
        assert list(partial.records.stream(REPO)) == list(whole.records.stream(REPO))
    assert report.details.known == 5


def test_a_stored_newer_commit_still_wins_over_an_older_one(tmp_path: Path) -> None:
    repo = ScriptedRepo(tmp_path / "twice")
    repo.write("f.txt", "old\n")
    repo.commit("Fix the parser (#7)", "2026-06-08T01:00:00+00:00")
    repo.write("f.txt", "new\n")
    repo.commit("Fix the parser (#7)", "2026-06-10T01:00:00+00:00")
    newest = repo.git("rev-parse", "HEAD").strip()
    june = Window(
        since=datetime(2026, 6, 1, tzinfo=UTC),
        until=datetime(2026, 6, 30, tzinfo=UTC),
        tz="UTC",
        label="june",
    )
    with open_store(tmp_path / "db.sqlite3") as store:
        _sync_known(store, repo.path, day_window(DAY))  # the newer commit only
        report = _sync_known(store, repo.path, june)
        stored = store.records.get(REPO, 7)
    assert stored.merge_commit_sha == newest
    assert report.skipped == 1
    assert "already read from a newer commit" in report.skipped_examples[0].reason
