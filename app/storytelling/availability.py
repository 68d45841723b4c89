"""Whether the provider still offers STORY_MODEL: asked once after start-up, and learnt
from any story the provider refused because of its model.

    availability = ModelAvailability("gpt-6-luna")
    await check_model(client, availability, shutdowns)   # after the app serves: one free
                                                         # retrieve, its shutdown date kept
    availability.gone                         # True: the home page says stories can't be written
    if is_model_not_found(error, model): ...  # a 404 about the model, not about the URL
    await check_image_model(client, "gpt-image-2.5-flare", shutdowns)   # IMAGE_MODEL's date alone

Only an answer that says the model does not exist counts: a local server without
`GET /models/{id}` answers 404 too (about the URL), and a timeout or any other error says
nothing about the model. Those are passed over quietly. The answer's `shutdown_date`, or
else the openai library's list, gives the model's announced shutdown
(app/storytelling/shutdowns.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from app.logs import log
from app.storytelling.models import chat_models, image_models, speech_models
from app.storytelling.shutdowns import Shutdowns

if TYPE_CHECKING:
    from app.storytelling.provider import ProviderClient

# The start-up check is a courtesy: a provider that does not answer this fast is not waited for.
MODEL_CHECK_TIMEOUT_S = 5.0
MODEL_NOT_FOUND = "model_not_found"
SETTING, IMAGE_SETTING, VOICE_SETTING = "STORY_MODEL", "IMAGE_MODEL", "VOICE_MODEL"
OFFERED, NOT_FOUND = "offered", "not_found"  # what the provider's answer says


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


async def ask_provider(client: ProviderClient, model: str) -> tuple[str, object]:
    """Ask the provider for `model` once (a retrieve: billed nothing, never retried): what
    its answer says (`offered`, `not_found`, or why nothing is known) and the answer's
    `shutdown_date` as sent (None: none)."""
    import openai

    try:
        answer = await client().with_options(
            timeout=MODEL_CHECK_TIMEOUT_S, max_retries=0).models.retrieve(model)
    except openai.NotFoundError as error:
        if is_model_not_found(error, model):
            return NOT_FOUND, None
        return "no model lookup at this server", None  # a local server: nothing known
    except Exception as error:  # any other answer says nothing about the model
        return type(error).__name__, None
    # Read as sent: the library builds its objects unvalidated, so a timestamp stays one.
    return OFFERED, getattr(answer, "shutdown_date", None)


async def check_model(client: ProviderClient, availability: ModelAvailability,
                      shutdowns: Shutdowns | None = None) -> None:
    """Ask the provider for STORY_MODEL once, then say once what is known of its shutdown
    (the provider's date, else the openai library's)."""
    model = availability.model
    said, shutdown = await ask_provider(client, model)
    if said == NOT_FOUND:
        availability.mark_gone(seen_by="start-up check")
    (shutdowns or Shutdowns()).announce(SETTING, model, said=shutdown,
                                        library=(await asyncio.to_thread(chat_models)).deprecated)
    _log_check(SETTING, model, said)


async def check_image_model(client: ProviderClient, model: str,
                            shutdowns: Shutdowns | None = None) -> None:
    """IMAGE_MODEL's shutdown, from the provider's answer or the library's list (a picture
    the provider refuses for its model says so itself: nothing is marked here)."""
    said, shutdown = await ask_provider(client, model)
    (shutdowns or Shutdowns()).announce(IMAGE_SETTING, model, said=shutdown,
                                        library=(await asyncio.to_thread(image_models)).deprecated)
    _log_check(IMAGE_SETTING, model, said)


async def check_voice_model(client: ProviderClient, model: str,
                            shutdowns: Shutdowns | None = None, *, speech: bool) -> None:
    """VOICE_MODEL's shutdown, from the provider's answer or the library's list (its chat
    models for Chat Completions' audio, its speech models for /audio/speech); a model the
    provider does not have is named in the log (a part it refuses says so itself)."""
    said, shutdown = await ask_provider(client, model)
    listed = speech_models if speech else chat_models
    (shutdowns or Shutdowns()).announce(VOICE_SETTING, model, said=shutdown,
                                        library=(await asyncio.to_thread(listed)).deprecated)
    if said == NOT_FOUND:
        log("model_unavailable", level=logging.WARNING, setting=VOICE_SETTING, model=model,
            seen_by="start-up check", detail=f"stories can't be read aloud: set "
            f"{VOICE_SETTING} to a model the provider offers, or NARRATOR=off")
    _log_check(VOICE_SETTING, model, said)


def _log_check(setting: str, model: str, said: str) -> None:
    if said in (OFFERED, NOT_FOUND):
        log("model_checked", setting=setting, model=model,
            offered="yes" if said == OFFERED else "no")
    else:
        log("model_check_skipped", setting=setting, model=model, reason=said)
