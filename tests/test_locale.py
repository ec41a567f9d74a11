"""Language is a layer: each language is one data file, and a new one needs no code."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from prdigest.core import locale as locale_module
from prdigest.core.errors import ConfigError
from prdigest.core.locale import LOCALES, available, locale
from prdigest.core.models import Level
from prdigest.core.window import day_window
from prdigest.pipeline.digest import DigestOptions, build_digest
from prdigest.render import render
from prdigest.store import Store
from prdigest.write.template import TemplateWriter

from conftest import REPO

EN = resources.files("prdigest.core").joinpath("locales", "en.toml").read_text("utf-8")
# A toy language: English words with a mark, as a translator's copy of en.toml would be.
TOY_WORDS = {
    "Worth a close read": "Toy-must",
    'label = "must read"': 'label = "toy-must-label"',
    'digest = "PR reading digest"': 'digest = "Toy digest"',
    'others = "Other merges"': 'others = "Toy others"',
    'selected = "Reading guide"': 'selected = "Toy guide"',
}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    text = EN.replace('code = "en"', 'code = "xx"').replace('name = "English"', 'name = "Toy"')
    for old, new in TOY_WORDS.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "xx.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setitem(LOCALES, "xx", str(path))  # the one registry line
    locale.cache_clear()
    yield "xx"
    locale.cache_clear()


def test_every_registered_locale_loads_and_has_every_level() -> None:
    assert available()[0] == "zh"
    for code in available():
        words = locale(code)
        assert words.code == code
        assert set(words.levels) == set(Level)
        assert words.bounds.paragraph_max < words.bounds.paragraph_hard_max


def test_no_code_outside_the_locale_module_branches_on_a_language() -> None:
    src = Path(locale_module.__file__).parent.parent
    pattern = re.compile(r"""lang\s*[!=]=\s*["'](zh|en)["']|["'](zh|en)["']\s*[!=]=\s*\w*lang""")
    offenders = [
        f"{p.relative_to(src)}:{n}"
        for p in src.rglob("*.py")
        if "migrations" not in p.parts
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_a_third_language_is_one_data_file_and_renders(toy: str, loaded_store: Store) -> None:
    options = DigestOptions(repo=REPO, window=day_window("2026-06-10"), lang=toy)
    digest = build_digest(loaded_store, options, TemplateWriter())
    assert digest.lang == toy
    must = [i for i in digest.selected if i.assessment.level is Level.MUST_READ]
    assert must and all((i.entry.paragraph or "").startswith("Toy-must") for i in must)
    markdown = render(digest, "markdown").decode()
    assert "Toy digest" in markdown and "toy-must-label" in markdown and "## Toy others" in markdown
    html = render(digest, "html").decode()
    assert "Toy guide" in html and "toy-must-label" in html
    assert "Toy digest" in render(digest, "atom").decode()
    # area names fall back to a language the preset has (English), never to nothing
    assert all(name for name in digest.areas.values())


def test_a_locale_missing_a_word_is_refused_by_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "yy.toml"
    path.write_text(
        EN.replace('code = "en"', 'code = "yy"').replace("\n[markdown]\n", "\n[markdown_]\n"),
        encoding="utf-8",
    )
    monkeypatch.setitem(LOCALES, "yy", str(path))
    locale.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"lacks .* markdown"):
            locale("yy")
    finally:
        locale.cache_clear()


def test_an_unknown_language_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown language 'fr'"):
        locale("fr")
