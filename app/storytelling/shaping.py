"""What a model's lines are, to the reader: the app's own markup echoed, a tag of the
model's making, a preamble before the story, a title; and its lines made paragraphs.

    is_title("The Fox and the Moon")              # True
    is_preamble("Sure! Here's a bedtime story about a fox:")   # True
    without_markup("<story>Once upon a time</story>")          # "Once upon a time"
    paragraphed(text)                             # every line its own paragraph

The reader (app/storytelling/reader.py) applies them to a whole answer, as it arrives.
"""

from __future__ import annotations

import re

from app.stories import StoryRequest, readable, title_of
from app.storytelling.prompt import TAG_NAMES
from app.titles import title_from_idea

TITLE_MAX_CHARS = 80
# A first line longer than this is the story begun, whatever label, marks or characters that
# show nothing it holds; until its line ends, one this short may yet be a title or a preamble.
HEAD_MAX_CHARS = 4 * TITLE_MAX_CHARS

# The app's own delimiter tags (app/storytelling/prompt.py); a line that is only one of the
# data blocks is the prompt echoed, and goes whole.
TAG = re.compile(r"<\s*/?\s*" + TAG_NAMES + r"\b[^>\n]*>", re.IGNORECASE)
# Markup of the model's own making (`<story>`, `</p>`, `<قصة>`, `</история>`, `<物語>`): a
# bare tag is never a story's words. Its name follows `<` or `</` at once, as in HTML, and
# begins with a letter of any script; then letters, digits, `_`, `-` or any character beyond
# ASCII but a space (the marks some scripts write letters with: Devanagari's vowel signs).
# So "a < b > c", "<3" and "1<2>3" stay.
_BARE_TAG = re.compile(r"</?[^\W\d_](?:[\w-]|[^\x00-\x7f\s]){0,20}\s*/?>")
BLOCK_LINE = re.compile(r"^\s*<\s*(idea|earlier|begun|likes|companions)\b[^>\n]*>.*"
                        r"<\s*/\s*\1\s*>[\s.]*$", re.IGNORECASE)
DATA = re.compile(r"<(" + TAG_NAMES + r")>.*?</\1>", re.IGNORECASE | re.DOTALL)
# How a sentence's line ends (not a title's), in Latin, Arabic and Japanese punctuation.
_NOT_A_TITLE_END = (",", ";", ":", ".", "،", "؛", "。", "、", "，", "；", "：")

# A model may begin with a line of its own before the story, paraphrasing the app's
# instructions (English only, for now): such lines go, as echoed instructions do, but only
# at the very start, before the title. A preamble opens with an interjection or "here is"
# (any case) and ends with a colon ("Okay, here is your story:", "Here is a gentle bedtime
# story for a 5-year-old about a fox, about 400 words:"), or is the interjection alone
# ("Sure!", "Of course."), or says, in a sentence's lower case, that a story follows ("Sure!
# Here's a bedtime story about a fox.", "Here is a calming story for Mia."). A title
# capitalises its words ("Here Is the Story of Pip", "Here Comes the Moon"), and a story's
# first line names who or what it is about ("Here is Mia, who loved the stars.", "Here is
# the story of Pip, who lived by the sea."): both stay. While the first line is still
# arriving, one that opens so may yet be a preamble: it is not shown as the story.
_INTERJECTION = r"(?i:sure|of\s+course|certainly|absolutely|okay|ok|alright|all\s+right)\b"
_HERE_IS = r"(?i:here\s+is|here['’]s|below\s+is)\b"
PREAMBLE_OPENER = re.compile(rf"{_INTERJECTION}|{_HERE_IS}")
_PREAMBLE = re.compile(
    rf"{_INTERJECTION}[!,.…]+$"  # "Sure!"
    rf"|(?:{_INTERJECTION}|{_HERE_IS}).*[:：]$"  # "Okay, here is your story:"
    rf"|(?:{_INTERJECTION}[\s!,.…]*)?{_HERE_IS}\s+(?i:a|an|your|one|my)\s+"
    r"(?:(?!(?:a|an|the|who|that|with|and|of)\s)[a-z0-9,'’-]+\s+){0,3}(?:story|tale)\b"
)


def without_markup(text: str) -> str:
    """The text without the app's delimiter tags and any bare tag of the model's own."""
    return _BARE_TAG.sub("", TAG.sub("", text))


def idea_title(request: StoryRequest) -> str:
    """The title of a story whose model wrote none (its first line no title, or not ended
    yet when the story was cut): made from the idea."""
    return title_from_idea(request, TITLE_MAX_CHARS)


def is_title(line: str) -> bool:
    """One line of at most TITLE_MAX_CHARS, something to read in it (not only punctuation),
    that does not read as a sentence or a greeting."""
    return (bool(line) and len(line) <= TITLE_MAX_CHARS and "\n" not in line
            and not line.endswith(_NOT_A_TITLE_END) and readable(line))


def is_preamble(line: str) -> bool:
    """A line in which the model says, before the story, that a story follows (_PREAMBLE)."""
    return len(line) <= HEAD_MAX_CHARS and bool(_PREAMBLE.match(title_of(line)))


def normal(text: str) -> str:
    """Lower case, one space between words: how an echoed line is matched to the prompt."""
    return " ".join(text.lower().split())


def paragraphed(text: str) -> str:
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
