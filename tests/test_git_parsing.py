"""Pure parts of the git source with literal inputs: log stream, commit messages, merge walk."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prdigest.sources.git import logparse
from prdigest.sources.git.logparse import RawCommit, parse_log, unquote_path
from prdigest.sources.git.merges import BranchCommit, attribute, parse_headers
from prdigest.sources.git.message import Person, authors, parse_message, parse_person

HEADER = (
    b"\x1e\x1fprdigest\x1f" + b"a" * 40 + b"\x1f" + b"b" * 40 + b"\x1fAl\x1fal@x"
    b"\x1f2026-06-10T09:00:00+08:00\x1f2026-06-10T10:00:00+08:00\n"
)


def log(*diff_lines: bytes, message: bytes = b"Title (#1)\n") -> bytes:
    return HEADER + message + b"\n\x1e\x1fend\n\n" + b"".join(diff_lines)


def parse(data: bytes) -> list[RawCommit]:
    return list(parse_log(io.BytesIO(data).readline))


# -- log stream ------------------------------------------------------------------------------


def test_header_message_and_a_modified_file() -> None:
    [commit] = parse(
        log(
            b"diff --git a/x.py b/x.py\n",
            b"index 1..2 100644\n",
            b"--- a/x.py\n",
            b"+++ b/x.py\n",
            b"@@ -1,2 +1,2 @@ def f():\n",
            b" a\n",
            b"-b\n",
            b"+c\n",
            b"\\ No newline at end of file\n",
        )
    )
    assert commit.sha == "a" * 40 and commit.parents == ("b" * 40,)
    assert commit.committed_at == datetime(2026, 6, 10, 2, tzinfo=UTC)
    assert commit.message == "Title (#1)"
    [change] = commit.files
    assert (change.path, change.status, change.additions, change.deletions) == (
        "x.py",
        "modified",
        1,
        1,
    )
    assert change.patch == "@@ -1,2 +1,2 @@ def f():\n a\n-b\n+c\n\\ No newline at end of file"


def test_lines_in_hunks_that_look_like_headers_are_content() -> None:
    [commit] = parse(
        log(
            b"diff --git a/x.md b/x.md\n",
            b"--- a/x.md\n",
            b"+++ b/x.md\n",
            b"@@ -1 +1,2 @@\n",
            b"--- old rule\n",
            b"+++ new rule\n",
            b"+diff --git is text here\n",
        )
    )
    [change] = commit.files
    assert (change.additions, change.deletions) == (2, 1)
    assert change.patch is not None and change.patch.endswith("+diff --git is text here")


def test_quoted_paths_and_paths_with_spaces() -> None:
    [commit] = parse(
        log(
            b'diff --git "a/caf\\303\\251 \\"q\\".txt" "b/caf\\303\\251 \\"q\\".txt"\n',
            b"new file mode 100644\n",
            b"--- /dev/null\n",
            b'+++ "b/caf\\303\\251 \\"q\\".txt"\n',
            b"@@ -0,0 +1 @@\n",
            b"+x\n",
            b"diff --git a/my file.txt b/my file.txt\n",
            b"deleted file mode 100644\n",
            b"--- a/my file.txt\t\n",
            b"+++ /dev/null\n",
            b"@@ -1 +0,0 @@\n",
            b"-y\n",
        )
    )
    assert [(f.path, f.status) for f in commit.files] == [
        ('café "q".txt', "added"),
        ("my file.txt", "removed"),
    ]


def test_rename_copy_mode_change_and_binary_without_hunks() -> None:
    [commit] = parse(
        log(
            b"diff --git a/old name.py b/new name.py\n",
            b"similarity index 100%\n",
            b"rename from old name.py\n",
            b"rename to new name.py\n",
            b"diff --git a/a.sh b/a.sh\n",
            b"old mode 100644\n",
            b"new mode 100755\n",
            b"diff --git a/a.py b/c.py\n",
            b"similarity index 90%\n",
            b"copy from a.py\n",
            b"copy to c.py\n",
            b"--- a/a.py\n",
            b"+++ b/c.py\n",
            b"@@ -1 +1 @@\n",
            b"-1\n",
            b"+2\n",
            b"diff --git a/img.png b/img.png\n",
            b"index 1..2 100644\n",
            b"Binary files a/img.png and b/img.png differ\n",
        )
    )
    rows = [(f.path, f.previous_path, f.status, f.binary, f.patch is None) for f in commit.files]
    assert rows == [
        ("new name.py", "old name.py", "renamed", False, False),
        ("a.sh", None, "modified", False, False),
        ("c.py", "a.py", "copied", False, False),
        ("img.png", None, "modified", True, True),
    ]
    assert commit.files[0].patch == ""  # known to have no text change, not unknown


def test_two_commits_and_a_commit_without_changes() -> None:
    second = HEADER.replace(b"a" * 40, b"c" * 40) + b"Merge branch x\n\n\x1e\x1fend\n"
    data = log(b"diff --git a/x b/x\n", b"@@ -1 +1 @@\n", b"-a\n", b"+b\n") + second
    first, empty = parse(data)
    assert (first.changed_files, empty.changed_files, empty.files) == (1, 0, ())
    assert empty.message == "Merge branch x"


def test_non_utf8_bytes_are_replaced() -> None:
    [commit] = parse(
        log(
            b"diff --git a/l.txt b/l.txt\n",
            b"@@ -0,0 +1 @@\n",
            b"+caf\xe9\n",
            message=b"Caf\xe9 (#1)\n",
        )
    )
    assert commit.message == "Caf\ufffd (#1)"
    assert commit.files[0].patch == "@@ -0,0 +1 @@\n+caf\ufffd"


def test_over_long_line_drops_the_patch_and_the_stream_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logparse, "MAX_PATCH_BYTES", 64)
    [commit] = parse(
        log(
            b"diff --git a/min.js b/min.js\n",
            b"@@ -0,0 +1,2 @@\n",
            b"+" + b"x" * 200 + b"\n",
            b"+y\n",
            b"diff --git a/ok.txt b/ok.txt\n",
            b"@@ -0,0 +1 @@\n",
            b"+ok\n",
        )
    )
    assert [(f.path, f.additions, f.patch) for f in commit.files] == [
        ("min.js", 2, None),
        ("ok.txt", 1, "@@ -0,0 +1 @@\n+ok"),
    ]


def test_limits_on_lines_commit_bytes_and_file_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logparse, "MAX_PATCH_LINES", 3)
    monkeypatch.setattr(logparse, "MAX_COMMIT_PATCH_BYTES", 40)
    monkeypatch.setattr(logparse, "MAX_FILES", 3)
    files = [b"diff --git a/big b/big\n", b"@@ -0,0 +1,3 @@\n", b"+1\n", b"+2\n", b"+3\n"]
    for name in (b"f1", b"f2", b"f3"):
        files += [
            b"diff --git a/" + name + b" b/" + name + b"\n",
            b"@@ -0,0 +1 @@\n",
            b"+0123456789\n",
        ]
    [commit] = parse(log(*files))
    assert [(f.path, f.patch is None) for f in commit.files] == [
        ("big", True),
        ("f1", False),
        ("f2", True),
    ]  # f2 would pass the commit's byte budget
    assert (commit.changed_files, commit.additions) == (4, 6)  # f3 is counted, not listed


@given(st.binary(max_size=40).filter(lambda b: b"\n" not in b))
def test_unquote_round_trips_git_quoting(raw: bytes) -> None:
    quoted = (
        '"'
        + "".join(
            f"\\{byte:03o}" if byte < 32 or byte > 126 or byte in (34, 92) else chr(byte)
            for byte in raw
        )
        + '"'
    )
    assert unquote_path(quoted.encode()) == raw.decode("utf-8", errors="replace")


# -- messages ---------------------------------------------------------------------------------


def test_squash_subject_takes_the_last_number() -> None:
    parsed = parse_message("Cherry-pick fix (#12) (#15)\n\nBody.")
    assert parsed is not None
    assert (parsed.number, parsed.title, parsed.body, parsed.merge) == (
        15,
        "Cherry-pick fix (#12)",
        "Body.",
        False,
    )


@pytest.mark.parametrize("subject", ["Fix typo", 'Revert "Fix (#12)"', "Bump to #12", "(#)"])
def test_subjects_without_a_pr_number(subject: str) -> None:
    assert parse_message(subject) is None


def test_trailers_anywhere_become_people_and_leave_no_gaps() -> None:
    message = (
        "Squash (#7)\n\n* first\n\nSigned-off-by: A <a@x>\n\n* second\n\n"
        "Signed-off-by: A <a@x>\n\n---------\n\n"
        "Co-authored-by: B <2+bee@users.noreply.github.com>\n"
    )
    parsed = parse_message(message)
    assert parsed is not None
    assert parsed.body == "* first\n\n* second"
    assert [p.identity for p in parsed.people] == ["A", "A", "bee"]


def test_empty_body_is_unknown() -> None:
    parsed = parse_message("Title (#3)\n\nSigned-off-by: A <a@x>")
    assert parsed is not None and parsed.body is None


def test_merge_message_title_and_body() -> None:
    parsed = parse_message("Merge pull request #9 from alice/fix/deep-branch\n\nFix it\n\nWhy.")
    assert parsed is not None
    assert (parsed.number, parsed.title, parsed.body, parsed.head) == (
        9,
        "Fix it",
        "Why.",
        "alice/fix/deep-branch",
    )


def test_merge_message_without_title_falls_back_to_the_subject() -> None:
    parsed = parse_message("Merge pull request #9 from alice/x")
    assert parsed is not None and parsed.title == "Merge pull request #9 from alice/x"


def test_identities_and_deduplication() -> None:
    primary = Person("jack", "QwertyJack@users.noreply.github.com")
    people = (
        Person("QwertyJack", "7554089+QwertyJack@users.noreply.github.com"),
        Person("chen", "1636@qq.com"),
        Person("chen-commits", "1636@qq.com"),
        Person("", "anon@example.com"),
    )
    assert authors(primary, people) == ["QwertyJack", "chen", "anon@example.com"]


# -- merge walk -------------------------------------------------------------------------------


def node(sha: str, *parents: str, day: int = 1) -> BranchCommit:
    return BranchCommit(sha, parents, "N", "n@x", datetime(2026, 6, day, tzinfo=UTC), sha)


def test_each_merge_gets_only_the_commits_it_brought_in() -> None:
    # main: r - m1 - s - m2 ; m1 merges a1-a2 (based on r); m2 merges b1, whose branch
    # merged main (m1) in between, so m1's commits must not be counted again for m2.
    graph = {
        c.sha: c
        for c in [
            node("r"),
            node("a1", "r", day=2),
            node("a2", "a1", day=3),
            node("m1", "r", "a2", day=4),
            node("s", "m1", day=5),
            node("b0", "r", day=2),
            node("bm", "b0", "m1", day=6),
            node("b1", "bm", day=7),
            node("m2", "s", "b1", day=8),
        ]
    }
    result = attribute("m2", graph)
    assert {k: [c.sha for c in v] for k, v in result.items()} == {
        "m1": ["a1", "a2"],
        "m2": ["b0", "bm", "b1"],
    }


def test_headers_parse() -> None:
    raw = b"\x1eabc\x1fp1 p2\x1fN\x1fn@x\x1f2026-06-01T00:00:00+00:00\x1fSubject\n\nBody\n"
    assert parse_headers(raw)["abc"].parents == ("p1", "p2")
    assert parse_headers(raw)["abc"].message == "Subject\n\nBody"


@pytest.mark.parametrize(
    ("trailer", "identity", "email"),
    [
        ("Ann Lee <ann@example.com>", "Ann Lee", "ann@example.com"),
        ("ann <7+ann-gh@users.noreply.github.com>", "ann-gh", "7+ann-gh@users.noreply.github.com"),
        ("[ann-gh](https://github.com/ann-gh)", "ann-gh", ""),
        ("[ann](ann@example.com)", "ann", "ann@example.com"),
        ("ann [ann@example.com](mailto:ann@example.com)", "ann", "ann@example.com"),
        ("ann &lt;“ann@example.com”&gt;", "ann", "ann@example.com"),
        ("ann ann@example.com", "ann", "ann@example.com"),
        ("ann", "ann", ""),
    ],
)
def test_hand_typed_trailer_shapes(trailer: str, identity: str, email: str) -> None:
    person = parse_person(trailer)
    assert (person.identity, person.email) == (identity, email)


def test_empty_trailer_takes_the_person_on_the_next_line_and_placeholders_are_nobody() -> None:
    message = (
        "Title (#4)\n\nText.\nCo-authored-by:\n[ann-gh](https://github.com/ann-gh)\n"
        "Co-authored-by:\n\nMore text.\nSigned-off-by: Your Name <you@example.com>\n"
    )
    parsed = parse_message(message)
    assert parsed is not None
    assert parsed.body == "Text.\n\nMore text."
    assert [p.identity for p in parsed.people] == ["ann-gh"]
