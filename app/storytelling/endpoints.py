"""Which of the provider's endpoints this server does not have, said as such.

    endpoints = Endpoints()
    await probe(client, endpoints, IMAGES)      # at start-up: a GET, billed nothing
    endpoints.mark_missing(IMAGES, seen_by="job 17")   # a job's 404 for the route
    endpoints.lacks(IMAGES)                     # True: "Draw a picture" is not offered
    no_endpoint_message(IMAGES)                 # "this storyteller has no /images/generations
                                                #  (set ILLUSTRATOR=off)"

A local OpenAI-compatible server often has Chat Completions alone. A 404 that is not about a
model (`model_not_found`, app/storytelling/availability.py) is about the route: it is
named, with the setting that mends it, never blamed on a model. The start-up check is a GET
of the route, which creates nothing and bills nothing: a server with the route answers it
405 (the route takes POST only), one without answers 404. It runs only with OPENAI_BASE_URL
set (OpenAI itself has them all).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.i18n import N_, gettext
from app.logs import log
from app.storytelling.availability import MODEL_NOT_FOUND, is_model_not_found

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

IMAGES, RESPONSES, MODERATIONS = "/images/generations", "/responses", "/moderations"
SPEECH = "/audio/speech"
# Who can mend each: the setting that stops the app from asking for it.
MENDED_BY = {IMAGES: "ILLUSTRATOR=off", RESPONSES: "LLM_API=chat", MODERATIONS: "MODERATION=off",
             SPEECH: "NARRATOR=off"}
PROBE_TIMEOUT_S = 5.0
# The home page's notice, in the page's language; the endpoint and setting are not words.
NOTICE = N_("This storyteller has no %(endpoint)s (set %(setting)s).")


def no_endpoint_message(endpoint: str) -> str:
    return f"this storyteller has no {endpoint} (set {MENDED_BY[endpoint]})"


def is_missing_route(error: Exception, model: str) -> bool:
    """A 404 about the URL, not about the model (`model`: the one asked for; "" for none)."""
    if getattr(error, "status_code", None) != 404:
        return False
    if getattr(error, "code", None) == MODEL_NOT_FOUND:
        return False
    return not model or not is_model_not_found(error, model)


class Endpoints:
    """What this process has learnt is missing (its memory only: each process checks)."""

    def __init__(self) -> None:
        self.missing: set[str] = set()

    def mark_missing(self, endpoint: str, *, seen_by: str) -> None:
        """Said once in the log, then on the home page."""
        if endpoint not in self.missing:
            self.missing.add(endpoint)
            log("endpoint_missing", level=logging.WARNING, endpoint=endpoint,
                setting=MENDED_BY[endpoint], seen_by=seen_by,
                detail=no_endpoint_message(endpoint))

    def lacks(self, endpoint: str) -> bool:
        return endpoint in self.missing

    @property
    def notices(self) -> list[str]:
        """The home page's notices, in the request's language."""
        return [gettext(NOTICE) % {"endpoint": endpoint, "setting": MENDED_BY[endpoint]}
                for endpoint in sorted(self.missing)]


async def probe(client: ProviderClient, endpoints: Endpoints, endpoint: str) -> None:
    """Ask once whether the server has `endpoint`: a GET, which a server with the route
    refuses as the wrong method (405) and one without it answers 404. No POST: a request
    that could start work or be counted as a call is never sent without a job."""
    import openai

    try:
        await client().with_options(timeout=PROBE_TIMEOUT_S, max_retries=0).get(
            endpoint, cast_to=object)
    except openai.NotFoundError as error:
        if is_missing_route(error, ""):
            endpoints.mark_missing(endpoint, seen_by="start-up check")
    except Exception as error:  # the wrong method (it is there), or no answer: quiet
        log("endpoint_checked", endpoint=endpoint, answer=type(error).__name__)
