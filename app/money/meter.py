"""The meter: what a job may cost before it runs (its set-aside) and what its call did cost
(its charge), at the prices of app/money/prices.py; and the month a budget counts.

    meter = Meter(PriceTable(...), budget_micros=..., timezone=..., story_model=...,
                  image_model=...)        # app/runtime.py's meter_for(settings)
    meter.budget()                      # MonthBudget for the month under way, or None
    meter.story_set_aside(request)      # micro-dollars, held while the job lives
    meter.narration_set_aside(text)     # one part read aloud, at VOICE_MODEL's price
    charge = await meter.charge(STORY, story.model, usage, set_aside=job.set_aside_micros,
                                child=job.request.child_name, most=meter.story_most(request),
                                job_id=17)   # a ledger row's values

A call the provider reported no usage for is charged its set-aside, marked estimated: the
most it could have cost, so a budget is never passed by a call nobody measured. So is one
whose report is not a usage the call could have produced (`most`: negative, absurd, not a
number; app/money/__init__.py's `bounded`), with one WARNING naming what the provider said;
and no call is ever charged more than its set-aside.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo

from app.kinds import JobKind, Maker
from app.lengths import LENGTHS
from app.logs import log
from app.money import MonthBudget, Price, Usage, bounded
from app.money.prices import PICTURE_MOST, PriceTable, narration_most, story_most
from app.stories import StoryRequest
from app.storytelling.limits import REASONING_ALLOWANCE_TOKENS

FREE = Price()  # the demo's storyteller and illustrator: nothing is paid to anyone


@dataclass(frozen=True)
class Charge:
    """One billed call, as the ledger (`spend`) records it."""

    kind: str  # the ledger's kind (app/kinds.py's CHARGES): its job's kind's code
    model: str
    usage: Usage
    price: Price | None  # None: unpriced (costs 0, named on the page)
    cost_micros: int
    estimated: bool = False
    child_name: str | None = None


def charge_params(charge: Charge | None) -> dict[str, object]:
    """The ledger row's parameters of the statement that stores what was paid for
    (insert_story, complete_picture_job); all None: no row (no meter)."""
    if charge is None:
        return dict.fromkeys(CHARGE_PARAMS)
    usage = charge.usage
    return {"spend_kind": charge.kind, "spend_model": charge.model,
            "spend_child": charge.child_name, "input_tokens": usage.input_tokens,
            "cached_tokens": usage.cached_tokens, "output_tokens": usage.output_tokens,
            "images": usage.images, "cost_micros": charge.cost_micros,
            "price": None if charge.price is None else json.dumps(charge.price.as_json()),
            "estimated": charge.estimated}


CHARGE_PARAMS = ("spend_kind", "spend_model", "spend_child", "input_tokens", "cached_tokens",
                 "output_tokens", "images", "cost_micros", "price", "estimated")

# A call about to be sent: the model and its price (None: unpriced), marked on the job's
# row (mark_call_sent), so whatever ends the job without the call's own ledger row charges
# it at these, its set-aside, estimated.
Billing = tuple[str, Price | None]


def billing_params(billed_at: Billing | None) -> dict[str, object]:
    """mark_call_sent's model and price; all None: no meter (nothing charged)."""
    model, price = billed_at or (None, None)
    return {"model": model, "price": None if price is None else json.dumps(price.as_json())}


class Meter:
    def __init__(self, prices: PriceTable, *, budget_micros: int | None, timezone: tzinfo,
                 story_model: str, image_model: str, voice_model: str = "",
                 reasoning_tokens: int = REASONING_ALLOWANCE_TOKENS) -> None:
        self.prices = prices
        # The room the cap leaves for hidden reasoning (STORY_REASONING_TOKENS): the
        # set-aside is the cap the call is sent with, not a bigger one.
        self.reasoning_tokens = reasoning_tokens
        self.budget_micros = budget_micros
        self.timezone = timezone
        self.story_model = story_model
        self.image_model = image_model
        self.voice_model = voice_model  # "": no narrator
        self.prices.overrides.setdefault("demo", FREE)
        self._warm = False

    @property
    def timezone_name(self) -> str:
        return str(getattr(self.timezone, "key", "UTC"))

    def warm(self, *models: str) -> None:
        """Look up this installation's models and `models` (in a thread: the table's first
        import)."""
        self.prices.warm(*self._models, *models)
        self._warm = True

    async def ready(self, *models: str) -> None:
        """The prices of this installation's models (and `models`) at hand, looked up in a
        thread the first time: the pinned table's import (a quarter of a second, more on a
        busy machine) must never stall the event loop, whose heartbeats keep jobs alive."""
        if not self._warm or any(not self.prices.knows(model) for model in models):
            await asyncio.to_thread(self.warm, *models)

    async def unpriced(self) -> list[str]:
        """This installation's models (its story's, its pictures') with no price: their
        calls are counted at 0, so a budget does not hold them."""
        await self.ready()
        models = dict.fromkeys(self._models)
        return [model for model in models if self.prices.price_of(model) is None]

    @property
    def _models(self) -> tuple[str, ...]:
        """The models this installation calls: its stories', pictures' and narrations'."""
        voice = (self.voice_model,) if self.voice_model else ()
        return (self.story_model, self.image_model, *voice)

    def month_start(self, now: datetime | None = None) -> datetime:
        now = now or datetime.now(self.timezone)
        return now.astimezone(self.timezone).replace(day=1, hour=0, minute=0, second=0,
                                                     microsecond=0)

    def next_month_start(self, now: datetime | None = None) -> datetime:
        start = self.month_start(now)
        year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
        return start.replace(year=year, month=month)  # wall-clock midnight, across DST too

    def budget(self) -> MonthBudget | None:
        if self.budget_micros is None:
            return None
        return MonthBudget(self.budget_micros, self.month_start())

    def model_of(self, kind: JobKind) -> str:
        """The model that makes a job of `kind` (its maker's), at whose price it is charged."""
        return {Maker.STORYTELLER: self.story_model, Maker.ILLUSTRATOR: self.image_model,
                Maker.NARRATOR: self.voice_model}[kind.maker]

    async def billing(self, kind: JobKind) -> Billing:
        """The model and its price, for a call of `kind` about to be sent."""
        await self.ready()
        model = self.model_of(kind)
        return model, self.prices.price_of(model)

    def story_set_aside(self, request: StoryRequest) -> int:
        return self.prices.set_aside(request, self.story_model, self.reasoning_tokens)

    def lengths_within(self, room: int, request: StoryRequest | None = None) -> tuple[str, ...]:
        """The lengths a story (`request`'s, else one of few words) may have whose most
        possible cost fits in `room` micro-dollars: all, the shorter ones, or none."""
        request = request or StoryRequest(prompt="")
        return tuple(length for length in LENGTHS
                     if self.story_set_aside(replace(request, length=length)) <= room)

    def picture_set_aside(self) -> int:
        return self.prices.picture_set_aside(self.image_model)

    def story_most(self, request: StoryRequest) -> Usage:
        """The most a story's call for `request` can use (the cap it is sent, its prompt)."""
        return story_most(request, self.reasoning_tokens)

    def picture_most(self) -> Usage:
        return PICTURE_MOST

    def narration_set_aside(self, text: str) -> int:
        """The most reading one part's `text` aloud can cost."""
        return self.prices.narration_set_aside(text, self.voice_model)

    def narration_most(self, text: str) -> Usage:
        return narration_most(text)

    async def charge(self, kind: JobKind, model: str, usage: Usage | None, *, set_aside: int,
                     child: str | None, most: Usage, counted: Usage | None = None,
                     job_id: int | None = None) -> Charge:
        """What a job's call cost: its reported usage at the model's price (looked up off
        the event loop), never more than its `set_aside`; with none reported, or one the
        call could not have produced (beyond `most`), the job's `set_aside` (estimated),
        what it made as `counted` here (a story's tokens from its text: app/money/tokens.py)."""
        await self.ready(model)
        price = self.prices.price_of(model)
        read = None if usage is None else bounded(usage, most)
        if usage is not None and read is None:
            log("usage_unreadable", level=logging.WARNING, job_id=job_id, kind=kind.code,
                model=model, reported=_shown(usage), charged="set_aside")
        cost = price.charge(read) if price is not None and read is not None else 0
        if read is not None and cost > set_aside > 0:  # another model's price, say
            log("charge_over_set_aside", level=logging.WARNING, job_id=job_id, kind=kind.code,
                model=model, cost_micros=cost, set_aside_micros=set_aside)
            read = None
        if read is None:
            return Charge(kind.code, model, counted or Usage(), price,
                          set_aside if price is not None else 0, estimated=True,
                          child_name=child)
        return Charge(kind.code, model, read, price, cost, child_name=child)


# A provider's report is logged as it came, but never at any length.
REPORTED_MAX_CHARS = 200


def _shown(usage: Usage) -> str:
    return " ".join(f"{name}={_repr(value)}" for name, value in vars(usage).items())[
        :REPORTED_MAX_CHARS]


def _repr(value: object) -> str:
    try:
        return repr(value)[:REPORTED_MAX_CHARS]
    except ValueError:  # an int of more digits than Python writes out
        return "<a number too long to write>"
