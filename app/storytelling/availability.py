"""Whether the provider still offers STORY_MODEL: asked once after start-up, and learnt
from any story the provider refused because of its model.

    availability = ModelAvailability("gpt-6-luna")
    await check_model(client, availability)   # after the app serves: one free retrieve
    availability.gone                         # True: the home page says stories can't be written
    if is_model_not_found(error, model): ...  # a 404 about the model, not about the URL

Only an answer that says the model does not exist counts: a local server without
`GET /models/{id}` answers 404 too (about the URL), and a timeout or any other error says
nothing about the model. Those are passed over quietly.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from app.logs import log
from app.storytelling.models import ModelList, chat_models, image_models

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

# The start-up check is a courtesy: a provider that does not answer this fast is not waited for.
MODEL_CHECK_TIMEOUT_S = 5.0
MODEL_NOT_FOUND = "model_not_found"
SETTING = "STORY_MODEL"


class ModelAvailability:
    """What this process knows of STORY_MODEL at the provider (its memory only: every
    process asks at its own start-up)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.gone = False

    def mark_gone(self, *, seen_by: str) -> None:
        """The provider said the model does not exist: said once in the log."""
        if not self.gone:
            self.gone = True
            log("model_unavailable", level=logging.WARNING, setting=SETTING, model=self.model,
                seen_by=seen_by, detail=f"stories can't be written: set {SETTING} to a "
                "model the provider offers")

    def mark_offered(self) -> None:
        """The provider took a request for the model: whatever was said before, it has it."""
        self.gone = False

    @property
    def notice_model(self) -> str | None:
        """The model the home page names as no longer offered (None: nothing to say)."""
        return self.model if self.gone else None


def model_gone_detail(model: str) -> str:
    """The log's detail of a job failed `model_unavailable` because the provider no longer
    offers its model (the family's words are app/failures.py's)."""
    return f"the storyteller no longer offers the model {model} (set {SETTING})"


def is_model_not_found(error: Exception, model: str) -> bool:
    """A 404 whose answer is about the model: OpenAI's `model_not_found` code, or a message
    that names the model as missing (Ollama: 'model "x" not found')."""
    if getattr(error, "status_code", None) != 404:
        return False
    if getattr(error, "code", None) == MODEL_NOT_FOUND:
        return True
    body = getattr(error, "body", None)
    message = str(body.get("message") or "") if isinstance(body, dict) else str(error)
    lowered = message.lower()
    return model.lower() in lowered and ("does not exist" in lowered or "not found" in lowered)


def warn_if_deprecated(setting: str, model: str, known: ModelList) -> None:
    """One WARNING for a model the openai library marks deprecated, with its shutdown date."""
    if model in known.deprecated:
        shutdown = known.deprecated[model]
        log("model_deprecated", level=logging.WARNING, setting=setting, model=model,
            shutdown=shutdown.isoformat() if shutdown else "not announced",
            detail="the openai library marks it deprecated: choose a current model")


async def check_image_model(model: str) -> None:
    """IMAGE_MODEL against the library's list, read once the app serves (off start-up)."""
    warn_if_deprecated("IMAGE_MODEL", model, await asyncio.to_thread(image_models))


async def check_model(client: ProviderClient, availability: ModelAvailability) -> None:
    """Warn of a model the openai library marks deprecated, then ask the provider for it
    once (a retrieve: billed nothing, never retried)."""
    import openai

    model = availability.model
    warn_if_deprecated(SETTING, model, await asyncio.to_thread(chat_models))
    try:
        await client().with_options(timeout=MODEL_CHECK_TIMEOUT_S, max_retries=0).models.retrieve(
            model)
    except openai.NotFoundError as error:
        if is_model_not_found(error, model):
            availability.mark_gone(seen_by="start-up check")
        else:  # no /models/{id} here (a local server): nothing known about the model
            log("model_check_skipped", model=model, reason="no model lookup at this server")
    except Exception as error:  # any other answer says nothing about the model
        log("model_check_skipped", model=model, reason=type(error).__name__)
    else:
        log("model_checked", model=model, offered="yes")
