"""What a failed job's card tells the family: what went wrong, in a parent's words, and
whether trying again can help (only then does the card say so and offer it).

    note = failure_note(job.error_text)
    note.what, note.advice, note.retry   # "The storyteller's model is no longer offered.", ...

A job's `error_text` is a FailReason (the queue's own) or the storyteller's short
sentence (app/storytelling, the queue's writers). Those that trying again cannot mend (a
model the provider no longer offers, a refused request or key, an idea the storyteller
declined) say what is wrong and who can put it right; the rest say nothing is lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.queue.jobs import FailReason

TRY_AGAIN = "Nothing is lost: you can simply try again."
FOR_WHOEVER_SET_IT_UP = "Trying again won't help until whoever set up the app changes {}."
_HTTP_STATUS = re.compile(r"\(HTTP (\d{3})\)")
# app/storytelling/endpoints.py's "this storyteller has no /responses (set LLM_API=chat)".
_NO_ENDPOINT = re.compile(r"^this storyteller has no (\S+) \(set (\S+)\)$")


@dataclass(frozen=True)
class FailureNote:
    what: str  # what went wrong
    advice: str | None  # what the family can do (None: nothing to add)
    retry: bool  # whether "Try again" is offered: it can help


MODEL_GONE = FailureNote(
    "The storyteller's model is no longer offered, so no story can be written just now.",
    FOR_WHOEVER_SET_IT_UP.format("STORY_MODEL to a current model"), retry=False)

_BY_TEXT = {
    FailReason.CANCELLED: FailureNote("You stopped this story.", None, retry=True),
    FailReason.INTERRUPTED: FailureNote(
        "The storyteller was interrupted (the app restarted) before the story was finished.",
        TRY_AGAIN, retry=True),
    FailReason.EXPIRED: FailureNote(
        "The story waited too long in line, so it was put aside.", TRY_AGAIN, retry=True),
    # Said by jobs before the endpoint was named (app/storytelling/endpoints.py).
    "the storyteller has no background mode (set LLM_API=chat)": FailureNote(
        "This storyteller can't write stories in the background.",
        FOR_WHOEVER_SET_IT_UP.format("LLM_API to chat"), retry=False),
    "the storyteller declined to write this story": FailureNote(
        "The storyteller wouldn't write a story about this idea.",
        "Please try a different idea.", retry=False),
    "the storyteller no longer has this story": FailureNote(
        "The storyteller no longer has this story, so it can't be had back.",
        "You can ask for a new one.", retry=True),
    # A story the storyteller ended (or went quiet in) with no finish: its words are kept,
    # and the card offers to finish it from them.
    "the storyteller stopped mid-story": FailureNote(
        "The storyteller stopped in the middle of the story.", TRY_AGAIN, retry=True),
    # Nothing at all: most often a request the server can't take (a small model's context
    # is full), which the same request will meet again.
    "the storyteller sent nothing": FailureNote(
        "The storyteller sent nothing back.",
        "Trying the same story again may not help: a shorter length or another idea may.",
        retry=False),
    "the storyteller took too long": FailureNote(
        "The storyteller took too long to answer.", TRY_AGAIN, retry=True),
    "could not reach the storyteller": FailureNote(
        "The storyteller couldn't be reached.", TRY_AGAIN, retry=True),
    "the storyteller is busy (rate limited)": FailureNote(
        "The storyteller is busy just now.", "Nothing is lost: try again in a minute.",
        retry=True),
}


def failure_note(error_text: str | None) -> FailureNote:
    """The card's words for a job that failed with this `error_text`."""
    text = error_text or ""
    if text in _BY_TEXT:
        return _BY_TEXT[text]
    if text.startswith("the storyteller no longer offers the model") or "model_not_found" in text:
        return MODEL_GONE
    missing = _NO_ENDPOINT.match(text)
    if missing is not None:
        return FailureNote(f"This storyteller has no {missing.group(1)}.",
                           FOR_WHOEVER_SET_IT_UP.format(missing.group(2)), retry=False)
    status = _HTTP_STATUS.search(text)
    if status is not None:
        return _status_note(int(status.group(1)))
    return FailureNote(f"The storyteller couldn't write this one ({text or 'no reason given'}).",
                       TRY_AGAIN, retry=True)


def _status_note(status: int) -> FailureNote:
    """A provider's error status: its side (5xx) mends itself; a refusal (4xx) does not."""
    if status >= 500:
        return FailureNote("The storyteller had a problem on its side.", TRY_AGAIN, retry=True)
    if status in (401, 403):
        return FailureNote("The storyteller didn't accept the app's key.",
                           FOR_WHOEVER_SET_IT_UP.format("OPENAI_API_KEY"), retry=False)
    return FailureNote("The storyteller refused the app's request.",
                       "Trying again won't help: whoever set up the app can see why in its log.",
                       retry=False)
