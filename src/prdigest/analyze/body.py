"""Facts from the PR body and title: template sections, claims with figures, the sentences that
say why, issue references.

Templates recognised: vLLM's (``## Purpose``, ``## Test Plan``, ``## Test Result``, each
preceded by an HTML comment telling the author what to write, and a collapsible checklist at the
end), vllm-ascend's (``### What this PR does / why we need it?``, ``### Does this PR introduce
_any_ user-facing change?``, ``### How was this patch tested?``) and the generic shapes
(``Motivation``, ``Changes``, ``Testing``). Comments and the checklist are stripped before a
section is judged empty.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from prdigest.core.models import (
    ClaimFact,
    ComparisonFact,
    Provenance,
    RationaleFact,
    SectionFact,
    Series,
)

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADING = re.compile(r"^\s{0,3}(#{1,4})\s+(.+?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^\s*\*\*(.+?)\*\*:?\s*$")
# the PR template's questions written without their ``###`` (21 of 1,317 vllm-ascend bodies):
# still headings, never the body's words
_BARE_HEADING = re.compile(
    r"^\s{0,3}((?:what this pr does / why we need it|does this pr introduce _?any_? user-facing "
    r"change|how was this patch tested)\??)\s*$",
    re.I,
)
_CHECKLIST_START = re.compile(r"<details>|Essential Elements of an Effective PR", re.I)
_PLACEHOLDER = re.compile(r"^(?:n/?a|none|tbd|todo|-|\.\.\.|pending|[-*_]{3,})\.?$", re.I)

SECTION_NAMES = {
    "purpose": (
        "purpose",
        "motivation",
        "summary",
        "description",
        "what this pr does",
        "what",
        "why",
        "background",
        "problem",
        "root cause",
        "目的",
    ),
    "changes": ("changes", "change", "modifications", "what changed", "solution", "design"),
    "user_facing": ("does this pr introduce", "user-facing change", "user facing change"),
    "test_plan": (
        "test plan",
        "testing",
        "how was this tested",
        "how was this patch tested",
        "tests",
        "validation",
        "verification",
        "测试计划",
    ),
    "test_result": ("test result", "test results", "results", "测试结果"),
    "benchmark": ("benchmark", "benchmarks", "performance", "perf", "benchmark results"),
    "notes": ("notes", "note", "follow-up", "follow-ups", "followups", "limitations"),
}

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# a range is one figure (``5~9%``, ``1.27x-9.73x``): its low end alone would misstate it
_FIGURE = re.compile(
    rf"(?<![\w.,])(?:[+\-−~]?\s?(?:{_NUMBER})\s?(?:[-~～–]\s?(?:{_NUMBER})\s?)?%"
    rf"|(?:{_NUMBER})(?:\s?[x×]?\s?[-~～–]\s?(?:{_NUMBER}))?\s?[x×](?![\w])"
    rf"|(?:{_NUMBER})\s?(?:ms|s|us|µs|GB|GiB|MB|MiB|tok/s|tokens/s|req/s|QPS)\b)"
)
_METRIC = re.compile(
    r"\b(?:throughput|latency|ITL|TTFT|TPOT|e2e|end-to-end|speed-?up|faster|slower|memory|"
    r"accuracy|QPS|tok/s|tokens/s|req/s|goodput|bandwidth|overhead|utili[sz]ation|"
    r"acceptance|hit rate|reduction|improve(?:s|d|ment)?|regression|gsm8k|lm_eval)\b|"
    r"吞吐|延迟|加速|显存|提升|降低",
    re.I,
)
_MOTION = re.compile(
    r"speed-?up|faster|slower|reduction|improve(?:s|d|ment)?|regression|加速|提升|降低", re.I
)
_ISSUE_REF = re.compile(r"(?<![\w/])#(\d{2,7})\b")
_GH_ISSUE_URL = re.compile(r"github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)")
_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)", re.I)
_REVERTS = re.compile(r"\brevert(?:s|ing)?\s+(?:[^#\n]{0,80}?)#(\d+)", re.I)
_SERIES = re.compile(r"[\[(]\s*(?:part\s*)?(\d{1,2})\s*/\s*(\d{1,2})\s*[\])]", re.I)
_TAG = re.compile(r"^\s*\[([^\]]{1,40})\]\s*")
_TRAILING_NUMBER = re.compile(r"\s*\(#\d+\)\s*$")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class BodyLine:
    number: int  # 1-based line of the original body
    text: str


_QUOTED_TAGS = re.compile(r'^["“]\s*\[')


def split_title(title: str) -> tuple[tuple[str, ...], str]:
    """Bracket tags and the rest: ``[Bugfix][NIXL] Fix x`` → (("Bugfix", "NIXL"), "Fix x")."""
    tags: list[str] = []
    rest = title.strip()
    if _QUOTED_TAGS.match(rest):  # a title in quotes would hide the tags after its quote
        rest = rest[1:].strip().rstrip('"“”').rstrip()
    while True:
        match = _TAG.match(rest)
        if not match:
            break
        tags.append(match.group(1).strip())
        rest = rest[match.end() :]
    rest = _TRAILING_NUMBER.sub("", rest).strip().lstrip(":：-– ").strip() or title.strip()
    return tuple(tags), rest


def visible_lines(body: str | None) -> tuple[BodyLine, ...]:
    """Body lines without HTML comments or the trailing checklist, numbered as in the body.

    Memoised for the last few bodies: four fact extractors read the same body in a row.
    """
    if not body:
        return ()
    return _visible_lines(body)


@functools.lru_cache(maxsize=4)
def _visible_lines(body: str) -> tuple[BodyLine, ...]:
    # a byte-order mark left by an editor would hide the first heading
    text = body.removeprefix("\ufeff").replace("\r\n", "\n")
    # blank out comments but keep line numbering stable
    text = _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines: list[BodyLine] = []
    in_fence = False
    for number, line in enumerate(text.split("\n"), start=1):
        if _CHECKLIST_START.search(line) and not in_fence:
            break
        if line.strip().startswith("```"):
            in_fence = not in_fence
        lines.append(BodyLine(number, line))
    return tuple(lines)


def heading_of(line: str) -> str | None:
    """The heading a body line is (``## Purpose``, ``**Notes**``), else ``None``."""
    match = _HEADING.match(line) or _BOLD_HEADING.match(line) or _BARE_HEADING.match(line)
    return match.group(match.lastindex or 1).strip() if match else None


def _section_key(heading: str) -> str | None:
    low = heading.lower().replace("_", "").strip(" :*?")
    for key, names in SECTION_NAMES.items():
        if any(low == n or low.startswith((n + " ", n + ":")) for n in names):
            return key
    return None


MAX_HEADING_LEVEL = 5  # a bold line used as a heading: no # heading is below it


def extract_sections(body: str | None) -> list[SectionFact]:
    """The body's known sections, each up to the next heading; a section with no text of its
    own before subsections holds them, to the next heading of its level or above (``## Results``
    with only ``### DeepSeek V3.2 …`` tables under it is no empty section)."""
    sections: list[SectionFact] = []
    current: tuple[str, str, int] | None = None
    level = 0  # the current section's heading level (a bold heading: below every # level)
    nested = False  # the current section's text is its subsections'
    buffer: list[str] = []

    def flush() -> None:
        if current is None:
            return
        key, heading, line_no = current
        content = "\n".join(buffer).strip()
        empty = not content or all(_PLACEHOLDER.match(x.strip()) or not x.strip() for x in buffer)
        sections.append(
            SectionFact(
                id=f"b{len(sections) + 1}",
                provenance=Provenance(kind="body", ref="body", line=line_no),
                name=key,
                heading=heading,
                text=content[:2000],
                empty=empty,
            )
        )

    for line in visible_lines(body):
        hashes = _HEADING.match(line.text)
        match = hashes or _BOLD_HEADING.match(line.text) or _BARE_HEADING.match(line.text)
        heading = match.group(match.lastindex or 1) if match else None
        depth = len(hashes.group(1)) if hashes else MAX_HEADING_LEVEL
        if heading is not None:
            key = _section_key(heading)
            if (
                key is None
                and current is not None
                and hashes
                and depth > level
                and (nested or not any(x.strip() for x in buffer))
            ):
                nested = True  # a section that says nothing before its subsections: theirs
                buffer.append(line.text)
                continue
            if key is not None or current is not None:
                flush()
                buffer = []
                current = (key, heading.strip(), line.number) if key else None
                level, nested = depth, False
                continue
        if current is not None:
            buffer.append(line.text)
    flush()
    return sections


def extract_claims(body: str | None, *, limit: int = 6) -> list[ClaimFact]:
    """Lines of the body that state an effect with a figure (``ITL -5~9%``, ``2.1x faster``).

    A table row counts too, with the metric taken from the table's header row
    (``| concurrency | before (tok/s) | after (tok/s) | delta |`` → ``tok/s``).
    """
    claims: list[ClaimFact] = []
    seen: set[str] = set()
    in_fence = False
    table_header: str | None = None
    for line in visible_lines(body):
        text = line.text.strip()
        if text.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or not text:
            table_header = None if not text else table_header
            continue
        if text.startswith("|"):
            if table_header is None:
                table_header = text
                continue
            if _is_table_rule(text):
                continue
        else:
            table_header = None
        figure = _best_figure(text) if _DIGIT.search(text) else None  # a figure has a digit
        if figure is None:
            continue
        metric = _METRIC.search(text) or (_METRIC.search(table_header) if table_header else None)
        if metric is None:
            continue
        figure_text = re.sub(r"\s+", "", figure).replace("−", "-")
        if figure_text in seen:
            continue
        seen.add(figure_text)
        claims.append(
            ClaimFact(
                id=f"c{len(claims) + 1}",
                provenance=Provenance(kind="body", ref="body", line=line.number),
                text=_clip(text.strip("|*-> ").strip(), 200),
                figure=figure_text,
                metric=metric.group(0),
                in_table=table_header is not None,
            )
        )
        if len(claims) >= limit:
            break
    return claims


def _best_figure(text: str) -> str | None:
    """The most claim-like figure of a line: a multiplier, then a percentage, then a value."""
    found = [m.group(0) for m in _FIGURE.finditer(text)]
    if not found:
        return None

    def rank(figure: str) -> int:
        if figure.rstrip().endswith(("x", "×")):
            return 0
        return 1 if figure.rstrip().endswith("%") else 2

    return min(found, key=rank)


def _is_table_rule(text: str) -> bool:
    return bool(re.fullmatch(r"\|?[\s:\-|]+\|?", text))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def issue_refs(text: str | None, repo: str) -> list[tuple[int, int, bool]]:
    """(number, line, closing) for each ``#N`` or same-repo issue URL in a text, in order."""
    if not text:
        return []
    found: dict[int, tuple[int, int, bool]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        closing = {int(n) for n in _CLOSING.findall(line)}
        refs = [int(n) for n in _ISSUE_REF.findall(line)]
        refs += [int(n) for r, n in _GH_ISSUE_URL.findall(line) if r.lower() == repo.lower()]
        for ref in refs:
            if ref not in found:
                found[ref] = (ref, number, ref in closing)
    return list(found.values())


def reverted_pr(title: str, body: str | None) -> int | None:
    if not title.lower().startswith("revert"):
        return None
    for text in (title, body or ""):
        match = _REVERTS.search(text) or _TRAILING_NUMBER_IN_TITLE.search(text)
        if match:
            return int(match.group(1))
    return None


_TRAILING_NUMBER_IN_TITLE = re.compile(r"\(#(\d+)\)")


def series_of(title: str) -> Series | None:
    match = _SERIES.search(title)
    if not match:
        return None
    index, total = int(match.group(1)), int(match.group(2))
    if 1 <= index <= total <= 50 and total > 1:
        return Series(index=index, total=total)
    return None


# -- the sentences that say why ---------------------------------------------------------------

_ROOT_CAUSE = re.compile(
    r"\broot[- ]?caus|\bcaus(?:e|es|ed|ing)\b|\bbecause\b|\bdue to\b|\bthe reason\b|"
    r"\bas a result\b|\bthis (?:is|was) why\b|\b(?:leads?|led|results?|resulted) (?:to|in)\b|"
    r"\binstead of\b.*\b(?:so|which|caus\w*|leading)\b|根因|原因|导致|由于",
    re.I,
)
SEVERE = re.compile(
    r"\b(?:crash\w*|hang\w*|deadlock\w*|leak\w*|OOM|out of memory|out[- ]of[- ](?:range|bounds?)|"
    r"OOB|overflow\w*|garbled|corrupt\w*|wrong|incorrect(?:ly)?|inconsisten\w*|race\w*|"
    r"(?<!-)mismatch\w*(?!-)|"  # not a feature's name: "TP-mismatch transfer"
    r"NaN|accuracy|precision|stale|starv\w*|silent(?:ly)?|negative|never (?:finish|free|releas)\w*|"
    r"segfault|core dump|stuck|diverge\w*|regression|loop(?:ing)? output)\b|"
    r"崩溃|卡死|泄漏|乱码|精度",
    re.I,
)
_SYMPTOM = re.compile(SEVERE.pattern + r"|\b(?:error|fail(?:s|ed|ure)?|exception)\b", re.I)
_MOTIVATION = re.compile(
    r"\b(?:to (?:avoid|prevent|reduce|remove|support|enable|improve|speed up|fix)|in order to|"
    r"we need|so (?:we|that)|"
    r"this (?:pr|pull request|change|patch) (?:only )?(?:fix|add|make|remove|avoid|reduce|"
    r"introduce|implement|support|enable|improve|update|change|replace|move|refactor|override|"
    r"allow|ensure|extend|optimi[sz]e|"
    r"provide|align|unif(?:y|ie)|split|migrate|simplif(?:y|ie)|separate|rename|skip|disable|"
    r"correct|prevent|handle|restore|upgrade|bump|adapt|switch|drop|delete|clean|"
    r"port|backport|decouple|propagate|reorganize|rewrite|standardize|refine|sync|mirror|merge|"
    r"keep|set|build)(?:e?s)?)\b",
    re.I,
)
# Lower-case words one of which every ASCII match of each pattern above contains: an ASCII
# sentence with none of them is ruled out by substring tests (the patterns ignore case, and
# their only non-ASCII alternatives are Chinese words, which no ASCII sentence holds).
_ROOT_CAUSE_WORDS = (
    "caus", "due to", "the reason", "as a result", "why", "lead", "led ", "result", "instead of",
)  # fmt: skip
_SYMPTOM_WORDS = (
    "crash", "hang", "deadlock", "leak", "oom", "out", "oob", "overflow", "garbled", "corrupt",
    "wrong", "incorrect", "inconsisten", "mismatch", "race", "nan", "accuracy", "precision",
    "stale", "starv", "silent", "negative", "never", "segfault", "core dump", "stuck", "diverge",
    "regression", "loop", "error", "fail", "exception",
)  # fmt: skip
_MOTIVATION_WORDS = ("to ", "we need", "so ", "this ")
# a stop ends a sentence, but not the one of an abbreviation ("(e.g. 2880 / 32)")
_SENTENCE_END = re.compile(
    r"(?<=[.!?。！？])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)\s+|\n", re.I
)
MAX_RATIONALE = 6


# A lead-in to a list of reviewers' (often a review bot's) remarks pasted into the body:
# the list says what someone else suggested, not what the PR does.
_REVIEW_LEAD_IN = re.compile(
    r"^(?:\*\*)?(?:(?:code |reviewer'?s? |review )?feedback|review(?:er)? (?:comments|notes|"
    r"suggestions)|suggestions from (?:the )?review\w*|"
    # a review bot's summary: "However, several critical issues were identified:"
    r"(?:however, )?(?:[\w-]+ )?(?:(?:critical|major|potential|high-priority) )?"
    r"(?:issues|problems|concerns) (?:were|have been) (?:identified|found|raised))\b[^:]{0,40}"
    r":(?:\*\*)?$",
    re.I,
)


# a paragraph in a reviewer's voice ("We recommend updating the call …") judges a version of
# the code, often one the merged diff no longer has
_REVIEW_VOICE = re.compile(
    r"\b(?:we|i) (?:would )?(?:recommend|suggest)|\bit is (?:recommended|suggested)\b", re.I
)


def _prose(body: str | None) -> list[BodyLine]:
    """Paragraphs of the body's prose (wrapped lines joined; a list item is a paragraph of its
    own), outside code fences, tables, headings and quotes, each with its first line number.
    A list of review remarks under a lead-in such as "Feedback on the changes:" is left out up
    to the next heading or the next paragraph that is not a list item, and so is a paragraph
    in a reviewer's voice ("We recommend …")."""
    paragraphs: list[BodyLine] = []
    current: list[str] = []
    start = 0
    in_fence = False
    review = False  # inside a pasted list of review remarks
    gap = False  # a blank line was seen inside it

    def close() -> None:
        if current:
            text = " ".join(current)
            if not _REVIEW_VOICE.search(text):
                paragraphs.append(BodyLine(start, text))
            current.clear()

    for line in visible_lines(body):
        text = line.text.strip()
        if text.startswith("```"):
            in_fence = not in_fence
            close()
            continue
        prose = (
            text
            and not in_fence
            and not text.startswith(("|", ">"))
            and not _HEADING.match(text)
            and not _BARE_HEADING.match(text)
        )
        item = re.match(r"^(?:[-*•]|\d+[.)])\s+", text)
        if review:
            if not text:
                gap = True
                continue
            if not (_HEADING.match(text) or (gap and not item)):
                gap = False
                continue
            review = False
        if not prose:
            close()
            continue
        if not in_fence and _REVIEW_LEAD_IN.match(text):
            close()
            review, gap = True, False
            continue
        if item:
            close()
            text = text[item.end() :]
        if not current:
            start = line.number
        current.append(text)
    close()
    return paragraphs


def _rationale_kind(sentence: str) -> str | None:
    """The most telling kind a sentence states (see :func:`extract_rationale`), or None."""
    low = sentence.lower() if sentence.isascii() else None

    def says(pattern: re.Pattern[str], words: tuple[str, ...]) -> bool:
        if low is not None and not any(word in low for word in words):
            return False
        return pattern.search(sentence) is not None

    if says(_ROOT_CAUSE, _ROOT_CAUSE_WORDS):
        return "root_cause"
    if says(_SYMPTOM, _SYMPTOM_WORDS):
        return "symptom"
    return "motivation" if says(_MOTIVATION, _MOTIVATION_WORDS) else None


def prose_sentences(text: str | None) -> Iterator[tuple[int, str]]:
    """(line number, sentence) of the prose of a body or section, in order (see
    :func:`_prose`); sentences under 20 characters are left out."""
    for paragraph in _prose(text):
        for sentence in _SENTENCE_END.split(paragraph.text):
            sentence = sentence.strip()
            if len(sentence) >= 20:
                yield paragraph.number, sentence


def extract_rationale(
    body: str | None, sections: Sequence[SectionFact] | None = None
) -> list[RationaleFact]:
    """Sentences of the body's prose that state a root cause, a symptom or the motivation, not
    those of its test sections (a reason a test was not run is no reason for the change).

    A sentence may fit several kinds; it is filed under the most telling (root cause, then
    symptom, then motivation). Figures and code names stay verbatim. ``sections``: the body's
    sections, when the caller has parsed them already.
    """
    found: list[RationaleFact] = []
    seen: set[str] = set()
    testing: list[str] | None = None  # the test sections' text, read for the first candidate
    for line, sentence in prose_sentences(body):
        if sentence in seen:
            continue
        kind = _rationale_kind(sentence)
        if kind is None:
            continue
        if testing is None:
            testing = [
                " ".join(x.text.split())
                for x in (extract_sections(body) if sections is None else sections)
                if x.name in ("test_plan", "test_result")
            ]
        if any(" ".join(sentence.split())[:80] in text for text in testing):
            continue  # why the tests were not run ("… because the checkout is not aligned")
        seen.add(sentence)
        found.append(
            RationaleFact(
                id=f"r{len(found) + 1}",
                provenance=Provenance(kind="body", ref="body", line=line),
                kind=kind,
                text=_clip(sentence, 300),
                claim=reduce_claim(sentence),
            )
        )
        if len(found) >= MAX_RATIONALE:
            return found
    return found


# -- what a sentence claims, and what the test section says ----------------------------------

_FLUFF = re.compile(
    r"^(?:(?:this|the) (?:pr|pull request|patch|change|commit)"
    r"(?:\s+(?:is to|aims to|will|tries to|wants to))?\s+|"
    r"in this pr,?\s+|here,?\s+|currently,?\s+|previously,?\s+|as (?:a )?result,?\s+|"
    r"(?:the )?root[- ]?cause(?: is)?(?: that)?:?\s+|(?:motivation|purpose|background|problem|"
    r"fix|bug|issue|why)\s*:\s*|we\s+(?=(?:fix|add|remove|change|make|use|avoid|support)\w*\b)|"
    r"so\s+(?=\w)|and\s+|yes[,.:;!—–-]*\s+)",
    re.I,
)
_INVISIBLE = re.compile("[\u200b-\u200f\u2060\ufeff]")
_MARKUP = re.compile(r"\*\*|__|~~|^\s*(?:[-*•>]|\d+[.)])\s+")
_CODE_SPAN = re.compile(r"(`[^`]*`)")
_INLINE_MARKUP = re.compile(r"\*\*|__|~~")  # past the first code span: no list marker there


def _without_markup(text: str) -> str:
    """The text without emphasis and list markers, code spans kept as written (the ``__`` of
    ``__init__`` is no bold)."""
    parts = _CODE_SPAN.split(text)
    return "".join(
        part if index % 2 else _MARKUP.sub("", part) if index == 0 else _INLINE_MARKUP.sub("", part)
        for index, part in enumerate(parts)
    )


MAX_CLAIM = 150


def reduce_claim(sentence: str, limit: int = MAX_CLAIM) -> str:
    """A body sentence reduced to its claim: markup and lead-ins ("This PR …", "Root cause:",
    "Currently, …") dropped, cut at a clause boundary when long. Code names, figures and the
    author's words stay as written (nothing is paraphrased), so a reader or verifier finds
    every part of it in the body."""
    text = _without_markup(" ".join(_INVISIBLE.sub("", sentence).split())).strip()
    for _ in range(3):
        reduced = _FLUFF.sub("", text, count=1)
        if reduced == text:
            break
        text = reduced
    text = text.rstrip(" .;:,")
    if len(text) > limit:
        cut = max(
            (text.rfind(mark, 0, limit) for mark in ("; ", ", which", ", so ", " so that ", ", ")),
            default=-1,
        )
        text = text[:cut] if cut >= limit // 2 else _clip_words(text, limit)
    if text.count("`") % 2:  # a cut inside a code span: close nothing, drop the half span
        text = text[: text.rfind("`")].rstrip()
    return text


def _clip_words(text: str, limit: int) -> str:
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:-") + "…"


_BOILERPLATE = re.compile(
    r"^\s*[-*]?\s*vLLM (?:version|main)\s*:.*$|^\s*https?://github\.com/\S+/commit/\S+\s*$",
    re.I,
)
_NO_TESTING = re.compile(
    r"^\W*(?:n/?a|none|no|nope|nothing|no (?:need|test\w*|involvement)|not (?:needed|"
    r"involved|applicable|required)|no testing required|documentation[- ]only change.*)\W*$",
    re.I,
)
_LINT = re.compile(
    r"\b(?:pre-commit|lint\w*|ruff|mypy|flake8|pylint|yapf|isort|py_compile|compileall|"
    r"format\w*|git diff --check|git grep|shellcheck|markdownlint|codespell|typos|actionlint|"
    r"clang-format|bash -n)\b",
    re.I,
)
_RAN = re.compile(
    r"\bpytest\b|\btest_\w+|\be2e\b|\bUTs?\b|\bunit ?tests?\b|\bbenchmark\w*|\baccuracy|"
    r"\bgsm8k\b|\blm_eval\b|\bvllm serve\b|\bcurl\b|\bnightly\b|\bCI\b|\bmanual\w*|"
    r"\bverif\w+|\breproduc\w+|\bran\b|\btested\b|\bresults?\b|\bNPU\b|"
    r"\b(?:targeted|smoke|functional|behaviou?r(?:al)?) (?:checks?|tests?)\b|"
    r"\bA[23]\b|\b910\w*|\b310P?\b",
    re.I,
)


_FENCE = re.compile(r"```[^\n]*\n?(.*?)```", re.S)


def section_content(section: SectionFact) -> str:
    """A section's text without the template's boilerplate (vllm-ascend appends the vLLM
    version and commit to its test section)."""
    lines = [x for x in section.text.split("\n") if not _BOILERPLATE.match(x)]
    return "\n".join(lines).strip()


Testing = Literal["unknown", "none", "lint", "described"]


def testing_of(sections: list[SectionFact]) -> Testing:
    """What the body's test sections say was run: ``none`` (absent, empty or "no test"),
    ``lint`` (only linters or compiles), ``described`` (anything else), ``unknown`` (the body
    has no test section at all)."""
    tests = [s for s in sections if s.name in ("test_plan", "test_result")]
    if not tests:
        return "unknown"
    content = "\n".join(section_content(s) for s in tests).strip()
    plain = _FENCE.sub(" ", content)
    if not content or all(
        not x.strip() or _NO_TESTING.match(x.strip()) or _PLACEHOLDER.match(x.strip())
        for x in plain.split("\n")
    ):
        # a section of pasted commands and logs only says what was run in its fences
        fenced = "\n".join(m.group(1) for m in _FENCE.finditer(content)).strip()
        if not fenced:
            return "none"
        content = fenced
    if _LINT.search(content) and not _RAN.search(_LINT.sub(" ", content)):
        return "lint"
    return "described"


_UNIT = r"%|x|×|ms|s|us|µs|GB|GiB|MB|MiB|tok/s|tokens/s|req/s"
_ARROW_SIGN = r"-{1,2}>|→|={1,2}>|⇒"  # ``->``, ``-->``, ``=>``, ``==>``
_ARROW = re.compile(
    rf"(?P<before>(?:{_NUMBER})\s?(?:{_UNIT})?)"
    rf"\s*(?:{_ARROW_SIGN}|to)\s*"
    rf"(?P<after>(?:{_NUMBER})\s?(?:{_UNIT})?)"
)
MAX_COMPARISONS = 4
# a third figure in the chain (``0% -> 40.3% -> 53.7%`` over warm-up runs): a series, not a
# before and after of the change
_CHAIN_ON = re.compile(rf"\s*(?:{_ARROW_SIGN})\s*(?:{_NUMBER})")
_CHAIN_BEHIND = re.compile(rf"(?:{_NUMBER})\s?\S{{0,6}}\s*(?:{_ARROW_SIGN})\s*$")
_DURATION = re.compile(r"\d\s?(?:us|µs|ms|s)$")
# a duration a setting holds, not one a run measured (``timeout 30s -> 60s``)
_SETTING = re.compile(r"\b(?:timeout|interval|ttl|sleep|wait|delay|period|deadline)", re.I)
_MEASURED_IN = ("test_plan", "test_result", "benchmark")


def _metric_of(text: str, before: str, after: str, section: str | None) -> str | None:
    """The metric a before → after line names; a line that names none, in a test or result
    section, with a duration on both sides (``4360us --> 3949us``), measured the time taken."""
    named = [m.group(0) for m in _METRIC.finditer(text)]
    if named:  # the quantity (``QPS``), before a word of how it moved (``improves``)
        return next((m for m in named if not _MOTION.fullmatch(m)), named[0])
    durations = _DURATION.search(before) and _DURATION.search(after)
    if durations and section in _MEASURED_IN and not _SETTING.search(text):
        return "time"
    return None


def extract_comparisons(body: str | None, sections: list[SectionFact]) -> list[ComparisonFact]:
    """Before → after figures of the body (``TPOT 45.2ms -> 44.9ms``, ``from 4360us to
    3949us``) on lines that name a metric; each figure verbatim."""
    found: list[ComparisonFact] = []
    section_at = sorted((s.provenance.line or 0, s.name) for s in sections)
    for line in visible_lines(body):
        text = line.text.strip()
        if "->" not in text and "→" not in text and "=>" not in text and " to " not in text:
            continue
        for match in _ARROW.finditer(text):
            before, after = match["before"].strip(), match["after"].strip()
            if before == after or (
                " to " in match.group(0) and "from" not in text[: match.start()].lower()[-12:]
            ):
                continue
            if _CHAIN_ON.match(text, match.end()) or _CHAIN_BEHIND.search(text[: match.start()]):
                break  # a series of figures on the line: none of it is said as before → after
            section = next((n for at, n in reversed(section_at) if at <= line.number), None)
            metric = _metric_of(text, before, after, section)
            if metric is None:
                break
            found.append(
                ComparisonFact(
                    id=f"v{len(found) + 1}",
                    provenance=Provenance(kind="body", ref="body", line=line.number),
                    before=before,
                    after=after,
                    metric=metric,
                    text=_clip(text.strip("|*-> "), 200),
                    section=section,
                )
            )
            break
        if len(found) >= MAX_COMPARISONS:
            break
    return found


_NO_CHANGE = re.compile(r"^\W*(?:no|none|nope|n/?a|not)\b", re.I)
_USER_WORDS = re.compile(
    r"^\W*yes\b|\busers?\b|\bbehaviou?r|\bdefault\b|\boption|\bconfig|\bflag|\bAPI\b|"
    r"\binterface|\bdeprecat|\bremoved?\b|\bno longer\b|\bnow\b|\bmust\b|\benv",
    re.I,
)
_YES = re.compile(r"^\W*yes\b[\s,.;:!—–-]*", re.I)
_BREAKING = re.compile(
    # "no longer" of what a user gives or relies on ("… is no longer read"), not of what the
    # code does internally ("will no longer subtract the estimate")
    r"\bbreaking\b|\bno longer (?:be )?(?:supports?|supported|accepts?|accepted|available|works?|"
    r"allowed|exists?|recogni[sz]ed|reads?|read|used|honou?red|respected|applied)\b|"
    r"\bremoved?\b|\bdeprecat\w+|\bmust (?:now )?(?:set|use|change|pass|migrate)\b|"
    r"\bincompatib\w+|\brenamed\b|\bnot (?:be )?supported any ?more\b|"
    r"\berrors? out\b|\bfail(?:s)? (?:fast|at startup)\b",
    re.I,
)


# the author says in so many words that nothing breaks ("No breaking changes: all changes
# are backward compatible", "existing keys remain supported with deprecation warnings"),
# whatever else the section names as removed or deprecated
_NOT_BREAKING = re.compile(
    r"\bno\s+breaking\b|\bnon-breaking\b|\bnot\s+(?:a\s+)?breaking\b|\bbackwards?[- ]compatible\b|"
    r"\b(?:remains?|still)\s+(?:\w+\s+)?(?:supported|accepted|works?|valid)\b|\bcontinues?\s+to\s+work\b",
    re.I,
)


def user_facing_of(sections: list[SectionFact]) -> tuple[str, bool]:
    """The user-facing change the body states, reduced, and whether it says users must change
    something (a breaking change); ("", False) when the section says there is none."""
    section = next((s for s in sections if s.name == "user_facing" and not s.empty), None)
    if section is None:
        return "", False
    content = section_content(section)
    if not content or _NO_CHANGE.match(content) or not _USER_WORDS.search(content):
        return "", False
    content = " ".join(_YES.sub("", content, count=1).split())  # wrapped lines are one text
    sentences = [x for x in _SENTENCE_END.split(content) if len(x.strip()) > 3]
    first = next((x for x in sentences if _USER_WORDS.search(x)), sentences[0] if sentences else "")
    breaking = bool(_BREAKING.search(content)) and not _NOT_BREAKING.search(content)
    return reduce_claim(first) or "Yes", breaking
