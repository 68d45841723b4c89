"""Reading a provider's answer to the app's own rules, whatever the server does: the one
place the chat and the background storytellers turn a model's text into a story.

    reader = Reader(request, prompt=build_prompt(request), job_id=17)
    reader.shown(raw)               # the text as the card shows it, as it arrives
    reader.past_cap(raw)            # True: past the app's cap (words or characters): stop
    story = reader.story(raw, ending=Ending.STOP, model="m", prompt_tokens=None,
                         completion_tokens=None)

A story is whole only when the provider said it finished (`Ending.STOP`) within the app's
cap; one its token budget cut off (`LENGTH`) or past the app's own cap (`CAPPED`: 1.5 times
the words asked, or their characters where the language puts no spaces between its words,
and a bound on all its characters, so one 2 MB "word" is no story: app/lengths.py) is
kept to its last whole sentence within the cap; one that simply ended (`NONE`: `[DONE]`
or a closed connection with no finish reason) is cut short and raises CutShort, its words
kept by the writer. Silence is counted from the last word (or reasoning
token), never from the last chunk: empty, role-only and keep-alive deltas are silence
(app/storytelling/streaming.py).

The text is shaped as it arrives, the same way each time (shaping a shaped text changes
nothing, so a story picked up again from its saved words reads on): the app's own prompt
markup out, and any tag the model writes, in any script; bidi overrides out; the model's
preamble before the story out ("Sure! Here's a bedtime story about a fox:", is_preamble);
the first line a title (without the characters that show nothing) or else one made from the
idea; every line break a paragraph. What each of those is: app/storytelling/shaping.py.
"""

from __future__ import annotations

import enum
import logging
import re

from app.failures import CUT_SHORT, STORYTELLER_EMPTY, StorytellerError
from app.finishing import cut_to_last_sentence, finished_text
from app.languages import DEFAULT_LANGUAGE, language_of
from app.lengths import length_of
from app.logs import log
from app.stories import Story, StoryRequest, clean_text, title_of, without_bidi_controls
from app.storytelling.shaping import (
    BLOCK_LINE,
    DATA,
    HEAD_MAX_CHARS,
    PREAMBLE_OPENER,
    TAG,
    TITLE_MAX_CHARS,
    idea_title,
    is_preamble,
    is_title,
    normal,
    paragraphed,
    without_markup,
)

# A story line this long or longer that the prompt holds word for word is the prompt echoed.
ECHO_MIN_WORDS = 6

# The log's details of a story that did not come (the family reads its Failure's words).
SENT_NOTHING = "it sent nothing"
STOPPED_MID_STORY = "it stopped mid-story"
# A stream that ended or was cut before its first word, with no finish reason: a cut, not
# an empty answer (a second request on a one-slot server ends the first one's stream).
STOPPED_BEFORE_WORDS = "it stopped before the story began"
NO_ROOM = "it ran out of room before the story began"


class CutShort(StorytellerError):
    """The provider stopped before the story's end (no finish reason, or silence after its
    first words): `cut_short`, the words so far kept, and Finish offered."""

    def __init__(self, detail: str) -> None:
        super().__init__(CUT_SHORT, detail)


class Ending(enum.Enum):
    """How the provider's answer ended."""

    STOP = "stop"  # it said the story was done
    LENGTH = "length"  # its token budget ran out
    CAPPED = "capped"  # the app stopped reading at its own word cap
    NONE = "none"  # it ended with no finish reason


def word_cap(length: str, language: str = DEFAULT_LANGUAGE) -> int:
    """The most words the app reads of a story of this length: 360 / 720 / 1,260; the most
    characters, in a language written without spaces (Japanese: 750 / 1,500 / 2,625)."""
    return length_of(length).cap(language_of(language))


def char_cap(length: str, language: str = DEFAULT_LANGUAGE) -> int:
    """The most characters, all of them, the app reads of a story of this length: 4,320 /
    8,640 / 15,120; in a language written without spaces, 1,500 / 3,000 / 5,250."""
    return length_of(length).char_cap(language_of(language))


class Reader:
    """The app's rules for one story's answer; `prompt`: the system prompt and the user's
    message that were sent (echoed lines of them are dropped)."""

    def __init__(self, request: StoryRequest, *, prompt: tuple[str, ...], job_id: int) -> None:
        self.request = request
        self.job_id = job_id
        self.language = language_of(request.language)  # its unit: words, or characters
        self.cap = word_cap(request.length, request.language)
        self.char_cap = char_cap(request.length, request.language)
        # Its instructions only: the family's own words (the idea, the names) may be told.
        self._prompt = normal(DATA.sub(" ", " ".join(prompt)))
        self._seen: dict[str, bool] = {}

    def past_cap(self, raw: str) -> bool:
        """Whether the model's text is past the app's cap: its words (its title line apart;
        its characters, spaces apart, where words are not spaced) past the word cap, or its
        characters (all of them) past the character cap."""
        if len(raw) > self.char_cap:
            return True
        words = self.language.count(raw)
        if not self.request.carried_text and "\n" in raw.lstrip():
            words -= self.language.count(raw.lstrip().partition("\n")[0])
        return words > self.cap

    def shown(self, raw: str) -> str:
        """The model's text so far as the app keeps it (see the module's docstring)."""
        lines = [line for line in without_bidi_controls(clean_text(raw)).split("\n")
                 if not self._echoed(line)]
        text = self._without_preamble(without_markup("\n".join(lines)))
        if self.request.carried_text:  # the rest of a story: no title of its own
            return paragraphed(text)
        text = text.lstrip()
        head, newline, rest = text.partition("\n")
        # "**Title:**" on a line of its own (or "***", or a line that shows nothing): the
        # title is the next line, after any preamble.
        while newline and not title_of(head):
            text = self._without_preamble(rest).lstrip()
            head, newline, rest = text.partition("\n")
        if not newline:  # the first line is not done: a title, a preamble, or the story?
            said = title_of(text) if len(text) <= HEAD_MAX_CHARS else None
            if said is not None and (len(said) <= TITLE_MAX_CHARS
                                     or PREAMBLE_OPENER.match(said)):
                return text  # no telling yet
            return f"{idea_title(self.request)}\n\n{paragraphed(text)}"
        title = title_of(head)
        if not is_title(title):
            rest = f"{head.strip().strip('#*_ ')}\n{rest}"
            title = idea_title(self.request)
        return f"{title}\n\n{paragraphed(rest.lstrip())}"

    def story(self, raw: str, *, ending: Ending, model: str, prompt_tokens: int | None,
              completion_tokens: int | None) -> Story:
        """The story in the model's whole answer, or StorytellerError saying why none."""
        text = self.shown(raw)
        if not text.strip():
            raise StorytellerError(STORYTELLER_EMPTY,
                                   NO_ROOM if ending is Ending.LENGTH else SENT_NOTHING)
        if ending is Ending.NONE:
            raise CutShort(STOPPED_MID_STORY)
        if ending is Ending.STOP and self.past_cap(raw):  # a whole answer, read at once
            ending = Ending.CAPPED
        if self.request.carried_text:  # the rest, a new paragraph or not (finished_text)
            title, body = "", text.rstrip()
        else:
            text = text.strip()
            title, _, body = text.partition("\n\n")
            if not body.strip():  # one line only: it is the story, under the idea's title
                title, body = idea_title(self.request), title
        if ending in (Ending.LENGTH, Ending.CAPPED):
            body = self._cut(body, ending=ending, model=model,
                             completion_tokens=completion_tokens)
        if self.request.carried_text:
            title, _, body = finished_text(self.request.carried_text, body).partition("\n\n")
        return Story(title=title, body=body.strip(), model=model, prompt_tokens=prompt_tokens,
                     completion_tokens=completion_tokens)

    def _cut(self, body: str, *, ending: Ending, model: str,
             completion_tokens: int | None) -> str:
        """The body ended at its last whole sentence within the app's cap (its words and its
        characters), or cut hard at the character cap, marked so, where no sentence ended."""
        body = body.rstrip()
        words = len(body.split())
        within = body
        if self.language.count(body) > self.cap:  # to the end of its cap's last word
            unit = r"\S+" if self.language.spaced else r"\S"
            reached = re.match(rf"(?:\s*{unit}){{{self.cap}}}", body)
            within = body[:reached.end()] if reached else body
        by = "word_cap" if ending is Ending.CAPPED else "token_budget"
        if len(within) > self.char_cap:
            within, by = within[:self.char_cap], "char_cap"
        kept = cut_to_last_sentence(within)
        log("story_truncated", level=logging.WARNING, job_id=self.job_id, model=model,
            by=by, completion_tokens=completion_tokens, kept_words=len(kept.split()),
            dropped_words=words - len(kept.split()), kept_chars=len(kept),
            dropped_chars=max(len(body) - len(kept), 0))
        return kept

    def _without_preamble(self, text: str) -> str:
        """The text without the model's preamble, the lines at its very start that only
        say a story follows (is_preamble); the title the app makes from the idea is none."""
        while True:
            head, newline, rest = text.lstrip().partition("\n")
            if not newline or not is_preamble(head) or (
                    title_of(head) == idea_title(self.request)):
                return text
            text = rest

    def _echoed(self, line: str) -> bool:
        """A line of the prompt, echoed back: a data block alone, or an instruction (each
        line judged once: the text is shaped again as each chunk arrives)."""
        echoed = self._seen.get(line)
        if echoed is None:
            words = normal(TAG.sub(" ", line))
            echoed = bool(BLOCK_LINE.match(line)) or (
                len(words.split()) >= ECHO_MIN_WORDS and words in self._prompt)
            self._seen[line] = echoed
        return echoed
