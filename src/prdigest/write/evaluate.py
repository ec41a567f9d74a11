"""Compare generated entries with a human-written reference digest (``prdigest eval``).

Inputs: a reference digest in the text layout (DESIGN §4), a map from its entries to PR numbers,
and the ``--format json`` output of ``prdigest digest``. Measures, per entry and over all:

* verdict agreement — the reference verdict parsed from its Chinese phrase (值得精读 / 值得选读 /
  值得中等优先级精读 / 快速浏览 / 无需精读; a title without paragraph is ``list_only``) against the
  generated level (``list_only`` when the generated entry has no paragraph);
* recall and precision of backticked names — names normalised: ``()`` dropped, ``a::b`` split,
  paths reduced to their file name;
* recall of people — ``@login`` in the reference, and bare logins of the PR's participants when
  they are known (``participants``, e.g. from the store);
* recall of figures — numbers outside code (``(1)`` enumerations and ``#N`` references aside);
* title overlap — Jaccard similarity of character bigrams (spaces and punctuation removed);
* title Chinese share — Chinese characters of a generated title over its characters other than
  spaces (the example digests' titles: 50–59 %), the mean over the mapped entries and over every
  title of the generated digest.
* repeated phrases — phrases of the generated digest's paragraphs (in digest order) that an
  earlier paragraph said in the same words, quoted text, code names and numbers aside (the
  template writer's :func:`~prdigest.write.template.repeats`; target 0);
* with the PR records (``grounds``): false-claim candidates — sentences of the generated entry
  that the verifier cannot tie to the record (an unknown name, path, login or figure, an
  unsupported comparative or reviewer attribution) — and whether the title keeps the language
  and length rules.

Recall and precision are micro-averaged (summed over entries); title overlap is the mean.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prdigest.core.errors import InputError
from prdigest.core.locale import locale
from prdigest.core.models import Level
from prdigest.write.llm.repair import sentences
from prdigest.write.llm.style import Reference, ReferenceEntry
from prdigest.write.llm.verify import Grounds, title_form, unsupported
from prdigest.write.template import repeats

_BACKTICK = re.compile(r"`([^`\n]+)`")
_LOGIN = re.compile(r"(?<![\w`/.])@([A-Za-z0-9][A-Za-z0-9-]{0,38})")
_NUMBER = re.compile(r"(?<![\w.#])(\d+(?:[.,]\d+)*)(?![\w])")
_ENUM = re.compile(r"[(（]\s*\d{1,2}\s*[)）]")
_TITLE_NOISE = re.compile(r"[\s\W_]+", re.U)


@dataclass(frozen=True)
class EntryScore:
    number: int
    ref_title: str
    gen_title: str | None
    ref_level: str | None
    gen_level: str | None
    verdict_match: bool | None  # None: not comparable (no generated entry, no ref verdict)
    names_ref: int
    names_gen: int
    names_common: int
    people_ref: int
    people_common: int
    figures_ref: int
    figures_common: int
    title_overlap: float
    title_chinese: float | None = None  # None: no generated title
    false_claims: tuple[str, ...] = ()  # sentences the verifier cannot tie to the record
    title_ok: bool | None = None  # language and length of the title (None: not checked)


@dataclass(frozen=True)
class EvalReport:
    entries: tuple[EntryScore, ...]
    verdict_agreement: float | None
    name_recall: float | None
    name_precision: float | None
    people_recall: float | None
    figure_recall: float | None
    title_overlap: float | None
    unmapped: tuple[str, ...]  # reference titles the map gives no PR for
    missing: tuple[int, ...]  # mapped PRs absent from the generated digest
    title_chinese: float | None = None  # mean over the mapped entries' generated titles
    title_chinese_all: float | None = None  # mean over every title of the generated digest
    false_claims: int | None = None  # candidates over all entries (None: no records given)
    titles_ok: float | None = None  # share of titles that keep the language and length rules
    repeated_phrases: tuple[str, ...] = ()  # phrases the digest says again (module doc)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": {
                "entries": len(self.entries),
                "verdict_agreement": self.verdict_agreement,
                "name_recall": self.name_recall,
                "name_precision": self.name_precision,
                "people_recall": self.people_recall,
                "figure_recall": self.figure_recall,
                "title_overlap": self.title_overlap,
                "title_chinese": self.title_chinese,
                "title_chinese_all": self.title_chinese_all,
                "false_claims": self.false_claims,
                "titles_ok": self.titles_ok,
                "repeated_phrases": len(self.repeated_phrases),
            },
            "entries": [asdict(e) for e in self.entries],
            "unmapped": list(self.unmapped),
            "missing": list(self.missing),
            "repeated_phrases": list(self.repeated_phrases),
        }


def code_names(text: str) -> set[str]:
    names: set[str] = set()
    for raw in _BACKTICK.findall(text):
        for part in raw.split("::"):
            part = " ".join(part.split()).removesuffix("()")
            if "/" in part and " " not in part:
                part = part.rstrip("/").rsplit("/", 1)[-1]
            if part:
                names.add(part)
    return names


def people(text: str, participants: set[str] | None = None) -> set[str]:
    plain = _BACKTICK.sub(" ", text)
    found = {login.lower() for login in _LOGIN.findall(plain)}
    for login in participants or ():
        if len(login) >= 3 and re.search(rf"(?<![\w@-]){re.escape(login)}(?![\w-])", plain, re.I):
            found.add(login.lower())
    return found


def figures(text: str) -> set[str]:
    plain = _ENUM.sub(" ", _BACKTICK.sub(" ", text))
    return {n.replace(",", "") for n in _NUMBER.findall(plain)}


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def chinese_share(title: str) -> float:
    """Chinese characters of a title over its characters other than whitespace."""
    visible = re.sub(r"\s+", "", title)
    return len(_CJK.findall(visible)) / len(visible) if visible else 0.0


def bigram_jaccard(a: str, b: str) -> float:
    def grams(s: str) -> set[str]:
        s = _TITLE_NOISE.sub("", s.lower())
        return {s[i : i + 2] for i in range(len(s) - 1)} or ({s} if s else set())

    ga, gb = grams(a), grams(b)
    return len(ga & gb) / len(ga | gb) if ga | gb else 0.0


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def false_claims(text: str, grounds: Grounds) -> tuple[str, ...]:
    """Sentences of ``text`` with a name, path, login, figure or claim the record lacks."""
    found = []
    for sentence in sentences(text):
        if unsupported(sentence, "paragraph", grounds):
            found.append(sentence)
    return tuple(found)


def title_ok(title: str, lang: str) -> bool:
    low, high = locale(lang).bounds.title
    form = [p for p in title_form(title, lang) if p.code == "language"]
    return not form and low <= len(title) <= high


def _score(
    number: int,
    ref: ReferenceEntry,
    gen: Mapping[str, Any] | None,
    who: set[str] | None,
    grounds: Grounds | None = None,
    lang: str = "zh",
) -> EntryScore:
    entry = (gen or {}).get("entry") or {}
    gen_title = entry.get("title")
    gen_text = f"{gen_title or ''} {entry.get('paragraph') or ''}"
    ref_text = f"{ref.title} {ref.paragraph or ''}"
    gen_level = None
    if gen is not None:
        gen_level = gen.get("level") if entry.get("paragraph") else Level.LIST_ONLY.value
    ref_level = ref.level.value if ref.level else None
    rn, gn = code_names(ref_text), code_names(gen_text)
    rp, gp = people(ref_text, who), people(gen_text, who)
    rf, gf = figures(ref_text), figures(gen_text)
    return EntryScore(
        number=number,
        ref_title=ref.title,
        gen_title=gen_title,
        ref_level=ref_level,
        gen_level=gen_level,
        verdict_match=None if gen_level is None or ref_level is None else gen_level == ref_level,
        names_ref=len(rn),
        names_gen=len(gn),
        names_common=len(rn & gn),
        people_ref=len(rp),
        people_common=len(rp & gp),
        figures_ref=len(rf),
        figures_common=len(rf & gf),
        title_overlap=bigram_jaccard(ref.title, gen_title or ""),
        title_chinese=chinese_share(gen_title) if gen_title is not None else None,
        false_claims=false_claims(gen_text, grounds) if grounds and gen is not None else (),
        title_ok=title_ok(gen_title, lang) if grounds and gen_title else None,
    )


def evaluate(
    reference: Reference,
    mapping: Sequence[int | None] | Mapping[str, int],
    generated: Mapping[str, Any],
    participants: Mapping[int, set[str]] | None = None,
    grounds: Mapping[int, Grounds] | None = None,
) -> EvalReport:
    """Scores of each mapped reference entry against the generated digest (see module doc)."""
    by_number = {int(item["pr"]["number"]): item for item in generated.get("prs", [])}
    pairs, unmapped = _pairs(reference, mapping)
    lang = str(generated.get("lang") or "zh")
    scores = [
        _score(n, ref, by_number.get(n), (participants or {}).get(n), (grounds or {}).get(n), lang)
        for n, ref in pairs
    ]
    checked = [s for s in scores if s.title_ok is not None]
    compared = [s for s in scores if s.verdict_match is not None]
    present = [s for s in scores if s.gen_title is not None]
    all_titles = [
        str((item.get("entry") or {}).get("title") or "") for item in generated.get("prs", [])
    ]
    return EvalReport(
        entries=tuple(scores),
        verdict_agreement=_ratio(sum(1 for s in compared if s.verdict_match), len(compared)),
        name_recall=_ratio(sum(s.names_common for s in scores), sum(s.names_ref for s in scores)),
        name_precision=_ratio(
            sum(s.names_common for s in scores), sum(s.names_gen for s in scores)
        ),
        people_recall=_ratio(
            sum(s.people_common for s in scores), sum(s.people_ref for s in scores)
        ),
        figure_recall=_ratio(
            sum(s.figures_common for s in scores), sum(s.figures_ref for s in scores)
        ),
        title_overlap=(sum(s.title_overlap for s in present) / len(present)) if present else None,
        unmapped=tuple(unmapped),
        missing=tuple(n for n, _ in pairs if n not in by_number),
        title_chinese=_mean([s.title_chinese for s in present if s.title_chinese is not None]),
        title_chinese_all=_mean([chinese_share(t) for t in all_titles if t]),
        false_claims=sum(len(s.false_claims) for s in scores) if grounds else None,
        titles_ok=_ratio(sum(1 for s in checked if s.title_ok), len(checked)),
        repeated_phrases=tuple(
            repeats(
                [(item.get("entry") or {}).get("paragraph") for item in generated.get("prs", [])],
                lang,
            )
        ),
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pairs(
    reference: Reference, mapping: Sequence[int | None] | Mapping[str, int]
) -> tuple[list[tuple[int, ReferenceEntry]], list[str]]:
    pairs: list[tuple[int, ReferenceEntry]] = []
    unmapped: list[str] = []
    for index, ref in enumerate(reference.entries):
        if isinstance(mapping, Mapping):
            number = mapping.get(ref.title)
        else:
            number = mapping[index] if index < len(mapping) else None
        if number is None:
            unmapped.append(ref.title)
        else:
            pairs.append((int(number), ref))
    return pairs, unmapped


def load_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: cannot read {what}: {exc}") from exc


def load_map(path: Path) -> Sequence[int | None] | Mapping[str, int]:
    """A JSON list of PR numbers in reference-entry order (``null`` to skip an entry), or an
    object from reference title to PR number."""
    data = load_json(path, "map")
    if isinstance(data, list) and all(x is None or isinstance(x, int) for x in data):
        return data
    if isinstance(data, dict) and all(isinstance(v, int) for v in data.values()):
        return {str(k): int(v) for k, v in data.items()}
    raise InputError(f"{path}: a map is a list of PR numbers or an object title → PR number")


def load_generated(path: Path) -> Mapping[str, Any]:
    data = load_json(path, "generated digest")
    if not isinstance(data, dict) or not isinstance(data.get("prs"), list):
        raise InputError(f"{path}: expected the --format json output of 'prdigest digest'")
    return data


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def format_table(report: EvalReport) -> str:
    """A plain-text table: one row per entry, then the totals."""
    header = (
        f"{'PR':>7}  {'verdict ref→gen':<28} {'names':>7} {'people':>7} {'figures':>7} {'title':>6}"
    )
    rows = [header, "-" * len(header)]
    for s in report.entries:
        mark = {True: "✓", False: "✗", None: " "}[s.verdict_match]
        verdict = f"{s.ref_level or '?'}→{s.gen_level or '-'} {mark}"
        rows.append(
            f"{s.number:>7}  {verdict:<28} {s.names_common:>3}/{s.names_ref:<3} "
            f"{s.people_common:>3}/{s.people_ref:<3} {s.figures_common:>3}/{s.figures_ref:<3} "
            f"{s.title_overlap:>6.2f}"
        )
    rows += [
        "-" * len(header),
        f"verdict agreement {_pct(report.verdict_agreement)} · names recall "
        f"{_pct(report.name_recall)} precision {_pct(report.name_precision)} · people recall "
        f"{_pct(report.people_recall)} · figures recall {_pct(report.figure_recall)} · "
        f"title overlap {'-' if report.title_overlap is None else f'{report.title_overlap:.2f}'}"
        f" · title Chinese share {_pct(report.title_chinese)} (all titles "
        f"{_pct(report.title_chinese_all)})",
    ]
    if report.false_claims is not None:
        titles = _pct(report.titles_ok)
        rows.append(
            f"false-claim candidates {report.false_claims} · titles keeping language and "
            f"length {titles}"
        )
        for s in report.entries:
            rows += [f"  #{s.number} claim? {claim}" for claim in s.false_claims]
    rows.append(f"phrases said again in the digest {len(report.repeated_phrases)}")
    rows += [f"  again: {phrase}" for phrase in report.repeated_phrases]
    if report.unmapped:
        rows.append(f"not mapped: {len(report.unmapped)} reference entr(ies)")
    if report.missing:
        rows.append("not in the generated digest: " + ", ".join(f"#{n}" for n in report.missing))
    return "\n".join(rows)
