"""Figures of the template writer's digests over every day of a range (the writing side of
issue 11, measured on many days instead of the four reference days).

    prdigest import /tmp/ascend-dev.jsonl --db /tmp/dev.db -q
    python scripts/day_figures.py --db /tmp/dev.db --repo vllm-project/vllm-ascend \
        --since 2026-05-01 --until 2026-07-31

Each day is digested as ``prdigest digest`` does (template writer, default time zone and top;
entries are stored in the store, as a digest stores them). Printed: paragraphs, how many fall
outside 150–450 characters, how many say nothing from the description (no quote 「…」 and no
"描述" — Chinese only), the phrases a day's digest says again (``template.repeats``) and on how
many days, and the mean Chinese share of all titles. ``--show`` lists the repeated phrases.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from prdigest.core.window import day_window  # noqa: E402
from prdigest.pipeline.digest import DigestOptions, build_digest  # noqa: E402
from prdigest.store import open_store  # noqa: E402
from prdigest.write.evaluate import chinese_share  # noqa: E402
from prdigest.write.template import TemplateWriter, repeats  # noqa: E402

SHORT, LONG = 150, 450


def _days(since: date, until: date) -> list[date]:
    return [since + timedelta(days=n) for n in range((until - since).days + 1)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--since", type=date.fromisoformat, required=True)
    parser.add_argument("--until", type=date.fromisoformat, required=True)
    parser.add_argument("--lang", default="zh")
    parser.add_argument("--show", action="store_true", help="list the repeated phrases")
    args = parser.parse_args(argv)
    paragraphs: list[str] = []
    titles: list[str] = []
    again: list[tuple[str, str]] = []
    days_again = 0
    writer = TemplateWriter()
    with open_store(args.db) as store:
        for day in _days(args.since, args.until):
            window = day_window(day.isoformat())
            options = DigestOptions(repo=args.repo, window=window, lang=args.lang)  # type: ignore[arg-type]
            digest = build_digest(store, options, writer)
            said = [i.entry.paragraph for i in digest.selected if i.entry.paragraph]
            paragraphs += said
            titles += [i.entry.title for i in digest.selected]
            titles += [i.entry.title for g in digest.others for i in g.items]
            repeated = repeats(said, args.lang)
            again += [(day.isoformat(), phrase) for phrase in repeated]
            days_again += bool(repeated)
    quiet = [x for x in paragraphs if "「" not in x and "描述" not in x]
    print(
        f"{len(_days(args.since, args.until))} days, {len(paragraphs)} paragraphs: "
        f"{sum(len(x) < SHORT for x in paragraphs)} under {SHORT} characters, "
        f"{sum(len(x) > LONG for x in paragraphs)} over {LONG}, "
        f"{len(quiet)} with nothing from the description"
    )
    print(f"phrases said again in a day's digest: {len(again)} on {days_again} days")
    if titles:
        share = statistics.mean(chinese_share(t) for t in titles if t)
        print(f"titles: {len(titles)}, mean Chinese share {share:.1%}")
    if args.show:
        for day, phrase in again:
            print(f"  {day}  {phrase}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
