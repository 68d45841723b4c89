"""The reader's preferences, kept in cookies that the server reads and app.js writes: the
theme and the text size.

auto (the default theme): Night from NIGHT_BEFORE_BEDTIME before the household's bedtime
(set on the Children page) until NIGHT_UNTIL in its time zone, or on a device that prefers
dark (shelf.js, which decides again on the device from its clock), else Dark.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from starlette.requests import Request

from app.shelf.household import DEFAULT_BEDTIME

THEMES = ("auto", "dark", "light", "night")  # night: dimmer and warmer, for reading in bed
NIGHT_BEFORE_BEDTIME = timedelta(minutes=30)
NIGHT_UNTIL = time(7, 0)  # the morning
TEXT_SIZES = range(1, 6)
TEXT_SIZE_NAMES = frozenset(str(size) for size in TEXT_SIZES)
DEFAULT_TEXT_SIZE = 3
PREFERENCE_MAX_AGE_S = 365 * 24 * 3600


def night_from(bedtime: time) -> time:
    """When Night begins for this bedtime (a bedtime is from 16:00, so never before noon)."""
    start = datetime.combine(datetime.min, bedtime) - NIGHT_BEFORE_BEDTIME
    return start.time()


def is_night(now: datetime, bedtime: time) -> bool:
    """Whether `now` (in the household's time zone) is in the night: from half an hour
    before bedtime until the morning."""
    moment = now.time().replace(tzinfo=None)
    return moment >= night_from(bedtime) or moment < NIGHT_UNTIL


def auto_span(now: datetime, bedtime: time) -> tuple[datetime, datetime]:
    """The turns of "auto" (to Night, or back) just before and just after `now` (aware, in
    the household's zone): between them it stays as it is now. shelf.js takes the page's
    "auto" as it is while the device's clock is inside them, without working out the
    household's clock itself (a phone's first time-zone lookup costs a tenth of a second)."""
    moments = sorted(datetime.combine(now.date() + timedelta(days=days), at, tzinfo=now.tzinfo)
                     for days in (-1, 0, 1) for at in (night_from(bedtime), NIGHT_UNTIL))
    return (max(moment for moment in moments if moment <= now),
            min(moment for moment in moments if moment > now))


def shown_theme(choice: str, now: datetime, bedtime: time) -> str:
    """The theme a page is rendered in: the family's choice, or for "auto" the clock's."""
    if choice != "auto":
        return choice
    return "night" if is_night(now, bedtime) else "dark"


def preferences(request: Request, now: datetime | None = None) -> dict[str, object]:
    """The reader's theme and text size from their cookies (automatic and middling by
    default), and the household's bedtime; `theme` is the one shown now, `theme_choice`
    the family's."""
    choice = request.cookies.get("theme", "")
    choice = choice if choice in THEMES else THEMES[0]
    services = getattr(request.app.state, "services", None)  # none yet: the default
    bedtime = services.household.bedtime if services is not None else DEFAULT_BEDTIME
    timezone = request.app.state.settings.tz
    size = request.cookies.get("text_size", "")
    now = now or datetime.now(timezone)
    return {
        "theme": shown_theme(choice, now, bedtime),
        "auto_theme": shown_theme("auto", now, bedtime),
        "auto_span": [int(moment.timestamp()) for moment in auto_span(now, bedtime)],
        "theme_choice": choice,
        "bedtime": f"{bedtime:%H:%M}",
        "night_from": f"{night_from(bedtime):%H:%M}",
        "night_until": f"{NIGHT_UNTIL:%H:%M}",
        "timezone": timezone.key,
        # Compared as text: a cookie of thousands of digits is not worth converting.
        "text_size": int(size) if size in TEXT_SIZE_NAMES else DEFAULT_TEXT_SIZE,
    }
