"""Splitting a PR's ``.diff`` into per-file hunks shaped like GitHub's ``/files`` ``patch``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prdigest.core.errors import UpstreamError
from prdigest.sources.github.diff import FileDiff, count_hunk_lines, split_diff, unquote

from fakegithub import load_fixtures
from fakegithub.server import build_diff, git_quote

DIFF = """\
diff --git a/vllm/engine.py b/vllm/engine.py
index 3b18e51..a8c7f0e 100644
--- a/vllm/engine.py
+++ b/vllm/engine.py
@@ -10,2 +10,3 @@ class Engine:
     def step(self):
-        return None
+        self.steps += 1
+        return self.steps
@@ -40,2 +41,2 @@ def helper():
-    pass
+    return 1
 
diff --git a/docs/logo.png b/docs/logo.png
new file mode 100644
index 0000000..e69de29
Binary files /dev/null and b/docs/logo.png differ
diff --git a/old name.py b/new name.py
similarity index 100%
rename from old name.py
rename to new name.py
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 9daeafb..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
\\ No newline at end of file
"""


def test_split_matches_files_shape():
    engine, logo, rename, gone = split_diff(DIFF)
    assert engine == FileDiff(
        path="vllm/engine.py",
        previous_path=None,
        status="modified",
        binary=False,
        patch="@@ -10,2 +10,3 @@ class Engine:\n     def step(self):\n-        return None\n"
        "+        self.steps += 1\n+        return self.steps\n@@ -40,2 +41,2 @@ def helper():"
        "\n-    pass\n+    return 1\n ",
        additions=3,
        deletions=2,
    )
    assert logo == FileDiff("docs/logo.png", None, "added", True, None, 0, 0)
    assert rename == FileDiff("new name.py", "old name.py", "renamed", False, None, 0, 0)
    assert gone == FileDiff(
        "gone.txt",
        None,
        "removed",
        False,
        "@@ -1 +0,0 @@\n-bye\n\\ No newline at end of file",
        0,
        1,
    )


def test_empty_diff_has_no_files():
    assert split_diff("") == ()


def test_quoted_unicode_paths():
    path = "docs/使用 指南.md"
    diff = (
        f"diff --git {git_quote('a/' + path)} {git_quote('b/' + path)}\n"
        "new file mode 100644\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ {git_quote('b/' + path)}\n@@ -0,0 +1 @@\n+hi\n"
    )
    (only,) = split_diff(diff)
    assert only.path == path and only.status == "added" and only.patch == "@@ -0,0 +1 @@\n+hi"
    assert unquote('"tab\\there \\"q\\""') == 'tab\there "q"'


def test_line_separators_inside_lines_are_kept():
    text = "x = 'a\x0bb\u2028c'\r"
    diff = f"diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-old\n+{text}\n"
    (only,) = split_diff(diff)
    assert only.patch == f"@@ -1 +1 @@\n-old\n+{text}"


def test_mode_only_change_has_no_patch():
    diff = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    assert split_diff(diff) == (FileDiff("run.sh", None, "modified", False, None, 0, 0),)


@pytest.mark.parametrize(
    "broken",
    [
        DIFF[: DIFF.index("+        return self.steps")],  # cut inside a hunk
        DIFF.replace("@@ -40,2 +41,2 @@", "@@ -40,5 +41,2 @@"),  # header says more
        "garbage before\n" + DIFF,
        DIFF.replace("     def step(self):\n", "?    def step(self):\n"),
    ],
    ids=["truncated", "short-hunk", "preamble", "bad-line"],
)
def test_broken_diffs_are_reported_not_stored(broken):
    with pytest.raises(UpstreamError, match="malformed diff"):
        split_diff(broken)


def test_every_fixture_pr_round_trips():
    for record in load_fixtures():
        files = [
            f
            for f in record.get("files") or []
            if f["patch"] or f["binary"] or f["status"] == "renamed"
        ]
        parts = split_diff(build_diff({"files": files}))
        assert [(p.path, p.previous_path, p.binary, p.patch) for p in parts] == [
            (f["path"], f["previous_path"], f["binary"], f["patch"]) for f in files
        ], record["number"]
        for part, f in zip(parts, files, strict=True):
            if part.patch:
                assert (part.additions, part.deletions) == (f["additions"], f["deletions"])


# -- properties -------------------------------------------------------------------------------

line_text = st.text(
    st.characters(blacklist_characters="\n", blacklist_categories=["Cs"]), max_size=20
)
hunk_line = st.tuples(st.sampled_from(" +-"), line_text).map("".join)


@st.composite
def hunk(draw: st.DrawFn) -> str:
    lines = draw(st.lists(hunk_line, min_size=1, max_size=12))
    old = sum(1 for line in lines if line[0] in " -")
    new = sum(1 for line in lines if line[0] in " +")
    return "\n".join([f"@@ -3,{old} +3,{new} @@", *lines])


path_text = st.text(
    st.characters(blacklist_characters='\n\t"\\', blacklist_categories=["Cs", "Cc"]),
    min_size=1,
    max_size=12,
).map(lambda s: f"src/{s.strip() or 'x'}.py")


@given(
    st.lists(
        st.tuples(path_text, st.lists(hunk(), min_size=1, max_size=3)),
        max_size=5,
        unique_by=lambda item: item[0],
    )
)
def test_diff_of_any_hunks_splits_back(files):
    records = [
        {"path": p, "status": "modified", "patch": "\n".join(h), "additions": 0, "deletions": 0}
        for p, h in files
    ]
    parts = split_diff(build_diff({"files": records}))
    assert [(p.path, p.patch) for p in parts] == [(r["path"], r["patch"]) for r in records]


@given(hunk())
def test_counts_match_hunk_headers(text):
    lines = text.split("\n")
    additions, deletions = count_hunk_lines(lines, where="f")
    assert additions == sum(1 for line in lines[1:] if line.startswith("+"))
    assert deletions == sum(1 for line in lines[1:] if line.startswith("-"))
    with pytest.raises(UpstreamError):
        count_hunk_lines(lines[:-1], where="f")  # one line short: the header no longer fits
