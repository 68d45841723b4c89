"""The month's spending: GET /spend, JSON as the contract says, or the page a parent reads
at a glance (the month against its budget, the last 30 days as a chart with its table, by
kind and by child, and the models that have no price).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.i18n.formats import month_name
from app.kinds import CHARGES
from app.money.amounts import money
from app.money.chart import bar_chart
from app.money.ledger import BudgetNotes, Ledger
from app.web.inputs import services_of
from app.web.negotiation import VARY, answers_json
from app.web.templates import render

if TYPE_CHECKING:
    from app.services import Services


def isolated_money(amount_micros: int) -> Markup:
    """An amount inside a sentence, isolated: in Arabic, "5,00 US$" keeps its own order and
    the sentence's full stop stays on the sentence's side."""
    return Markup("<bdi>{}</bdi>").format(money(amount_micros))


async def spend(request: Request) -> Response:
    services = services_of(request)
    assert services.meter is not None
    month = await Ledger(services.db).month(services.meter)
    if answers_json(request):
        return JSONResponse(month.as_json(), headers=VARY)
    # "Used up" as the home page closes the form: no room left for even a short story.
    used_up = bool((await budget_notes(services)).closed)
    return render(request, "spend.html", {
        "month": month, "used_up": used_up, "chart": bar_chart(month.by_day),
        "dollars": isolated_money,
        "kind_names": CHARGES, "month_name": month_name(services.meter.month_start()),
        "share_pct": None if month.share is None else min(round(month.share * 100), 100),
    }, headers=VARY)


async def budget_notes(services: Services) -> BudgetNotes:
    """The month's budget for the home page: no room left, nearly spent (each a sentence or
    None), and the lengths that still fit."""
    if services.meter is None:
        return BudgetNotes()
    return await Ledger(services.db).budget_notes(services.meter)


async def unpriced_note(services: Services) -> str | None:
    """With a budget, the home page's line naming the models it cannot count; else None."""
    if services.meter is None:
        return None
    return await Ledger(services.db).unpriced_note(services.meter)
