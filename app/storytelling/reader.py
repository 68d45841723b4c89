"""Reading a provider's answer to the app's own rules, whatever the server does: the one
place the chat and the background storytellers turn a model's text into a story.

    reader = Reader(request, prompt=build_prompt(request), job_id=17)
    reader.shown(raw)               # the text as the card shows it, as it arrives
    reader.past_cap(raw)            # True: past 1.5 times the length asked, stop reading
    story = reader.story(raw, ending=Ending.STOP, model="m", prompt_tokens=None,
                         completion_tokens=None)
    showing = Showing(reader, on_text)          # showing.add(raw) as chunks come
    chunk = await next_chunk(stream, 180, showing)   # None: ended; TimeoutError: silent

A story is whole only when the provider said it finished (`Ending.STOP`); one its token
budget cut off (`LENGTH`) or the app stopped at its own word cap (`CAPPED`) is kept to its
last whole sentence; one that simply ended (`NONE`: `[DONE]` or a closed connection with no
finish reason) is cut short and raises CutShort, its words kept by the writer.

The text is shaped as it arrives, the same way each time (shaping a shaped text changes
nothing, so a story picked up again from its saved words reads on): the app's own prompt
markup out, the first line a title or else one made from the idea, every line break a
paragraph.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from app.finishing import cut_to_last_sentence, finished_text
from app.logs import log
from app.stories import (
    LENGTH_WORDS,
    Story,
    StoryRequest,
    StorytellerError,
    clean_text,
    title_of,
)
from app.storytelling.demo import title_from_idea

# The app stops reading a story this many times longer than the length asked.
WORD_CAP_FACTOR = 1.5
TITLE_MAX_CHARS = 80
# A story line this long or longer that the prompt holds word for word is the prompt echoed.
ECHO_MIN_WORDS = 6
# While words pour in, the text so far is shaped and handed on at most this often.
SHOW_EVERY_S = 0.2
T = TypeVar("T")

SENT_NOTHING = "the storyteller sent nothing"
STOPPED_MID_STORY = "the storyteller stopped mid-story"
NO_ROOM = "the storyteller ran out of room before the story began"


class CutShort(StorytellerError):
    """The provider stopped before the story's end (no finish reason, or silence after its
    first words): the words so far are kept, and Finish is offered."""


class Ending(enum.Enum):
    """How the provider's answer ended."""

    STOP = "stop"  # it said the story was done
    LENGTH = "length"  # its token budget ran out
    CAPPED = "capped"  # the app stopped reading at its own word cap
    NONE = "none"  # it ended with no finish reason


def word_cap(length: str) -> int:
    """The most words the app reads of a story of this length: 360 / 720 / 1,260."""
    return int(LENGTH_WORDS[length] * WORD_CAP_FACTOR)


# The app's own delimiter tags (app/storytelling/openai.py's prompt); a line that is only
# one of the data blocks is the prompt echoed, and goes whole.
_TAG_NAMES = r"(?:idea|name|earlier|title|begun|likes|companions)"
_TAG = re.compile(r"<\s*/?\s*" + _TAG_NAMES + r"\b[^>\n]*>", re.IGNORECASE)
# Markup of the model's own making (`<story>`, `</p>`): a bare tag is never a story's words.
_BARE_TAG = re.compile(r"<\s*/?\s*[A-Za-z][A-Za-z0-9_-]{0,20}\s*/?\s*>")
_BLOCK_LINE = re.compile(r"^\s*<\s*(idea|earlier|begun|likes|companions)\b[^>\n]*>.*"
                         r"<\s*/\s*\1\s*>[\s.]*$", re.IGNORECASE)
_DATA = re.compile(r"<(" + _TAG_NAMES + r")>.*?</\1>", re.IGNORECASE | re.DOTALL)
_WORD = re.compile(r"\S+")
_NOT_A_TITLE_END = (",", ";", ":", ".")


class Reader:
    """The app's rules for one story's answer; `prompt`: the system prompt and the user's
    message that were sent (echoed lines of them are dropped)."""

    def __init__(self, request: StoryRequest, *, prompt: tuple[str, ...], job_id: int) -> None:
        self.request = request
        self.job_id = job_id
        self.cap = word_cap(request.length)
        # Its instructions only: the family's own words (the idea, the names) may be told.
        self._prompt = _normal(_DATA.sub(" ", " ".join(prompt)))
        self._seen: dict[str, bool] = {}

    def past_cap(self, raw: str) -> bool:
        """Whether the model's words (its title line apart) are past the app's cap."""
        words = len(raw.split())
        if not self.request.carried_text and "\n" in raw.lstrip():
            words -= len(raw.lstrip().partition("\n")[0].split())
        return words > self.cap

    def shown(self, raw: str) -> str:
        """The model's text so far as the app keeps it (see the module's docstring)."""
        lines = [line for line in clean_text(raw).split("\n") if not self._echoed(line)]
        text = _BARE_TAG.sub("", _TAG.sub("", "\n".join(lines)))
        if self.request.carried_text:  # the rest of a story: no title of its own
            return _paragraphed(text)
        text = text.lstrip()
        head, newline, rest = text.partition("\n")
        if not newline:  # the first line is not done: a title, or the story begun?
            if len(title_of(text)) <= TITLE_MAX_CHARS:
                return text  # no telling yet
            return f"{idea_title(self.request)}\n\n{_paragraphed(text)}"
        label_only = not title_of(head) and bool(rest.strip())
        if label_only:  # "**Title:**" on a line of its own: the title is the next line
            head, newline, rest = rest.lstrip().partition("\n")
            if not newline:
                return text
        title = title_of(head)
        if not is_title(title):
            rest = f"{head.strip().strip('#*_ ')}\n{rest}"
            title = idea_title(self.request)
        return f"{title}\n\n{_paragraphed(rest.lstrip())}"

    def story(self, raw: str, *, ending: Ending, model: str, prompt_tokens: int | None,
              completion_tokens: int | None) -> Story:
        """The story in the model's whole answer, or StorytellerError saying why none."""
        text = self.shown(raw)
        if not text.strip():
            raise StorytellerError(NO_ROOM if ending is Ending.LENGTH else SENT_NOTHING)
        if ending is Ending.NONE:
            raise CutShort(STOPPED_MID_STORY)
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
        """The body ended at its last whole sentence within the app's cap."""
        body = body.rstrip()
        words = list(_WORD.finditer(body))
        within = body[:words[self.cap - 1].end()] if len(words) > self.cap else body
        kept = cut_to_last_sentence(within)
        log("story_truncated", level=logging.WARNING, job_id=self.job_id, model=model,
            by="word_cap" if ending is Ending.CAPPED else "token_budget",
            completion_tokens=completion_tokens, kept_words=len(kept.split()),
            dropped_words=len(words) - len(kept.split()))
        return kept

    def _echoed(self, line: str) -> bool:
        """A line of the prompt, echoed back: a data block alone, or an instruction (each
        line judged once: the text is shaped again as each chunk arrives)."""
        echoed = self._seen.get(line)
        if echoed is None:
            words = _normal(_TAG.sub(" ", line))
            echoed = bool(_BLOCK_LINE.match(line)) or (
                len(words.split()) >= ECHO_MIN_WORDS and words in self._prompt)
            self._seen[line] = echoed
        return echoed


class Showing:
    """Hands the text so far, shaped, to `sink`: at most every SHOW_EVERY_S while chunks pour
    in (shaping a long story each chunk would cost more than the rest of the call), and at
    once when they pause or end (`flush`), so the card and the words kept are never behind."""

    def __init__(self, reader: Reader, sink: Callable[[str], None] | None) -> None:
        self.reader = reader
        self.sink = sink
        self.raw = self._shown = ""
        self._at = time.monotonic()  # the first words, too, come together

    def add(self, raw: str) -> None:
        self.raw = raw
        if time.monotonic() - self._at >= SHOW_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if self.sink is not None and self.raw != self._shown:
            self.sink(self.reader.shown(self.raw))
            self._shown, self._at = self.raw, time.monotonic()


async def next_chunk(stream: AsyncIterator[T], silence_s: float, showing: Showing) -> T | None:
    """The stream's next chunk (None: it ended); TimeoutError after `silence_s` without
    one. The words so far are shown as soon as the stream pauses."""
    step = asyncio.ensure_future(_next_or_none(stream))
    try:
        done, _ = await asyncio.wait({step}, timeout=min(SHOW_EVERY_S, silence_s))
        if not done:
            showing.flush()
            done, _ = await asyncio.wait({step}, timeout=max(silence_s - SHOW_EVERY_S, 0))
        if not done:
            raise TimeoutError
        return step.result()
    finally:
        if not step.done():
            step.cancel()


async def _next_or_none(stream: AsyncIterator[T]) -> T | None:
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return None


def idea_title(request: StoryRequest) -> str:
    """The title of a story whose model wrote none (its first line no title, or not ended
    yet when the story was cut): made from the idea."""
    return title_from_idea(request, TITLE_MAX_CHARS)


def is_title(line: str) -> bool:
    """One line of at most TITLE_MAX_CHARS that does not read as a sentence or a greeting."""
    return (bool(line) and len(line) <= TITLE_MAX_CHARS and "\n" not in line
            and not line.endswith(_NOT_A_TITLE_END))


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _paragraphed(text: str) -> str:
    """Every line its own paragraph (a model may separate them with one line break); the
    last line as it is, its trailing space or line break kept for the words to come, and
    a leading line break kept (the rest of a story cut short may begin a paragraph)."""
    lines = text.split("\n")
    done = [line.strip() for line in lines[:-1]]
    last = lines[-1].lstrip()
    blocks = [line for line in done if line]
    if last:
        blocks.append(last)
    joined = "\n\n".join(blocks)
    if blocks and text.lstrip(" \t").startswith("\n"):
        joined = "\n\n" + joined
    return joined + "\n\n" if blocks and not last and len(lines) > 1 else joined
