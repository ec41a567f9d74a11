"""A first preset for a repository, drafted from its layout for a person to edit.

Areas: one per source directory with enough code (the package's subdirectories, or the top
directories of a flat layout), named after the directory in every language, each with the
CODEOWNERS owners of its path as a comment; the usual infrastructure areas (tests, CI, docs,
build) when the tree has them. Roles, bots and title tags follow the generic preset, with the
bot authors seen in the history added. Nothing is marked ``core``: which areas are
runtime-critical is the one judgement the draft leaves to its reader, and says so.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath

from prdigest.core.presets import _bundled

CODE_SUFFIXES = (
    ".py",
    ".rs",
    ".go",
    ".c",
    ".cc",
    ".cpp",
    ".cu",
    ".h",
    ".hpp",
    ".ts",
    ".js",
    ".java",
)
MIN_FILES = 3  # a directory with fewer code files is no area of its own
MAX_AREAS = 40
INFRA = {
    "tests": (
        ("tests/**", "test/**"),
        "测试",
        "tests",
        "关注测试质量的工程师",
        "engineers who care about the test suite",
    ),
    "ci": (
        (".github/**", ".buildkite/**", ".circleci/**", "ci/**", "tools/**"),
        "CI 与工具",
        "CI and tooling",
        "负责 CI 与开发工具的工程师",
        "engineers who own CI and developer tooling",
    ),
    "docs": (
        ("docs/**", "doc/**", "examples/**", "*.md"),
        "文档与示例",
        "documentation and examples",
        "写文档与示例的同学",
        "people who write docs and examples",
    ),
    "build": (
        (
            "Dockerfile*",
            "setup.py",
            "CMakeLists.txt",
            "cmake/**",
            "requirements*.txt",
            "pyproject.toml",
        ),
        "构建与依赖",
        "build and dependencies",
        "负责构建、依赖与发布的工程师",
        "engineers who own the build, dependencies and releases",
    ),
}
SKIP_DIRS = {
    "tests",
    "test",
    "docs",
    "doc",
    "examples",
    "benchmarks",
    "tools",
    "scripts",
    "ci",
    "third_party",
    "vendor",
    "build",
}


def _code_dirs(paths: Sequence[str]) -> list[str]:
    """Directories that hold code: each top-level directory with enough of it, split into its
    subdirectories when it holds a large share (the main package of most layouts)."""
    code = [PurePosixPath(p) for p in paths if p.endswith(CODE_SUFFIXES)]
    tops = Counter(
        p.parts[0]
        for p in code
        if len(p.parts) > 1 and p.parts[0] not in SKIP_DIRS and not p.parts[0].startswith(".")
    )
    total = sum(tops.values())
    found: list[str] = []
    for top, count in sorted(tops.items()):
        if count < MIN_FILES:
            continue
        subs = Counter(p.parts[1] for p in code if len(p.parts) > 2 and p.parts[0] == top)
        big = [d for d, n in sorted(subs.items()) if n >= MIN_FILES and not d.startswith(".")]
        if count * 5 >= total and len(big) >= 2 and len(found) + len(big) <= MAX_AREAS:
            found += [f"{top}/{d}" for d in big]
        else:
            found.append(top)
    return found


def _owners(directory: str, codeowners: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    owners: list[str] = []
    for pattern, names in codeowners:
        clean = pattern.strip("/").removesuffix("/**").removesuffix("/*")
        if clean and (directory == clean or directory.startswith(clean + "/")):
            owners = list(names)  # later rules win, as in GitHub
    return owners


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _area(
    lines: list[str],
    area_id: str,
    paths: Sequence[str],
    zh: str,
    en: str,
    audience: tuple[str, str] | None,
    comment: str = "",
) -> None:
    lines += ["", "[[area]]"]
    if comment:
        lines.append(f"# {comment}")
    lines += [f"id = {_q(area_id)}", f"name.zh = {_q(zh)}", f"name.en = {_q(en)}"]
    if audience:
        lines += [f"audience.zh = {_q(audience[0])}", f"audience.en = {_q(audience[1])}"]
    lines.append("paths = [" + ", ".join(_q(p) for p in paths) + "]")


def draft_preset(
    repo: str,
    paths: Sequence[str],
    codeowners: Sequence[tuple[str, Sequence[str]]] = (),
    bots: Sequence[str] = (),
) -> str:
    """The TOML text of a draft preset (``parse_preset`` reads it as it is)."""
    generic = _bundled("generic.toml")
    names = sorted({*generic.bots, *bots}, key=str.lower)
    lines = [
        f"# Draft preset for {repo}, made by `prdigest preset draft` from the clone's layout.",
        "# Edit it: give areas their names, mark runtime-critical areas `core = true` (a fix there",
        "# weighs more in triage), add title tags the project uses. See docs/presets.md.",
        f"repo = {_q(repo)}",
        "version = 1",
        "bots = [" + ", ".join(_q(b) for b in names) + "]",
        "",
        "[roles]",
    ]
    for role in ("test", "docs", "ci", "build", "deps", "config", "generated"):
        globs = getattr(generic.roles, role)
        lines.append(f"{role} = [" + ", ".join(_q(g) for g in globs) + "]")
    added: set[str] = set()
    for directory in _code_dirs(paths):
        leaf = PurePosixPath(directory).name
        owners = _owners(directory, codeowners)
        comment = f"CODEOWNERS: {' '.join(owners)}" if owners else ""
        label = leaf.replace("_", " ")
        area_id = leaf.lower().replace("-", "_")
        if area_id in added or area_id in INFRA:
            area_id = directory.lower().replace("/", "_").replace("-", "_")
        added.add(area_id)
        _area(
            lines,
            area_id,
            [f"{directory}/**"],
            label,
            label,
            (f"维护 {directory} 的工程师", f"engineers who maintain {directory}"),
            comment,
        )
    present = {PurePosixPath(p).parts[0] for p in paths}
    for area_id, (globs, zh, en, reader_zh, reader_en) in INFRA.items():
        used = [
            g for g in globs if g.split("/")[0].rstrip("*") in present or "*" in g.split("/")[0]
        ]
        if used:
            added.add(area_id)
            _area(lines, area_id, used, zh, en, (reader_zh, reader_en))
    for rule in generic.tag:
        lines += ["", "[[tag]]", "match = [" + ", ".join(_q(m) for m in rule.match) + "]"]
        if rule.kind:
            lines.append(f"kind = {_q(rule.kind.value)}")
        if rule.area and rule.area in added:
            lines.append(f"area = {_q(rule.area)}")
    return "\n".join(lines) + "\n"
