"""Verify: check a written entry against the PR record it is about (DESIGN §2, stage verify).

A model writes fluent text, and fluent text can name a function that does not exist, quote a
speed-up nobody measured, or thank a reviewer who never took part. Every LLM entry is checked
here before it is used:

* each backticked name (``foo``, ``Cls.method``, ``path.py::fn``, ``fn()``), each file path, each
  ``@login`` and each figure must occur in the PR record (title, body, files and patches,
  commits, reviews, threads, comments, linked issues, checks) or in the dossier derived from it;
* ``@login`` must be a participant (author, reviewer, commenter, commit author), or a decorator
  that appears in the code;
* the verdict phrase opening the paragraph must state the level triage computed;
* length bounds and the language's script rule (for Chinese, a share of Chinese characters;
  code names, paths and logins aside), both from the locale file;
* one line, no Markdown, no links: the text layout is plain text;
* a title must not describe another PR of the day: an English word of the title that the PR's
  own record lacks but another PR's title of the window has is a borrowed title;
* a figure or comparative without a number to back it (「约一倍」, 「大幅」, 「显著提升」, "2x
  faster") needs a measured claim in the dossier; an attribution to reviewers (「评审者认为」,
  "reviewers noted") needs a person who reviewed or commented in the record;
* a must-read paragraph stands on at least two real code names (dossier symbols, files, tests
  or design facts), so an entry that only paraphrases the description loses to the template.

Assumptions: a bare integer up to 10 without a unit is an enumeration or a count ("(2)", "两处"),
not a figure; a number elsewhere must appear in the record or the dossier (sums such as
additions + deletions are accepted). Matching is on the raw record text, so a name quoted in a
review but absent from the code still passes: the record, not the final diff, is the ground.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from prdigest.core.locale import locale
from prdigest.core.models import Assessment, Dossier, Level, Role
from prdigest.core.records import PullRequest

Field = Literal["title", "paragraph"]

_BACKTICK = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(
    r"(?<![\w/.@-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z]\w*|[\w-]+\.(?:py|pyi|rs|cu|cuh|cpp|cc|hpp|h|c|go|"
    r"ts|js|sh|yaml|yml|toml|json|md|rst|txt|cfg|ini|proto))(?![\w/])"
)
_LOGIN = re.compile(r"(?<![\w`/.])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?)")
_URL = re.compile(r"https?://|www\.", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)")
_UNIT_AFTER = re.compile(r"^\s*(?:%|％|x\b|×|倍|ms|μs|us|s\b|秒|毫秒|GB|MB|KB|GiB|MiB|TB|k\b|K\b)")
_UNIT_FIGURE = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)*)(?:\s*[-~–～到至]\s*(\d+(?:[.,]\d+)*))?"
    r"\s*(?:%|％|x\b|×|倍|ms|μs|us|s\b|秒|毫秒|GB|MB|KB|GiB|MiB|TB|k\b|K\b)"
)
_MARKDOWN = re.compile(
    r"\*\*|__|```|\[[^\]]+\]\([^)]+\)|^\s{0,3}#{1,6}\s|^\s*[-*+]\s|\|\s*-{3,}|<[A-Za-z/][^>]*>",
    re.M,
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_CALL = re.compile(r"^([\w.:]+)\s*\(.*\)$")

SMALL_COUNT = 10
LATIN_WORD_WEIGHT = 2
MIN_MUST_READ_NAMES = 2
_TITLE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_COMMON_WORDS = frozenset(
    """
    the and for with from into when not add fix use new support model models kernel kernels test
    tests bug ops op api config update remove enable disable refactor main
    """.split()  # noqa: SIM905
)
# a comparative or a figure in words: needs a measured claim
_COMPARATIVE = re.compile(
    r"[约近超逾]?[一二两三四五六七八九十百千万半几数]+\s*倍|[约近]?[一二两三四五六七八九]成|翻倍|成倍|倍增|"
    r"大幅|显著(?:提升|提高|降低|减少|加快|改善|优化)|明显(?:提升|提高|降低|减少|加快|改善)|"
    r"实测|测得|性能提升|吞吐提升|延迟降低|"
    r"\b(?:significant(?:ly)?|dramatic(?:ally)?|substantial(?:ly)?|much (?:faster|lower|higher))\b|"
    r"\b\d+(?:\.\d+)?\s*x (?:faster|speed-?up)\b",
    re.I,
)
_REVIEW_ATTRIBUTION = re.compile(
    r"(?:评审|审阅|审查|reviewer)(?:者|人|们|意见|中|记录|s)?\s*"
    r"(?:都|也|一致)?(?:认为|指出|建议|要求|提出|称|表示|担心|确认|同意|批准|质疑|肯定|"
    r"said|noted|suggested|asked|pointed|agreed|approved|argued|flagged)",
    re.I,
)

# Most specific first: "不必精读" must win over "精读", "中等优先级精读" over "值得精读".
VERDICT_PATTERNS: tuple[tuple[re.Pattern[str], Level], ...] = (
    (re.compile(r"无需精读|不需要精读|无需阅读|可以跳过|no need to read", re.I), Level.SKIP),
    (re.compile(r"快速浏览|不必精读|skim", re.I), Level.SKIM),
    (re.compile(r"中等优先级|值得选读|选读|worth reading", re.I), Level.WORTH_READING),
    (re.compile(r"值得精读|建议精读|精读|close read", re.I), Level.MUST_READ),
)
VERDICT_WINDOW = 40  # the verdict opens a paragraph: look at its first characters only


def verdict_of(paragraph: str | None) -> Level | None:
    """The level a paragraph's opening verdict phrase states; ``list_only`` without paragraph."""
    if paragraph is None:
        return Level.LIST_ONLY
    head = paragraph[:VERDICT_WINDOW]
    for pattern, level in VERDICT_PATTERNS:
        if pattern.search(head):
            return level
    return None


@dataclass(frozen=True)
class Problem:
    """One reason an entry failed; ``args`` fill the message of ``code``."""

    code: str
    field: Field
    args: tuple[str, ...] = ()

    def message(self, lang: str) -> str:
        words = locale(lang).verify
        where = words["fields"].get(self.field, self.field)
        return f"{where}: " + str(words[self.code]).format(*self.args)


def _numbers(text: str) -> set[str]:
    found: set[str] = set()
    for raw in _NUMBER.findall(text):
        found.add(raw)
        found.add(raw.replace(",", ""))
        if re.fullmatch(r"\d+\.0+", raw):
            found.add(raw.split(".")[0])
    return found


class Grounds:
    """The PR record as searchable text, built once per PR and shared by all checks.

    ``others`` are the other PRs of the window, ``(number, title)``, for the borrowed-title
    check."""

    def __init__(
        self, pr: PullRequest, dossier: Dossier, others: Sequence[tuple[int, str]] = ()
    ) -> None:
        self.dossier = dossier
        self.others = tuple((n, t) for n, t in others if n != pr.number)
        parts = [pr.title, pr.body or "", pr.head_ref or "", " ".join(pr.labels or ())]
        logins = {pr.author or ""}
        for f in pr.files or ():
            parts += [f.path, f.previous_path or "", f.patch or ""]
        for c in pr.commits or ():
            parts += [c.sha, c.message]
            logins.add(c.author or "")
        for r in pr.reviews or ():
            parts.append(r.body)
            logins.add(r.author or "")
        for t in pr.review_threads or ():
            parts += [t.path or "", t.diff_hunk or ""]
            for comment in t.comments:
                parts.append(comment.body)
                logins.add(comment.author or "")
        for comment in pr.comments or ():
            parts.append(comment.body)
            logins.add(comment.author or "")
        for issue in pr.linked_issues or ():
            parts += [f"#{issue.number}", issue.title, issue.body or ""]
        parts += [check.name for check in pr.checks or ()]
        self.text = "\n".join(parts)
        self.flat = " ".join(self.text.split())
        self.lower = self.text.lower()
        self.code = "\n".join(f.patch or "" for f in pr.files or ())
        self.logins = {_login_key(x) for x in logins if x}
        self.numbers = _numbers(self.text) | _numbers(dossier.model_dump_json())
        self.numbers |= {str(pr.number), str(dossier.additions + dossier.deletions)}
        # a figure with a unit (37%, 2x, 15 ms) must be stated as such, not just any number
        self.figures: set[str] = set()
        for match in _UNIT_FIGURE.finditer(
            self.text + "\n" + " ".join(c.figure for c in dossier.claims)
        ):
            self.figures |= _numbers(" ".join(g for g in match.groups() if g))

    def has_name(self, name: str) -> bool:
        name = name.strip().strip("'\"")
        if not name:
            return True
        candidates = {name, name.rstrip(":").rstrip(",")}
        if match := _CALL.match(name):
            candidates.add(match.group(1))
        for candidate in list(candidates):
            candidates.update(part for part in candidate.split("::") if part)
            if "." in candidate and "/" not in candidate and " " not in candidate:
                tail = candidate.rsplit(".", 1)[-1]
                if not re.fullmatch(r"[A-Za-z]{1,5}", tail):  # Cls.method, not file.py
                    candidates.add(tail)
        return all(c in self.text or " ".join(c.split()) in self.flat for c in _parts(candidates))

    def has_login(self, login: str) -> bool:
        return _login_key(login) in self.logins or f"@{login}" in self.code

    def has_number(self, number: str, *, unit: bool = False) -> bool:
        pool = self.figures if unit else self.numbers
        return number in pool or number.replace(",", "") in pool


def _parts(candidates: set[str]) -> list[str]:
    """``a::b`` must have each part present; other candidates are alternatives (any one)."""
    qualified = [c for c in candidates if "::" in c]
    if qualified:
        return [p for p in qualified[0].split("::") if p]
    return [min(candidates, key=len)] if candidates else []


def _login_key(login: str) -> str:
    return login.lower().removesuffix("[bot]")


def _outside_code(text: str) -> str:
    return _BACKTICK.sub(" ", text)


def _grounding(text: str, field: Field, grounds: Grounds) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()

    def add(code: str, value: str) -> None:
        if (code, value) not in seen:
            seen.add((code, value))
            problems.append(Problem(code, field, (value,)))

    for name in _BACKTICK.findall(text):
        if not _name_ok(name, grounds):
            add("unknown_name", name.strip())
    plain = _outside_code(text)
    for path in _PATH.findall(plain):
        if path not in grounds.text:
            add("unknown_path", path)
    for login in _LOGIN.findall(plain):
        if not grounds.has_login(login):
            add("unknown_login", login)
    scrubbed = _LOGIN.sub(" ", _PATH.sub(" ", plain))
    for match in _NUMBER.finditer(scrubbed):
        number = match.group(1)
        unit = _UNIT_AFTER.match(scrubbed[match.end() :]) is not None
        small = number.isdigit() and int(number) <= SMALL_COUNT and not unit
        if not small and not grounds.has_number(number, unit=unit):
            add("unknown_figure", number + (_unit(scrubbed[match.end() :]) if unit else ""))
    return problems


def _name_ok(name: str, grounds: Grounds) -> bool:
    if grounds.has_name(name):
        return True
    # a short expression the model quoted with different spacing or an elision
    pieces = [p for p in re.split(r"\s*(?:…|\.\.\.)\s*", name) if p.strip()]
    return len(pieces) > 1 and all(grounds.has_name(p) for p in pieces)


def _unit(rest: str) -> str:
    match = _UNIT_AFTER.match(rest)
    return match.group(0).strip() if match else ""


def chinese_share(text: str) -> float:
    """Share of Chinese in prose: CJK characters against Latin words weighted ×2 (an English
    word says about as much as two Chinese characters), outside code, paths, logins and URLs."""
    plain = _LOGIN.sub(" ", _PATH.sub(" ", _outside_code(text)))
    plain = re.sub(r"https?://\S+", " ", plain)
    cjk = len(_CJK.findall(plain))
    latin = LATIN_WORD_WEIGHT * len(_LATIN_WORD.findall(plain))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def _form(text: str, field: Field, lang: str) -> list[Problem]:
    problems: list[Problem] = []
    if "\n" in text or "\r" in text:
        problems.append(Problem("markdown", field, ("line break",)))
    if match := _MARKDOWN.search(_outside_code(text)):
        problems.append(Problem("markdown", field, (match.group(0).strip(),)))
    if _URL.search(text):
        problems.append(Problem("link", field))
    share = chinese_share(text)
    rule = locale(lang).script
    too_little = field == "paragraph" and share < rule.min_cjk_share
    if too_little or len(_CJK.findall(text)) < rule.min_cjk_chars or share > rule.max_cjk_share:
        problems.append(Problem("language", field, (f"{share:.0%}",)))
    return problems


def paragraph_bounds(level: Level, lang: str) -> tuple[int, int]:
    bounds = locale(lang).bounds
    deep = level in (Level.MUST_READ, Level.WORTH_READING)
    return bounds.paragraph_deep if deep else bounds.paragraph_short


def verify_title(title: str, grounds: Grounds, lang: str) -> list[Problem]:
    title = title.strip()
    if not title:
        return [Problem("empty", "title")]
    low, high = locale(lang).bounds.title
    problems = _form(title, "title", lang) + _grounding(title, "title", grounds)
    problems += _borrowed(title, grounds) + _claims(title, "title", grounds)
    if not low <= len(title) <= high:
        problems.append(Problem("length", "title", (str(len(title)), f"{low}–{high}")))
    return problems


def _borrowed(title: str, grounds: Grounds) -> list[Problem]:
    """A title whose English words are not in its own record but in another PR's title."""
    foreign = {
        w.lower()
        for w in _TITLE_WORD.findall(title)
        if w.lower() not in _COMMON_WORDS and w.lower() not in grounds.lower
    }
    if not foreign:
        return []
    for number, other in grounds.others:
        words = {w.lower() for w in _TITLE_WORD.findall(other)}
        if foreign & words:
            return [Problem("borrowed_title", "title", (f"#{number}",))]
    return []


def _has_reviews(d: Dossier) -> bool:
    people = any(not r.is_bot for r in d.reviewers)
    return (
        people
        or any(not h.started_by_bot for h in d.threads)
        or any(not m.is_bot for m in d.remarks)
    )


def _claims(text: str, field: Field, grounds: Grounds) -> list[Problem]:
    """Comparatives without a measured figure; attributions to reviewers the PR does not have."""
    d = grounds.dossier
    problems: list[Problem] = []
    if not d.claims and (match := _COMPARATIVE.search(_outside_code(text))):
        problems.append(Problem("unsupported_claim", field, (match.group(0),)))
    if not _has_reviews(d) and (match := _REVIEW_ATTRIBUTION.search(_outside_code(text))):
        known = "unknown" if not d.coverage.discussion else "none"
        problems.append(Problem("invented_review", field, (match.group(0), known)))
    return problems


def design_names(d: Dossier) -> set[str]:
    """The code names a must-read paragraph may stand on: changed symbols, files, tests, test
    techniques and the design facts' code."""
    names = {s.name for s in d.symbols} | {q.label for q in d.techniques}
    names |= {f"{s.parent}.{s.name}" for s in d.symbols if s.parent}
    for f in d.files:
        if f.role in (Role.SOURCE, Role.TEST, Role.CONFIG):
            names |= {f.path, f.path.rsplit("/", 1)[-1]}
    names |= {t.name for t in d.tests} | {x.label for x in d.design}
    names |= {g.detail for g in d.signals if g.kind.value in ("env_var", "config_flag")}
    return names


def real_names(text: str, d: Dossier) -> set[str]:
    known = design_names(d)
    found: set[str] = set()
    for raw in _BACKTICK.findall(text):
        name = raw.strip().removesuffix("()")
        candidates = {name, name.rsplit(".", 1)[-1], *name.split("::")}
        if candidates & known:
            found.add(name)
    return found


def verify_paragraph(
    paragraph: str, grounds: Grounds, assessment: Assessment, lang: str, verdict: str
) -> list[Problem]:
    text = paragraph.strip()
    if not text:
        return [Problem("empty", "paragraph")]
    problems = _form(text, "paragraph", lang) + _grounding(text, "paragraph", grounds)
    problems += _claims(text, "paragraph", grounds)
    if assessment.level is Level.MUST_READ:
        names = real_names(text, grounds.dossier)
        if len(names) < MIN_MUST_READ_NAMES:
            problems.append(Problem("thin", "paragraph", (str(len(names)),)))
    if verdict_of(text) is not assessment.level:
        problems.append(Problem("verdict", "paragraph", (verdict,)))
    low, high = paragraph_bounds(assessment.level, lang)
    if not low <= len(text) <= high:
        problems.append(Problem("length", "paragraph", (str(len(text)), f"{low}–{high}")))
    return problems


def verify_entry(
    title: str,
    paragraph: str | None,
    grounds: Grounds,
    assessment: Assessment,
    lang: str,
    verdict: str,
) -> list[Problem]:
    """Every problem of a written title (and paragraph, when one was asked for)."""
    problems = verify_title(title, grounds, lang)
    if paragraph is not None:
        problems += verify_paragraph(paragraph, grounds, assessment, lang, verdict)
    return problems


def unknown_cites(cites: Sequence[str], d: Dossier, known: set[str]) -> list[str]:
    """Cited ids that are not facts of the dossier (reported, then dropped)."""
    return [c for c in dict.fromkeys(cites) if c not in known]


def unsupported(text: str, field: Field, grounds: Grounds) -> list[Problem]:
    """The grounding problems of a piece of text: names, paths, logins, figures, claims."""
    return _grounding(text, field, grounds) + _claims(text, field, grounds)


def title_form(title: str, lang: str) -> list[Problem]:
    """The form problems of a title (language share, Markdown, links)."""
    return _form(title.strip(), "title", lang)
