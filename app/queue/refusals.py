"""What a family is told when the intake refuses a paid job for its limits: the day's
stories used up, or the month's budget without room for a story, a picture or a story read
aloud; each with when there is more.

    message, retry_after_s = limit_reached(20, midnight)    # the seconds until midnight
    raise story_over_budget(meter, spent, set_aside, this_story, request)  # Busy, 429
    raise picture_over_budget(meter, spent, set_aside, this_picture)
    raise narration_over_budget(meter, spent, set_aside, narration)

A budget's refusal is `budget_reached`, to be asked again when the next month starts.
Amounts are micro-dollars, said in the page's language (app/money/amounts.py).
"""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta

from app.errors import Busy
from app.i18n import gettext, ngettext
from app.i18n.formats import long_day
from app.lengths import length_of
from app.money.amounts import money
from app.money.meter import Meter
from app.stories import StoryRequest


def limit_reached(daily_limit: int, midnight: datetime) -> tuple[str, int]:
    """What to say once the day's stories are used up, and the seconds until the next
    midnight after `midnight` (the day's start in the household's time zone)."""
    tomorrow = midnight + timedelta(days=1)  # wall-clock: right across DST too
    retry_after_s = max(int(tomorrow.timestamp() - time.time()), 1)
    hours, minutes = divmod(math.ceil(retry_after_s / 60), 60)
    used_up = ngettext("That's the %(num)d story for today.",
                       "That's all %(num)d stories for today.",
                       daily_limit) % {"num": daily_limit}
    later = gettext("More after midnight, in %(hours)d h %(minutes)d min.") % {
        "hours": hours, "minutes": minutes}
    return f"{used_up} {later}", retry_after_s


def story_over_budget(meter: Meter, spent: int, set_aside: int, this_story: int,
                      request: StoryRequest) -> Busy:
    """The refusal of a story whose most possible cost would take the month past
    MONTHLY_BUDGET: what was spent, the budget, and the shorter lengths that still fit,
    or when it starts again."""
    amounts = _amounts(meter, spent, set_aside) | {"story": money(this_story)}
    said = (gettext("This month's budget is %(budget)s: %(spent)s is spent, and "
                    "%(set_aside)s is set aside for stories being written.") if set_aside
            else gettext("This month's budget is %(budget)s: %(spent)s is spent.")) % amounts
    fits = meter.lengths_within(_budget(meter) - spent - set_aside, request)
    if fits:
        names = ", ".join(gettext(length_of(length).label) for length in fits)
        return _refusal(meter, f"{said} " + gettext(
            "A story this long could cost up to %(story)s, more than is left; these lengths "
            "still fit: %(lengths)s.") % (amounts | {"lengths": names}))
    more = gettext("A story could cost up to %(story)s, more than is left. More stories "
                   "from %(day)s.") % amounts
    return _refusal(meter, f"{said} {more}")


def picture_over_budget(meter: Meter, spent: int, set_aside: int, this_picture: int) -> Busy:
    """The refusal of one more picture whose most possible cost would take the month past
    MONTHLY_BUDGET."""
    amounts = _amounts(meter, spent, set_aside) | {"picture": money(this_picture)}
    return _refusal(meter, gettext(
        "This month's budget is %(budget)s: %(spent)s is spent and %(set_aside)s set aside. "
        "A picture could cost up to %(picture)s, more than is left. More pictures from "
        "%(day)s.") % amounts)


def narration_over_budget(meter: Meter, spent: int, set_aside: int, narration: int) -> Busy:
    """The refusal of a story read aloud whose parts' most possible cost would take the
    month past MONTHLY_BUDGET."""
    amounts = _amounts(meter, spent, set_aside) | {"narration": money(narration)}
    return _refusal(meter, gettext(
        "This month's budget is %(budget)s: %(spent)s is spent and %(set_aside)s set aside. "
        "Reading this story aloud could cost up to %(narration)s, more than is left. More "
        "from %(day)s.") % amounts)


def _refusal(meter: Meter, message: str) -> Busy:
    """A budget's refusal, to be asked again when the month's budget starts again."""
    retry_after_s = max(int(meter.next_month_start().timestamp() - time.time()), 1)
    return Busy(message, code="budget_reached", retry_after_s=retry_after_s)


def _budget(meter: Meter) -> int:
    assert meter.budget_micros is not None  # refused for the budget: there is one
    return meter.budget_micros


def _amounts(meter: Meter, spent: int, set_aside: int) -> dict[str, str]:
    """What every budget refusal names: the budget, what is spent and set aside, and the
    day the next month starts."""
    return {"budget": money(_budget(meter)), "spent": money(spent),
            "set_aside": money(set_aside), "day": long_day(meter.next_month_start())}
