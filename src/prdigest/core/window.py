"""Time windows of a digest: a local calendar day, or an explicit [since, until) range.

A day is taken in the reader's time zone (default ``Asia/Shanghai``, where the first users
read): ``--date 2026-06-10`` means local midnight to the next local midnight; ``today`` and
``yesterday`` are the local days of the moment the command runs. Timestamps given without an
offset are read in that time zone too.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from prdigest.core.errors import ConfigError
from prdigest.core.models import Window

DEFAULT_TZ = "Asia/Shanghai"
# Windows lie between these days: a time zone shift near year 1 or 9999 overflows the datetime
# range, and no PR was merged before git existed.
FIRST_DAY, LAST_DAY = date(1970, 1, 2), date(9000, 12, 30)


def _in_range(moment: date, key: str) -> None:
    if not FIRST_DAY <= moment <= LAST_DAY:
        raise ConfigError(
            f"{moment.isoformat()} is out of range ({FIRST_DAY.year}–{LAST_DAY.year})", key=key
        )


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"unknown time zone {name!r}", key="--tz") from exc


RELATIVE_DAYS = {"today": 0, "yesterday": 1}
DAY_HELP = "today, yesterday or YYYY-MM-DD"


def local_day(day: str, tz: str = DEFAULT_TZ, now: datetime | None = None) -> date:
    """``today``, ``yesterday`` (local to ``tz`` at ``now``) or an ISO date."""
    back = RELATIVE_DAYS.get(day.strip().lower())
    if back is not None:
        moment = now or datetime.now(zone(tz))
        return moment.astimezone(zone(tz)).date() - timedelta(days=back)
    try:
        parsed = date.fromisoformat(day)
    except ValueError as exc:
        raise ConfigError(f"expected {DAY_HELP}, got {day!r}", key="--date") from exc
    _in_range(parsed, "--date")
    return parsed


def day_window(day: str, tz: str = DEFAULT_TZ, now: datetime | None = None) -> Window:
    parsed = local_day(day, tz, now)
    start = datetime.combine(parsed, time(0), tzinfo=zone(tz))
    return Window(since=start, until=start + timedelta(days=1), tz=tz, label=parsed.isoformat())


def _moment(value: str, tz: str, key: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigError(f"expected an ISO-8601 time, got {value!r}", key=key) from exc
    _in_range(parsed.date(), key)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=zone(tz))


def range_window(since: str, until: str, tz: str = DEFAULT_TZ) -> Window:
    start, end = _moment(since, tz, "--since"), _moment(until, tz, "--until")
    if end <= start:
        raise ConfigError("must be later than --since", key="--until")
    local = zone(tz)
    label = f"{start.astimezone(local):%Y-%m-%d %H:%M}..{end.astimezone(local):%Y-%m-%d %H:%M}"
    return Window(since=start, until=end, tz=tz, label=label)


def report_window(tz: str, span: Literal["day", "week"], day: date | None, now: datetime) -> Window:
    """The window a scheduled run digests: the given local day, else yesterday (local).

    ``span = "week"`` is the seven local days ending with that day.
    """
    local = zone(tz)
    last = day if day is not None else (now.astimezone(local).date() - timedelta(days=1))
    if span == "day":
        return day_window(last.isoformat(), tz)
    first = last - timedelta(days=6)
    since = datetime.combine(first, time(0), tzinfo=local)
    until = datetime.combine(last + timedelta(days=1), time(0), tzinfo=local)
    return Window(since=since, until=until, tz=tz, label=f"{first.isoformat()}..{last.isoformat()}")
