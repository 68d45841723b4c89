"""What every process runs, web or worker-only: the pool, the storyteller, the services.

    async with running_services(settings) as services:   # started; stopped on exit
        ...                                               # serve HTTP, or just wait

The web app's lifespan and `python -m app worker` share it, so both start and stop the
same way: connect, migrate, sweep, register, run; then stop claiming, finish, disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from app.config import Settings
from app.db import connect_pool, database_url
from app.illustrating import Illustrator
from app.illustrating.demo import DemoIllustrator
from app.illustrating.openai_images import ImagesIllustrator
from app.logs import log
from app.money.meter import Meter
from app.money.prices import PriceTable
from app.narrating import Narrator
from app.narrating.chat_audio import ChatNarrator
from app.narrating.speech import SpeechNarrator
from app.services import Services
from app.stories import Storyteller
from app.storytelling.availability import (
    ModelAvailability,
    check_image_model,
    check_model,
    check_voice_model,
)
from app.storytelling.demo import DemoStoryteller
from app.storytelling.endpoints import IMAGES, MODERATIONS, RESPONSES, SPEECH, Endpoints, probe
from app.storytelling.limits import RequestLimits
from app.storytelling.moderation import MODERATION_TIMEOUT_S, Moderator
from app.storytelling.openai import OpenAIStoryteller
from app.storytelling.provider import ProviderClient, warm_up
from app.storytelling.readiness import Readiness
from app.storytelling.responses import BackgroundStoryteller
from app.storytelling.shutdowns import Shutdowns


@contextlib.asynccontextmanager
async def running_services(
    settings: Settings, storyteller: Storyteller | BackgroundStoryteller | None = None
) -> AsyncIterator[Services]:
    # may start the embedded server
    url = await asyncio.to_thread(database_url, settings.database_url, settings.data_dir)
    db = connect_pool(url, max_size=settings.database_pool_max, pgbouncer=settings.pgbouncer)
    await db.connect()
    endpoints = Endpoints()  # what this server lacks, learnt at start-up or from a job
    chosen_storyteller = storyteller or make_storyteller(settings, endpoints)
    moderator = make_moderator(settings, endpoints)
    illustrator = make_illustrator(settings, endpoints)
    narrator = make_narrator(settings, endpoints)
    services = Services.build(settings, db, chosen_storyteller, moderator, database_url=url,
                              follower=follower_for(chosen_storyteller),
                              illustrator=illustrator, meter=meter_for(settings),
                              readiness=readiness_of(chosen_storyteller, endpoints),
                              narrator=narrator)
    try:
        await services.start()
        checked = (chosen_storyteller if storyteller is None and isinstance(
            chosen_storyteller, OpenAIStoryteller | BackgroundStoryteller) else None)
        images = illustrator if isinstance(illustrator, ImagesIllustrator) else None
        if checked is not None or images is not None or narrator is not None:
            services.tasks.append(asyncio.create_task(
                after_start_up(checked, endpoints, endpoints_in_use(settings),
                               images=images, shutdowns=services.shutdowns,
                               narrator=narrator),
                name="warm_up"))
        if services.meter is not None:
            services.tasks.append(asyncio.create_task(warm_prices(services.meter),
                                                      name="prices"))
        try:
            yield services
        finally:
            await services.stop()
    finally:
        await chosen_storyteller.aclose()
        if moderator is not None:
            await moderator.aclose()
        if illustrator is not None:
            await illustrator.aclose()
        if narrator is not None:
            await narrator.aclose()
        await db.close()


# The price table's import (a quarter of a second) waits until start-up is over, then runs
# in a thread: it delays neither the first answer nor the event loop.
WARM_PRICES_AFTER_S = 2.0


async def warm_prices(meter: Meter) -> None:
    """Warm the price table; with a budget, say once which models it cannot count."""
    await asyncio.sleep(WARM_PRICES_AFTER_S)
    await asyncio.to_thread(meter.warm)
    unpriced = await meter.unpriced()
    if meter.budget_micros is not None and unpriced:
        log("unpriced_models", level=logging.WARNING, models=",".join(unpriced),
            detail="their calls count 0 against MONTHLY_BUDGET; PRICES gives a model its"
                   " price in US dollars per million tokens or per image")


def provider_client(settings: Settings, *, timeout_s: float | None = None) -> ProviderClient:
    """A client of the provider (OPENAI_BASE_URL, the key) whose own retries are off: a
    paid call is made once per job, ever (a retry is a second bill), and the moderator
    decides about retries itself. `timeout_s`: LLM_TIMEOUT_S unless said."""
    return ProviderClient(
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        max_retries=0,
        timeout_s=settings.llm_timeout_s if timeout_s is None else timeout_s,
    )


def make_storyteller(settings: Settings,
                    endpoints: Endpoints | None = None) -> Storyteller | BackgroundStoryteller:
    if settings.storyteller == "openai":
        client = provider_client(settings)
        # A server of one's own may honour only one spelling of the token cap: send both.
        limits = RequestLimits(temperature=settings.story_temperature,
                               reasoning_tokens=settings.reasoning_tokens,
                               every_cap=settings.openai_base_url is not None)
        if settings.llm_api == "responses":
            return BackgroundStoryteller(client, model=settings.story_model, limits=limits,
                                         endpoints=endpoints)
        return OpenAIStoryteller(client, model=settings.story_model, limits=limits)
    return DemoStoryteller(delay_s=settings.demo_delay_s)


def availability_of(storyteller: object) -> ModelAvailability | None:
    """What the provider's storyteller knows of its model (the demo has none)."""
    if isinstance(storyteller, OpenAIStoryteller | BackgroundStoryteller):
        return storyteller.availability
    return None


def readiness_of(storyteller: object, endpoints: Endpoints) -> Readiness:
    """Whether the storyteller can write: its model, and in background mode `/responses`."""
    needs = (RESPONSES,) if isinstance(storyteller, BackgroundStoryteller) else ()
    return Readiness(availability_of(storyteller), endpoints, needs=needs)


async def after_start_up(storyteller: OpenAIStoryteller | BackgroundStoryteller | None,
                         endpoints: Endpoints, in_use: list[str], *,
                         images: ImagesIllustrator | None = None,
                         shutdowns: Shutdowns | None = None,
                         narrator: Narrator | None = None) -> None:
    """Once the app serves: load the provider's library, then ask for the model once, and
    for each endpoint the settings use beyond Chat Completions (a server of one's own);
    then for IMAGE_MODEL and VOICE_MODEL (their shutdown dates)."""
    await warm_up()
    if storyteller is not None:
        await check_model(storyteller.client, storyteller.availability, shutdowns)
        for endpoint in in_use:
            await probe(storyteller.client, endpoints, endpoint)
    if images is not None:
        await check_image_model(images.client, images.model, shutdowns)
    if isinstance(narrator, ChatNarrator | SpeechNarrator):
        if storyteller is None and SPEECH in in_use:
            await probe(narrator.client, endpoints, SPEECH)
        await check_voice_model(narrator.client, narrator.model, shutdowns,
                                speech=isinstance(narrator, SpeechNarrator))


def endpoints_in_use(settings: Settings) -> list[str]:
    """The endpoints besides Chat Completions these settings call, on a server of one's own
    (OPENAI_BASE_URL set: OpenAI itself has them all)."""
    if settings.openai_base_url is None:
        return []
    used = {RESPONSES: settings.llm_api == "responses",
            IMAGES: settings.illustrator == "openai", MODERATIONS: settings.moderation,
            SPEECH: settings.narrator == "speech"}
    return [endpoint for endpoint, using in used.items() if using]


def follower_for(storyteller: object) -> BackgroundStoryteller | None:
    """With LLM_API=chat, what still follows a story started in background mode before the
    switch (by its response id, on the same provider): adopted, never started again."""
    if isinstance(storyteller, OpenAIStoryteller):
        return BackgroundStoryteller(storyteller.client, model=storyteller.model,
                                     availability=storyteller.availability,
                                     limits=storyteller.limits)
    return None


def make_illustrator(settings: Settings, endpoints: Endpoints | None = None) -> Illustrator | None:
    """ILLUSTRATOR (resolved from auto): the provider's Images API, the demo's night scene,
    or none."""
    if settings.illustrator == "demo":
        return DemoIllustrator()
    if settings.illustrator != "openai":
        return None
    return ImagesIllustrator(provider_client(settings), model=settings.image_model,
                             endpoints=endpoints)


def make_narrator(settings: Settings, endpoints: Endpoints | None = None) -> Narrator | None:
    """NARRATOR (resolved from auto): Chat Completions' audio output, a speech server, or
    none (the device's own voice reads aloud)."""
    if settings.narrator not in ("openai", "speech"):
        return None
    client = provider_client(settings)
    if settings.narrator == "speech":
        return SpeechNarrator(client, model=settings.voice_model, voice=settings.voice,
                              endpoints=endpoints)
    return ChatNarrator(client, model=settings.voice_model, voice=settings.voice)


def make_moderator(settings: Settings, endpoints: Endpoints | None = None) -> Moderator | None:
    """MODERATION=on screens through the provider's endpoint; the demo storyteller has none."""
    if not settings.moderation:
        return None
    if settings.storyteller != "openai":
        # Demo stories are assembled offline from fixed, gentle templates, and there is no
        # provider to ask: nothing to screen, and no key to screen with.
        log("moderation_skipped", level=logging.WARNING, storyteller=settings.storyteller,
            reason="no moderation endpoint without a provider")
        return None
    return Moderator(provider_client(settings, timeout_s=MODERATION_TIMEOUT_S), endpoints)


def meter_for(settings: Settings) -> Meter:
    """This installation's prices, budget and models (a picture's only when the provider
    draws; the demo's is free)."""
    return Meter(PriceTable(dict(settings.prices)), budget_micros=settings.monthly_budget_micros,
                 timezone=settings.tz, story_model=settings.model,
                 image_model=settings.image_model if settings.illustrator == "openai" else "demo",
                 voice_model=settings.voice_model if settings.narrator != "off" else "",
                 reasoning_tokens=settings.reasoning_tokens)
