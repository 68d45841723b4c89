"""Whether the storyteller can write a story at all, as this process has found out.

It cannot when its model is no longer offered (app/storytelling/availability.py) or the
API it writes with is missing at this server (app/storytelling/endpoints.py: `/responses`
with LLM_API=responses).

    readiness = Readiness(availability, endpoints, needs=(RESPONSES,))
    readiness.closed_because()    # None: it can write; else why not, in the request's
                                  # language, naming the model or the setting that mends it

While it says why, the story form and the one-tap buttons are closed with the reason (as
the day's limit closes them) and a new story is refused 503 `storyteller_unavailable`
before any job is made (app/queue/intake.py); a replay is answered as ever.
"""

from __future__ import annotations

from app.i18n import N_, gettext
from app.storytelling.availability import ModelAvailability
from app.storytelling.endpoints import MENDED_BY, Endpoints

NO_ENDPOINT = N_("Stories can't be written: this storyteller has no %(endpoint)s (set "
                 "%(setting)s).")
MODEL_GONE = N_("Stories can't be written: the storyteller no longer offers %(model)s (set "
                "STORY_MODEL).")


class Readiness:
    """`needs`: the endpoints beyond Chat Completions the storyteller cannot write without."""

    def __init__(self, availability: ModelAvailability | None = None,
                 endpoints: Endpoints | None = None, *, needs: tuple[str, ...] = ()) -> None:
        self.availability = availability
        self.endpoints = endpoints or Endpoints()
        self.needs = needs

    def closed_because(self) -> str | None:
        """Why no story can be written now (None: one can), the endpoint first: with the
        route missing, nothing is known of the model."""
        for endpoint in self.needs:
            if self.endpoints.lacks(endpoint):
                return gettext(NO_ENDPOINT) % {"endpoint": endpoint,
                                               "setting": MENDED_BY[endpoint]}
        if self.availability is not None and self.availability.gone:
            return gettext(MODEL_GONE) % {"model": self.availability.model}
        return None
