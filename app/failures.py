"""Why a job failed: one record per failure, its stable code the one thing stored.

    raise StorytellerError(STORYTELLER_TIMEOUT, "no words for 180 s")   # the detail: the log's
    failure = failure_of(job.error_text)   # the row's code -> its record
    failure.code, failure.said             # "storyteller_timeout", "the storyteller took too long"
    failure.what, failure.advice, failure.retry   # the card's words (N_) and its "Try again"

A failed job's `story_jobs.error_text` is a code of this module (migration 037's CHECK is
tested against FAILURES), never a sentence: the JSON API's `error_code` is that code, and
its `error`, the card and the pages render the record's words in the reader's language at
request time, so a reworded sentence keeps its advice and its offer. The storyteller's and
the illustrator's errors carry their Failure; the provider's own detail goes to the log.

STORY_FAILURES are the contract's `error_code` list (CONTRACT.md, docs/api.md); a picture
job fails with those it shares (interrupted, internal) or with one of PICTURE_FAILURES,
which its frame names after "The picture could not be drawn:"; a narration part with
those it shares (interrupted, internal, story_gone) or one of NARRATION_FAILURES.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.i18n import N_, gettext


class Offer(enum.StrEnum):
    """What a failed story's card offers."""

    TRY_AGAIN = "try_again"  # a new call can help: "Try again" ("Finish" where words are kept)
    NOTHING = "nothing"  # the same request would fail the same way: say who can mend it


@dataclass(frozen=True)
class Failure:
    """One reason a job fails. `message` is the short text the JSON API's `error` says
    ("the storyteller took too long"); `what` (a story's card) says it in a parent's words,
    `advice` what the family can do. All three are English, marked N_: rendered (`said`,
    or a template's `tr()`) in the reader's language."""

    code: str
    message: str
    what: str | None = None  # a story's card (a picture's frame says `message`)
    advice: str | None = None
    offer: Offer = Offer.TRY_AGAIN
    what_wordless: str | None = None  # the card's `what` when no words were kept, if other

    def what_for(self, *, words_kept: bool) -> str:
        """The card's words (N_, English) for a job that kept words or none."""
        if not words_kept and self.what_wordless:
            return self.what_wordless
        return self.what or self.message

    @property
    def said(self) -> str:
        """The message in the current request's language (app/i18n)."""
        return gettext(self.message)

    @property
    def retry(self) -> bool:
        """Whether "Try again" (and "Finish", where words were kept) is offered."""
        return self.offer is Offer.TRY_AGAIN


TRY_AGAIN = N_("Nothing is lost: you can simply try again.")

# -- a story's (the contract's error_code list, in its order) -------------------------------

# The provider answered an error status (which one: the log), a server without an API the
# app is set to use too (LLM_API=responses without /responses: the home page names it).
STORYTELLER_FAILED = Failure(
    "storyteller_failed", N_("the storyteller failed"),
    N_("The storyteller answered with an error."),
    N_("Nothing is lost: you can try again. If it keeps failing, whoever set up the app can "
       "see why in its log."))
STORYTELLER_BUSY = Failure(  # 429
    "storyteller_busy", N_("the storyteller is busy (rate limited)"),
    N_("The storyteller is busy just now."), N_("Nothing is lost: try again in a minute."))
STORYTELLER_TIMEOUT = Failure(  # silent past LLM_TIMEOUT_S before its first word
    "storyteller_timeout", N_("the storyteller took too long"),
    N_("The storyteller took too long to answer."), TRY_AGAIN)
STORYTELLER_UNREACHABLE = Failure(
    "storyteller_unreachable", N_("could not reach the storyteller"),
    N_("The storyteller couldn't be reached."), TRY_AGAIN)
STORYTELLER_UNREADABLE = Failure(  # not JSON, not a story's shape, too large to read
    "storyteller_unreadable", N_("the storyteller sent an unreadable answer"),
    N_("The storyteller's answer couldn't be read."), TRY_AGAIN)
# It said it was done and sent no words: most often a request the server can't take (a
# small model's context is full), which the same request meets again.
STORYTELLER_EMPTY = Failure(
    "storyteller_empty", N_("the storyteller sent nothing"),
    N_("The storyteller sent nothing back."),
    N_("Trying the same story again may not help: a shorter length or another idea may."),
    Offer.NOTHING)
KEY_REFUSED = Failure(  # 401, 403
    "key_refused", N_("the storyteller did not accept the app's key"),
    N_("The storyteller didn't accept the app's key."),
    N_("Trying again won't help until whoever set up the app changes OPENAI_API_KEY."),
    Offer.NOTHING)
# The provider no longer offers STORY_MODEL (named on the home page and in the log:
# app/storytelling/availability.py). An API the server lacks is no model's fault: the
# provider answered an error (storyteller_failed), and the home page names the setting.
MODEL_UNAVAILABLE = Failure(
    "model_unavailable", N_("the storyteller no longer offers this model (set STORY_MODEL)"),
    N_("The storyteller's model is no longer offered, so no story can be written just now."),
    N_("Trying again won't help until whoever set up the app changes STORY_MODEL to a "
       "current model."), Offer.NOTHING)
DECLINED = Failure(  # the model's refusal, a content filter
    "declined", N_("the storyteller declined to write this story"),
    N_("The storyteller wouldn't write a story about this idea."),
    N_("Please try a different idea."), Offer.NOTHING)
# The answer ended, or went quiet, before the story's end: the words so far are kept, and
# the card offers to finish them. Before its first word too (a one-slot server ended it for
# another request, a dropped connection): a cut, which the same idea, tried again, gets past.
CUT_SHORT = Failure(
    "cut_short", N_("the storyteller stopped before the end of the story"),
    N_("The storyteller stopped in the middle of the story."), TRY_AGAIN,
    what_wordless=N_("The storyteller stopped before the story began."))
STOPPED = Failure(  # the family's Stop ("cancelled", as the contract's cancel says)
    "stopped", N_("cancelled"), N_("You stopped this story."))
INTERRUPTED = Failure(  # its process died or shut down; the sweeper's, a lost response's
    "interrupted", N_("interrupted"),
    N_("The storyteller was interrupted (the app restarted) before the story was finished."),
    TRY_AGAIN)
EXPIRED = Failure(  # it waited while no worker was alive to run it
    "expired", N_("expired"),
    N_("The story waited too long in line, so it was put aside."), TRY_AGAIN)
NOT_SAVED = Failure(
    "not_saved", N_("the story could not be saved"),
    N_("The story was written, but it couldn't be saved."), TRY_AGAIN)
INTERNAL = Failure(  # a defect: logged as an ERROR with its traceback where it was caught
    "internal", N_("something went wrong on our side"),
    N_("Something went wrong on our side while writing this story."), TRY_AGAIN)

STORY_FAILURES: tuple[Failure, ...] = (
    STORYTELLER_FAILED, STORYTELLER_BUSY, STORYTELLER_TIMEOUT, STORYTELLER_UNREACHABLE,
    STORYTELLER_UNREADABLE, STORYTELLER_EMPTY, KEY_REFUSED, MODEL_UNAVAILABLE, DECLINED,
    CUT_SHORT, STOPPED, INTERRUPTED, EXPIRED, NOT_SAVED, INTERNAL)

# -- a picture's (said after "The picture could not be drawn:") ----------------------------

ILLUSTRATOR_FAILED = Failure("illustrator_failed", N_("the illustrator failed"))
ILLUSTRATOR_BUSY = Failure("illustrator_busy", N_("the illustrator is busy (rate limited)"))
ILLUSTRATOR_TIMEOUT = Failure("illustrator_timeout", N_("the illustrator took too long"))
ILLUSTRATOR_UNREACHABLE = Failure("illustrator_unreachable",
                                  N_("could not reach the illustrator"))
ILLUSTRATOR_UNREADABLE = Failure("illustrator_unreadable",
                                 N_("the illustrator sent an unreadable answer"))
ILLUSTRATOR_EMPTY = Failure("illustrator_empty", N_("the illustrator sent no picture"))
PICTURE_UNSHOWABLE = Failure("picture_unshowable",
                             N_("the illustrator sent a picture that cannot be shown"))
PICTURE_DECLINED = Failure(  # the provider's safety system would not draw it
    "picture_declined", N_("the illustrator would not draw this story: it is kept as it is, "
                           "and you can try another picture"))
PICTURE_MODEL_UNAVAILABLE = Failure(
    "picture_model_unavailable", N_("the illustrator does not offer this model (set "
                                    "IMAGE_MODEL)"))
PICTURES_UNSUPPORTED = Failure(  # the server has no Images API (app/storytelling/endpoints.py)
    "pictures_unsupported",
    N_("this storyteller has no /images/generations (set ILLUSTRATOR=off)"))
# A picture job asked for before ILLUSTRATOR was turned off.
PICTURES_OFF = Failure("pictures_off", N_("pictures are off here"))
STORY_GONE = Failure("story_gone", N_("the story is gone"))  # deleted before it was drawn
# Skipped, drawn by nobody: the month's budget had no room (sql/functions/insert_picture_job.sql).
OVER_BUDGET = Failure("over_budget", N_("this month's budget had no room for it"))

PICTURE_FAILURES: tuple[Failure, ...] = (
    ILLUSTRATOR_FAILED, ILLUSTRATOR_BUSY, ILLUSTRATOR_TIMEOUT, ILLUSTRATOR_UNREACHABLE,
    ILLUSTRATOR_UNREADABLE, ILLUSTRATOR_EMPTY, PICTURE_UNSHOWABLE, PICTURE_DECLINED,
    PICTURE_MODEL_UNAVAILABLE, PICTURES_UNSUPPORTED, PICTURES_OFF, STORY_GONE, OVER_BUDGET)

# -- a narration part's (said after "The story could not be read aloud:") ----------------

NARRATOR_FAILED = Failure("narrator_failed", N_("the narrator failed"))
NARRATOR_BUSY = Failure("narrator_busy", N_("the narrator is busy (rate limited)"))
NARRATOR_TIMEOUT = Failure("narrator_timeout", N_("the narrator took too long"))
NARRATOR_UNREACHABLE = Failure("narrator_unreachable", N_("could not reach the narrator"))
NARRATOR_UNREADABLE = Failure("narrator_unreadable",
                              N_("the narrator sent an unreadable answer"))
# Not audio of the format asked, or more of it than a part can be.
NARRATION_UNPLAYABLE = Failure("narration_unplayable",
                               N_("the narrator sent audio that cannot be played"))
NARRATION_MODEL_UNAVAILABLE = Failure(
    "narration_model_unavailable", N_("the narrator does not offer this model (set "
                                      "VOICE_MODEL)"))
NARRATION_UNSUPPORTED = Failure(  # a server without /audio/speech
    "narration_unsupported", N_("this storyteller has no /audio/speech (set NARRATOR=off)"))
NARRATIONS_OFF = Failure("narrations_off", N_("reading aloud is off here"))

NARRATION_FAILURES: tuple[Failure, ...] = (
    NARRATOR_FAILED, NARRATOR_BUSY, NARRATOR_TIMEOUT, NARRATOR_UNREACHABLE,
    NARRATOR_UNREADABLE, NARRATION_UNPLAYABLE, NARRATION_MODEL_UNAVAILABLE,
    NARRATION_UNSUPPORTED, NARRATIONS_OFF)

# Every code a failed job may store: story_jobs_error_known's list (tests/test_failures.py).
FAILURES: dict[str, Failure] = {
    failure.code: failure
    for failure in (*STORY_FAILURES, *PICTURE_FAILURES, *NARRATION_FAILURES)}


def failure_of(code: str | None) -> Failure:
    """A stored code's record; INTERNAL for one this version does not know (a newer
    version's, read during a rolling deploy), which the database's CHECK keeps rare."""
    return FAILURES.get(code or "", INTERNAL)


class ProviderError(Exception):
    """A provider call (a story's, a picture's) did not give what was asked: `failure` says
    why (its code is what the job stores); str(error) is the detail, for the log only."""

    def __init__(self, failure: Failure, detail: str | None = None) -> None:
        super().__init__(detail or failure.message)
        self.failure = failure


class StorytellerError(ProviderError):
    """The storyteller could not write this story."""


class ResponseGone(StorytellerError):
    """The provider no longer has the background response (it answered 404)."""

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(INTERRUPTED, detail or "the provider no longer has the response")
