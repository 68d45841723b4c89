"""The core types every part shares, and what is true of any story, whoever wrote it:
cleaning, paragraphs and the title line, ids. No I/O. A request's parsing and its columns
sit beside it, in app/requests.py; its languages and lengths are records of their own
(app/languages.py, app/lengths.py).

    request = StoryRequest(prompt="a dragon who is afraid of the dark", length="short")
    story = clean_story(await storyteller.write(request, job_id=17))
    title, body = split_title(text)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, runtime_checkable

from app.languages import DEFAULT_LANGUAGE, LANGUAGES


@dataclass(frozen=True)
class StoryRequest:
    prompt: str
    child_name: str | None = None
    age: int | None = None
    length: str = "medium"
    # A sequel ("What happens next?"): the story it continues, and what the storyteller is
    # told about that one (its title and characters, never its whole text).
    sequel_of: int | None = None
    previously: str | None = None
    # Finishing a story cut short: the job whose words it carries on from, and those words
    # (title line and all, cut at their last whole sentence), which the story begins with.
    finish_of: int | None = None
    carried_text: str | None = None
    language: str = DEFAULT_LANGUAGE
    # A child profile's favourite things, copied into the request when it was asked for.
    likes: str | None = None
    # A sibling story: the second child it is for (their profile's name and age).
    sibling_name: str | None = None
    sibling_age: int | None = None
    # A child profile's companions ("Pip, a little green dinosaur"), the characters who come
    # back in every story for that child, copied into the request as likes are.
    companions: str | None = None
    # The profiles the request named (`child_id`, `sibling_id`), as the client sent them:
    # they count in its hash in place of the values they filled in, so an edited or deleted
    # profile changes no replay. The job keeps the values, not the ids.
    child_id: int | None = None
    sibling_id: int | None = None

    @property
    def listeners(self) -> str | None:
        """Who the story is for, as a page says it: "Mia", "Mia and Leo", or nobody named."""
        return listeners(self.child_name, self.sibling_name)


# What a storyteller writes whatever it was asked: the demo writes English and Arabic only
# (and says so under any other), so its text is English then, for the page's `lang` and
# read-aloud.
ONLY_WRITES = {"demo": (DEFAULT_LANGUAGE, "ar")}


def written_in(request: StoryRequest, model: str) -> str:
    """The language a story's text is in: the one asked for, unless `model` cannot write it."""
    return text_language(request.language, model)


def text_language(asked: str, model: str) -> str:
    """written_in, from the language asked for and the model that wrote the story."""
    writes = ONLY_WRITES.get(model)
    return asked if writes is None or asked in writes else writes[0]


def listeners(child_name: str | None, sibling_name: str | None) -> str | None:
    if child_name and sibling_name:
        return f"{child_name} and {sibling_name}"
    return child_name or sibling_name


@dataclass(frozen=True)
class Child:
    """A child's profile: what a story asked for them fills in when the request leaves it out."""

    id: int
    name: str
    age: int | None = None
    length: str | None = None
    language: str | None = None
    likes: str | None = None
    companions: str | None = None  # the characters who come back in every story


@dataclass(frozen=True)
class Story:
    title: str
    body: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


# Receives the story as written so far, each time more arrives (it only records it: the
# worker decides when to save it).
TextSink = Callable[[str], None]


class Storyteller(Protocol):
    """Writes a story in one call, on this process's connection (`LLM_API=chat`, the demo)."""

    name: str

    async def write(
        self, request: StoryRequest, *, job_id: int, on_text: TextSink | None = None
    ) -> Story: ...

    async def aclose(self) -> None: ...


# Receives the story as written so far and the provider's sequence number of the event
# that brought it (background mode; None: words read without one, from a plain retrieve).
ProgressSink = Callable[[str, int | None], None]


@runtime_checkable  # the worker picks its mode with isinstance(storyteller, this)
class BackgroundStoryteller(Protocol):
    """Has the story written at the provider (`LLM_API=responses`): `start` is the one
    billed request and answers with the response's id at once; `follow` reads the story
    by that id, from any process, from any event on, as often as needed, for free."""

    name: str
    background: bool  # True: the worker starts, follows, hands over and adopts

    async def start(self, request: StoryRequest, *, job_id: int) -> str: ...

    async def follow(
        self, response_id: str, request: StoryRequest, *, job_id: int, text: str,
        after: int | None, on_progress: ProgressSink, timeout_s: float | None = None,
        started_at: datetime | None = None,
    ) -> Story:
        """The finished story; `text` is the model's text up to event `after` (None: from
        the start). Raises ResponseGone, or StorytellerError with its Failure
        (app/failures.py);
        TimeoutError once `timeout_s` after the response's create (or `started_at`) has
        passed while it was followed by plain retrieves."""
        ...

    async def cancel(self, response_id: str, *, job_id: int) -> None: ...

    async def aclose(self) -> None: ...


_UNSTORABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
INT4_MAX = 2**31 - 1  # an integer column
ID_MAX = 2**63 - 1  # a bigint id
_ID_MAX_DIGITS = len(str(ID_MAX))


def clean_text(text: str) -> str:
    """Text as it can be stored and shown: line breaks as `\\n`; NUL, the other control
    characters but newline and tab, and lone surrogates removed."""
    return _UNSTORABLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


# Characters that show nothing, never part of a title: Unicode's format characters (Cf, as
# of Unicode 15.1: the soft hyphen, bidi marks, embeddings, overrides and isolates,
# zero-width spaces and joiners, word joiners, the byte order mark, tag characters; checked
# against unicodedata by tests/test_titles.py), the Hangul fillers and the blank braille
# pattern, which draw nothing, and the combining grapheme joiner.
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
    "\u034f\u115f\u1160\u3164\uffa0\u2800]"
)
# Bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069): a story has no use for
# them, and one left open turns the words after it around. A story's text keeps the marks
# (LRM, RLM, ALM) and the joiners (ZWNJ, ZWJ) that Arabic, Persian and Indic scripts need.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# A stored title is at most this long, whoever wrote it (a model's is at most 80).
STORED_TITLE_MAX_CHARS = 200
# The title of a story whose title had nothing readable in it.
FALLBACK_TITLE = "A Bedtime Story"


def without_invisibles(text: str) -> str:
    """`text` without the characters that show nothing (format characters, fillers)."""
    return _INVISIBLE.sub("", text)


def without_bidi_controls(text: str) -> str:
    """`text` without bidi embeddings, overrides and isolates; its marks and joiners kept."""
    return _BIDI_CONTROLS.sub("", text)


def readable(text: str) -> bool:
    """Whether `text` has something to read: a letter, a digit or a symbol such as an emoji
    (not only spaces, punctuation or characters that show nothing)."""
    return any((category := unicodedata.category(char))[0] in "LN" or category == "So"
               for char in without_invisibles(text))


def clean_title(title: str) -> str:
    """A title as it can be stored and shown: cleaned (clean_text), one line, without the
    characters that show nothing, at most STORED_TITLE_MAX_CHARS; "" when nothing readable
    is left."""
    lines = without_invisibles(clean_text(title)).splitlines()
    title = " ".join(line.strip() for line in lines if line.strip())
    title = title[:STORED_TITLE_MAX_CHARS].rstrip()
    return title if readable(title) else ""


def clean_story(story: Story) -> Story:
    """The story with every text cleaned (clean_text; its title by clean_title, its body
    without bidi controls) and token counts that fit a column: whatever a storyteller
    returns, the paid-for story can be stored."""
    return replace(
        story,
        title=clean_title(story.title) or FALLBACK_TITLE,
        body=without_bidi_controls(clean_text(story.body)).strip(),
        model=clean_text(story.model).strip() or "unknown",
        prompt_tokens=token_count(story.prompt_tokens),
        completion_tokens=token_count(story.completion_tokens),
    )


def token_count(value: object) -> int | None:
    """A token count that fits its column, else None (unknown)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= INT4_MAX:
        return value
    return None


def parse_id(raw: str) -> int | None:
    """An id as text (a path, a query, a form): digits within bigint range, else None."""
    # Too many digits is out of range; checked first, as int() refuses over 4300 of them.
    if not raw.isascii() or not raw.isdecimal() or len(raw.lstrip("0")) > _ID_MAX_DIGITS:
        return None
    number = int(raw)
    return number if 1 <= number <= ID_MAX else None


_BLANK_LINES = re.compile(r"\n\s*\n")


def paragraphs(text: str) -> list[str]:
    """A story's paragraphs: the blocks between blank lines, without empty ones."""
    return [block.strip() for block in _BLANK_LINES.split(text.strip()) if block.strip()]


# "Title:" as a model labels its title line, in each language's usual word, maybe in
# markdown (`**Title:** The Moon`, `# Title: The Moon`, `*Titre* : La Lune`): the word
# alone, then a colon (or a dash between spaces), so "Titles of the Night" is no label.
# A model may also say it in a sentence ("The story's title is:", "Title of the story:").
_TITLE_WORDS = tuple(dict.fromkeys(  # each language's word, from its record
    label for language in LANGUAGES.values() for label in language.title_labels))
_TITLE_PHRASES = (r"(?:the\s+|this\s+|our\s+)?story(?:'s|’s)?\s+title(?:\s+is)?",
                  r"(?:the\s+)?title\s+of\s+(?:the|this|our)\s+story(?:\s+is)?",
                  r"the\s+title\s+is")
_TITLE_LABEL = re.compile(
    r"^[\s#*_>]*(?:" + "|".join((*_TITLE_PHRASES, *_TITLE_WORDS)) + r")[*_]*"
    r"(?:\s*[:：]|\s+[-–—](?=\s))[*_]*\s*",
    re.IGNORECASE,
)
_TITLE_MARKS = "#*_\"'“”«»「」『』 "


def title_of(line: str) -> str:
    """A title line as a page shows it: without the characters that show nothing, markdown
    marks, quotes around it, or a "Title:" label before it ("" when nothing is left)."""
    line = without_invisibles(line).strip()
    return _TITLE_LABEL.sub("", line, count=1).strip().strip(_TITLE_MARKS).strip()


def split_title(text: str) -> tuple[str, str]:
    """The first non-empty line is the title (a line that is only a "Title:" label is
    dropped: the title is the next one); the rest is the story."""
    text = text.strip()
    label, _, rest = text.partition("\n")
    if rest.strip() and _TITLE_LABEL.match(label) and not title_of(label):
        text = rest.strip()
    lines = text.splitlines()
    title = title_of(lines[0]) if lines else ""
    body = "\n".join(lines[1:]).strip()
    if not body:  # no title line: the whole text is the story
        return FALLBACK_TITLE, text
    return (title or FALLBACK_TITLE)[:STORED_TITLE_MAX_CHARS], body


# A deleted story can be restored this long, then the sweeper purges it.
DELETED_KEEP_S = 30 * 24 * 3600
