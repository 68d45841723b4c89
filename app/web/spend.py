"""The month's spending: GET /spend, JSON as the contract says, or the page a parent reads
at a glance (the month against its budget, the last 30 days as a chart with its table, by
kind and by child, and the models that have no price).

And what an open page may no longer spend on (closed means closed, on a page already open):

    GET /closed[?story=ID]   {"stories": why | null, "lengths": {"fit": [...], "why"} | null,
                              "pictures": why | null, "narration": why | null}   (no-store)

A page rendered while one is closed comes with those controls closed, saying why where they
are (the home form's note, a card's, the story page's frames). A page rendered before the
month's budget ran out (or the day's stories, or the storyteller) still shows live buttons.
app.js asks this every few card polls while the page has a control that would spend
(`data-spends`), and closes those it names, with the reason, without a reload; the server
refuses whatever slips through anyway (429). `stories`: a new story, a finish or a retry
(the form, the one-tap buttons, a card's and the unfinished list's Finish and Try again);
`lengths`: the form's lengths the month's budget no longer has room for (those not in
`fit`; null when all fit, or none: `stories` says so); `pictures`: a redraw; `narration`:
story ID's Listen (only asked with `story`). Each `why` is the sentence the page says when
it is rendered closed (the same functions say both), in the page's language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.i18n import gettext
from app.i18n.formats import month_name
from app.kinds import CHARGES
from app.lengths import LENGTHS
from app.money.amounts import money
from app.money.chart import bar_chart
from app.money.ledger import BudgetNotes, Ledger
from app.stories import parse_id
from app.web.inputs import services_of
from app.web.narrations import narration_closed
from app.web.negotiation import VARY, answers_json
from app.web.pictures import pictures_closed
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


async def closed(request: Request) -> JSONResponse:
    services = services_of(request)
    story_id = parse_id(request.query_params.get("story", ""))
    budget = await budget_notes(services)
    shorter = lengths_closed(budget, services.readiness.closed_because())
    return JSONResponse({
        "stories": await stories_closed(services, budget),
        "lengths": {"fit": list(budget.lengths), "why": shorter} if shorter else None,
        "pictures": await pictures_closed(services),
        "narration": (await narration_closed(services, story_id)
                      if story_id is not None else None),
    }, headers={"Cache-Control": "no-store"})


async def stories_closed(services: Services, budget: BudgetNotes | None = None) -> str | None:
    """Why no story can be asked for now (the form's limit note), or None; `budget`: the
    month's notes, when the caller has read them already."""
    if budget is None:
        budget = await budget_notes(services)
    return why_no_story(services, services.readiness.closed_because(), budget.closed,
                        services.intake.stories_left_today(await services.intake.used_today()))


def why_no_story(services: Services, cannot_write: str | None, budget_closed: str | None,
                 stories_left: int) -> str | None:
    """The one reason a story cannot be asked for, the first that holds: the storyteller
    cannot write, the month's budget has no room for a short one, the day's are used."""
    return cannot_write or budget_closed or (services.intake.limit_reached()[0]
                                             if stories_left == 0 else None)


def lengths_closed(budget: BudgetNotes, cannot_write: str | None) -> str | None:
    """Why the longer lengths are closed, the month's budget having room for shorter stories
    only (the form's lengths note), or None: every length fits, or none does (then no story
    can be asked for, and why_no_story says why)."""
    if cannot_write or budget.closed or budget.lengths == LENGTHS:
        return None
    return gettext("This month's budget has room for shorter stories only.")
