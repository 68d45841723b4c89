"""Reading a background response: how far it has been read, and the story in a final one.

    followed = Followed(text="", after=None)      # grows as the stream brings events
    story = story_in(response, followed, reader, job_id=17, model="gpt-6-luna")

A final response is completed, cut off by its token budget (incomplete), failed, or
cancelled; only the first two hold a story. Where its text cannot be read (a malformed
final event), the streamed text is taken when the stream brought all of it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.failures import (
    CUT_SHORT,
    DECLINED,
    MODEL_UNAVAILABLE,
    STORYTELLER_FAILED,
    STORYTELLER_UNREADABLE,
    StorytellerError,
)
from app.logs import log
from app.stories import Story
from app.storytelling.availability import MODEL_NOT_FOUND
from app.storytelling.reader import Ending, Reader

# The provider's words for a response that will not change any more.
FINAL_STATUSES = ("completed", "incomplete", "failed", "cancelled")


@dataclass
class Followed:
    """How far a story has been read: the model's text, and the last event's number.
    `done_text` is the text the stream said was whole (`response.output_text.done`);
    `to_the_end`: the final event came on the stream, so every delta came before it."""

    text: str
    after: int | None
    done_text: str | None = None
    to_the_end: bool = False
    words_at: float = 0.0  # when the last new words came (epoch seconds)

    @property
    def whole_text(self) -> str | None:
        """The model's whole text as streamed, when the stream brought all of it."""
        if self.done_text is not None:
            return self.done_text
        return self.text if self.to_the_end else None


def story_in(response: Any, followed: Followed, reader: Reader, *, job_id: int,
             model: str) -> Story:
    """The story in a final response: completed, or cut off by its token budget.
    `model`: the one asked for, where the response does not say."""
    status = response.status
    if status == "failed":
        code = getattr(response.error, "code", None) if response.error else None
        raise StorytellerError(MODEL_UNAVAILABLE if code == MODEL_NOT_FOUND
                               else STORYTELLER_FAILED, f"response failed: {code or 'no code'}")
    if status == "cancelled":  # at the provider, not by this job's Stop (that fails it first)
        raise StorytellerError(CUT_SHORT, "the response was cancelled at the provider")
    reason = getattr(response.incomplete_details, "reason", None)
    if _refused(response) or reason == "content_filter":
        raise StorytellerError(DECLINED, f"refused ({reason or 'a refusal'})")
    usage = response.usage
    return reader.story(
        _final_text(response, followed, job_id),
        ending=Ending.LENGTH if status == "incomplete" else Ending.STOP,
        model=response.model or model,
        # as reported, whatever it is: the meter reads it (app/money/meter.py)
        prompt_tokens=getattr(usage, "input_tokens", None),
        completion_tokens=getattr(usage, "output_tokens", None),
    )


def readable_text(response: Any) -> str | None:
    """A response's text so far, or None where it cannot be read."""
    try:
        text: str | None = response.output_text
        return text
    except Exception:  # a partial object the library cannot read yet: no words to show
        return None


def _final_text(response: Any, followed: Followed, job_id: int) -> str:
    """The final response's text; where it cannot be read (a malformed final event,
    such as a message whose content is null), the streamed text when that is whole."""
    whole = followed.whole_text
    try:
        text = response.output_text
    except Exception as error:
        if whole is None:
            log("final_text_unreadable", level=logging.ERROR, job_id=job_id,
                error=repr(error), exc_info=error)
            raise StorytellerError(STORYTELLER_UNREADABLE, "an unreadable final text") from None
        log("final_text_unreadable", level=logging.WARNING, job_id=job_id,
            error=repr(error), kept="the streamed text, which is whole", exc_info=error)
        return whole
    return text or whole or ""


def _refused(response: Any) -> bool:
    return any(getattr(part, "type", None) == "refusal"
               for item in response.output or [] for part in getattr(item, "content", None) or [])
