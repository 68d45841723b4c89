"""The month's spending, read from the ledger (sql/queries/spend.sql's statements): what
GET /spend, its page, the home page's note and `python -m app spend` show.

    month = await Ledger(db).month(meter)
    month.spent, month.set_aside, month.budget      # micro-dollars (budget None: no cap)
    month.by_kind["story"], month.by_child["Mia"], month.by_day[-1]   # today's
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from app.i18n import gettext, ngettext
from app.i18n.formats import long_day, names
from app.kinds import CHARGES
from app.lengths import LENGTHS
from app.money import dollars, usd
from app.money.amounts import money
from app.money.meter import Meter
from app.queries import Statements
from app.stories import StoryRequest

CHART_DAYS = 30
NEARLY_SPENT = 0.8  # the home page says so from here on, calmly


@dataclass(frozen=True)
class MonthSpend:
    month: str  # "2026-12", in TZ
    spent: int
    set_aside: int
    budget: int | None
    calls: int
    by_kind: dict[str, int]
    by_child: dict[str, int]  # "" for calls for nobody named
    by_day: list[tuple[date, int]]  # the last CHART_DAYS days, oldest first
    unpriced: list[str]

    @property
    def used(self) -> int:
        """Spent and set aside: what the budget is measured against."""
        return self.spent + self.set_aside

    @property
    def share(self) -> float | None:
        """The budget's share used (0-1, or more), or None without a budget."""
        if self.budget is None:
            return None
        return self.used / self.budget if self.budget else (1.0 if self.used else 0.0)

    @property
    def nearly_spent(self) -> bool:
        return self.share is not None and self.share >= NEARLY_SPENT

    def as_json(self) -> dict[str, object]:
        """The contract's GET /spend: amounts as decimal strings of US dollars."""
        return {
            "month": self.month, "spent_usd": amount(self.spent),
            "reserved_usd": amount(self.set_aside),
            "budget_usd": None if self.budget is None else amount(self.budget),
            "calls": self.calls,
            "by_kind": {kind: amount(self.by_kind.get(kind, 0)) for kind in CHARGES},
            "by_child": {child or "": amount(v) for child, v in self.by_child.items()},
            "by_day": [{"day": day.isoformat(), "usd": amount(v)} for day, v in self.by_day],
            "unpriced_models": self.unpriced,
        }


def amount(micros: int) -> str:
    """Exact to the micro-dollar, with no trailing zeros past the cents: "0.0123", "5.00",
    and "0" for nothing."""
    if micros == 0:
        return "0"
    text = usd(micros).rstrip("0")
    whole, _, cents = text.partition(".")
    return f"{whole}.{cents.ljust(2, '0')}"


@dataclass(frozen=True)
class BudgetNotes:
    """The month's budget as the home page tells it (nothing: no MONTHLY_BUDGET)."""

    closed: str | None = None  # no room for even a short story: the form is closed
    nearly: str | None = None  # 80 % used: one calm line
    lengths: tuple[str, ...] = LENGTHS  # the lengths a story may still have


class Ledger(Statements):
    async def budget_notes(self, meter: Meter) -> BudgetNotes:
        """What the home page says of MONTHLY_BUDGET: `closed` once even a short story's
        most possible cost no longer fits (the intake would refuse it: the form and the
        one-tap buttons are closed with it); else `nearly`, one calm line once 80 % is
        used, and the `lengths` that still fit (all of them, or only the shorter ones)."""
        if not meter.budget_micros:
            return BudgetNotes()
        await meter.ready()
        spent, set_aside = await self.used(meter)
        used = spent + set_aside
        lengths = meter.lengths_within(meter.budget_micros - used)
        if not lengths:
            shortest = meter.story_set_aside(StoryRequest(prompt="", length=LENGTHS[0]))
            turns = meter.next_month_start()
            return BudgetNotes(closed=gettext(
                "This month's budget has no room for another story: %(used)s of %(budget)s "
                "is used, and even a short story could cost up to %(story)s. More stories "
                "from %(day)s.") % {
                "used": money(used), "budget": money(meter.budget_micros),
                "story": money(shortest), "day": long_day(turns)}, lengths=())
        if used < NEARLY_SPENT * meter.budget_micros:
            return BudgetNotes(lengths=lengths)
        return BudgetNotes(nearly=gettext(
            "This month's stories have used %(used)s of the %(budget)s budget.") % {
            "used": money(used), "budget": money(meter.budget_micros)}, lengths=lengths)

    async def picture_fits(self, meter: Meter) -> bool:
        """Whether one more picture's most possible cost fits this month's budget (True
        with no MONTHLY_BUDGET): a redraw's button is closed before the tap when not."""
        if meter.budget_micros is None:
            return True
        await meter.ready()
        spent, set_aside = await self.used(meter)
        return spent + set_aside + meter.picture_set_aside() <= meter.budget_micros

    async def fits(self, meter: Meter, set_aside: int) -> bool:
        """Whether `set_aside` more (a narration's parts, say) fits this month's budget (True
        with no MONTHLY_BUDGET): its button is closed before the tap when not."""
        if meter.budget_micros is None:
            return True
        spent, held = await self.used(meter)
        return spent + held + set_aside <= meter.budget_micros

    async def used(self, meter: Meter) -> tuple[int, int]:
        """The month's (spent, set aside), in micro-dollars."""
        totals = await self._one("month_totals", {"month_start": meter.month_start()})
        return totals["spent"], totals["set_aside"]

    async def unpriced_note(self, meter: Meter) -> str | None:
        """With a budget, the home page's line naming the models it cannot count (no price:
        their calls cost 0 in the ledger), and who can price them (the setting is named in
        the start-up WARNING, for them); else None."""
        unpriced = await meter.unpriced() if meter.budget_micros is not None else []
        if not unpriced:
            return None
        return ngettext(
            "The budget does not count calls to %(models)s: no price is known for it. "
            "Whoever set up the app can add one.",
            "The budget does not count calls to %(models)s: no price is known for them. "
            "Whoever set up the app can add them.",
            len(unpriced)) % {"models": names(unpriced)}

    async def month(self, meter: Meter) -> MonthSpend:
        await meter.ready()
        start = meter.month_start()
        params = {"month_start": start}
        totals = await self._one("month_totals", params)
        parts = await self._all("month_by", params)
        days = await self._all("spend_by_day", {"tz": meter.timezone_name,
                                                "day_count": CHART_DAYS})
        unpriced = [row["model"] for row in await self._all("unpriced_models", params)]
        for model in (meter.story_model, meter.image_model):
            if meter.prices.price_of(model) is None and model not in unpriced:
                unpriced.append(model)
        return MonthSpend(
            month=f"{start:%Y-%m}", spent=totals["spent"], set_aside=totals["set_aside"],
            budget=meter.budget_micros, calls=totals["calls"],
            by_kind={r["name"]: r["micros"] for r in parts if r["part"] == "kind"},
            by_child={r["name"] or "": r["micros"] for r in parts if r["part"] == "child"},
            by_day=[(row["day"], row["micros"]) for row in days], unpriced=unpriced)


def spend_table(month: MonthSpend, month_name: str, timezone: str) -> str:
    """`python -m app spend`: the month in one table, for whoever runs the app."""
    if month.budget is None:
        budget = "none (set MONTHLY_BUDGET, in US dollars, to cap the month)"
    else:
        budget = f"{dollars(month.budget)} ({round((month.share or 0) * 100)} % used)"
    rows = [("spent", dollars(month.spent)), ("set aside", dollars(month.set_aside)),
            ("budget", budget), ("calls", str(month.calls))]
    rows += [(f"  {kind}", dollars(micros)) for kind, micros in month.by_kind.items()]
    rows += [(f"  for {child or 'nobody named'}", dollars(micros))
             for child, micros in month.by_child.items()]
    if month.unpriced:
        rows.append(("unpriced", ", ".join(month.unpriced)
                     + " (costed at 0; PRICES gives a model its price)"))
    width = max(len(name) for name, _ in rows)
    lines = [f"Spending in {month_name} ({timezone})"]
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    return "\n".join(lines)
