"""What a failed job's card tells the family: what went wrong, in a parent's words, and
whether trying again can help (only then does the card say so and offer it).

    note = failure_note(job.error_text)
    note.what, note.advice, note.retry   # "The storyteller's model is no longer offered.", ...

A job's `error_text` is a FailReason (the queue's own) or the storyteller's short
sentence (app/storytelling, the queue's writers). Those that trying again cannot mend (a
model the provider no longer offers, a refused request or key, an idea the storyteller
declined) say what is wrong and who can put it right; the rest say nothing is lost. A
story cut before its first word is a cut, and offers "Try again"; only an answer that
ended properly with no words ("sent nothing") suggests another length or idea instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.i18n import N_, gettext
from app.queue.jobs import FailReason

TRY_AGAIN = N_("Nothing is lost: you can simply try again.")
_HTTP_STATUS = re.compile(r"\(HTTP (\d{3})\)")
# app/storytelling/endpoints.py's "this storyteller has no /responses (set LLM_API=chat)".
_NO_ENDPOINT = re.compile(r"^this storyteller has no (\S+) \(set (\S+)\)$")


@dataclass(frozen=True)
class FailureNote:
    """The words in English, as written here; `what` and `advice` in the request's language."""

    what_en: str  # what went wrong
    advice_en: str | None  # what the family can do (None: nothing to add)
    retry: bool  # whether "Try again" is offered: it can help
    reason: str | None = None  # the storyteller's own words, for a failure not known here
    params: tuple[tuple[str, str], ...] = ()  # what the words name (an endpoint, a setting)

    @property
    def what(self) -> str:
        if self.reason is None:
            return gettext(self.what_en) % dict(self.params)
        return gettext(self.what_en) % {"reason": self.reason or gettext("no reason given")}

    @property
    def advice(self) -> str | None:
        return gettext(self.advice_en) % dict(self.params) if self.advice_en else None


MODEL_GONE = FailureNote(
    N_("The storyteller's model is no longer offered, so no story can be written just now."),
    N_("Trying again won't help until whoever set up the app changes STORY_MODEL to a "
       "current model."), retry=False)

_BY_TEXT = {
    FailReason.CANCELLED: FailureNote(N_("You stopped this story."), None, retry=True),
    FailReason.INTERRUPTED: FailureNote(
        N_("The storyteller was interrupted (the app restarted) before the story was "
           "finished."), TRY_AGAIN, retry=True),
    FailReason.EXPIRED: FailureNote(
        N_("The story waited too long in line, so it was put aside."), TRY_AGAIN, retry=True),
    # Said by jobs before the endpoint was named (app/storytelling/endpoints.py).
    "the storyteller has no background mode (set LLM_API=chat)": FailureNote(
        N_("This storyteller can't write stories in the background."),
        N_("Trying again won't help until whoever set up the app changes LLM_API to chat."),
        retry=False),
    "the storyteller declined to write this story": FailureNote(
        N_("The storyteller wouldn't write a story about this idea."),
        N_("Please try a different idea."), retry=False),
    "the storyteller no longer has this story": FailureNote(
        N_("The storyteller no longer has this story, so it can't be had back."),
        N_("You can ask for a new one."), retry=True),
    # A story the storyteller ended (or went quiet in) with no finish: its words are kept,
    # and the card offers to finish it from them.
    "the storyteller stopped mid-story": FailureNote(
        N_("The storyteller stopped in the middle of the story."), TRY_AGAIN, retry=True),
    # The same, before its first word (a one-slot server ended it for another request, a
    # dropped connection): a cut, which the same idea, tried again, gets past.
    "the storyteller stopped before the story began": FailureNote(
        N_("The storyteller stopped before the story began."), TRY_AGAIN, retry=True),
    # Nothing at all, though it said it was done: most often a request the server can't
    # take (a small model's context is full), which the same request will meet again.
    "the storyteller sent nothing": FailureNote(
        N_("The storyteller sent nothing back."),
        N_("Trying the same story again may not help: a shorter length or another idea may."),
        retry=False),
    "the storyteller took too long": FailureNote(
        N_("The storyteller took too long to answer."), TRY_AGAIN, retry=True),
    "could not reach the storyteller": FailureNote(
        N_("The storyteller couldn't be reached."), TRY_AGAIN, retry=True),
    "the storyteller is busy (rate limited)": FailureNote(
        N_("The storyteller is busy just now."), N_("Nothing is lost: try again in a minute."),
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
        return FailureNote(
            N_("This storyteller has no %(endpoint)s."),
            N_("Trying again won't help until whoever set up the app changes %(setting)s."),
            retry=False, params=(("endpoint", missing.group(1)), ("setting", missing.group(2))))
    status = _HTTP_STATUS.search(text)
    if status is not None:
        return _status_note(int(status.group(1)))
    return FailureNote(N_("The storyteller couldn't write this one (%(reason)s)."),
                       TRY_AGAIN, retry=True, reason=text)


def _status_note(status: int) -> FailureNote:
    """A provider's error status: its side (5xx) mends itself; a refusal (4xx) does not."""
    if status >= 500:
        return FailureNote(N_("The storyteller had a problem on its side."), TRY_AGAIN,
                           retry=True)
    if status in (401, 403):
        return FailureNote(
            N_("The storyteller didn't accept the app's key."),
            N_("Trying again won't help until whoever set up the app changes OPENAI_API_KEY."),
            retry=False)
    return FailureNote(N_("The storyteller refused the app's request."),
                       N_("Trying again won't help: whoever set up the app can see why in its "
                          "log."), retry=False)
