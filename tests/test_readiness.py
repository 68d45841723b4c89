"""Whether the storyteller can write at all: the endpoint it needs missing is said first
(with it missing, nothing is known of the model), then its model gone; in the request's
language; nothing while it can write."""

from __future__ import annotations

from app.i18n import speaking
from app.storytelling.availability import ModelAvailability
from app.storytelling.endpoints import IMAGES, RESPONSES, Endpoints
from app.storytelling.readiness import Readiness


def test_a_storyteller_that_can_write_has_no_reason():
    endpoints = Endpoints()
    endpoints.mark_missing(IMAGES, seen_by="test")  # pictures only: stories are still written
    readiness = Readiness(ModelAvailability("m"), endpoints, needs=(RESPONSES,))
    assert readiness.closed_because() is None
    assert Readiness().closed_because() is None  # the demo storyteller


def test_the_missing_endpoint_is_said_before_the_model():
    availability, endpoints = ModelAvailability("gpt-4o-mini"), Endpoints()
    readiness = Readiness(availability, endpoints, needs=(RESPONSES,))
    availability.mark_gone(seen_by="test")
    assert readiness.closed_because() == ("Stories can't be written: the storyteller no "
                                          "longer offers gpt-4o-mini (set STORY_MODEL).")
    endpoints.mark_missing(RESPONSES, seen_by="test")
    assert readiness.closed_because() == ("Stories can't be written: this storyteller has no "
                                          "/responses (set LLM_API=chat).")
    availability.mark_offered()  # a chat storyteller needs no /responses: the model alone
    assert Readiness(availability, endpoints).closed_because() is None


def test_the_reason_is_in_the_request_s_language():
    availability = ModelAvailability("gpt-4o-mini")
    availability.mark_gone(seen_by="test")
    with speaking("fr"):
        said = Readiness(availability).closed_because()
    assert said == ("Impossible d’écrire des histoires : le conteur ne propose plus "
                    "gpt-4o-mini (définissez STORY_MODEL).")
