"""The titles the app makes itself, from a story's idea, in the story's own language: when
the model wrote no title line, when a story was cut before its first line ended, and the
demo's (which writes English).

    title_from_idea(StoryRequest(prompt="a sleepy owl"))       # "The Sleepy Owl"
    title_from_idea(StoryRequest(prompt="a sleepy owl", child_name="Mia"))
    # "Mia and the Sleepy Owl"
    title_from_idea(StoryRequest(prompt="un pequeño zorro que no encuentra la luna",
                                 child_name="Sofía", language="es"))
    # "Sofía y un pequeño zorro que no encuentra la luna"

English capitalises a title's words and names its subject with "the" ("the Sleepy Owl").
Every other language keeps the idea's own words as the family typed them, in their own
order, with a capital only where the title begins (sentence case; German's nouns are
capital already), and joins the children to them with its own "and" (" y ", " та ", "と",
Arabic's " و" written onto the next word: app/languages.py). A subject is the idea's first
part: up to a comma, a colon or a full stop in any script, or the language's own "to find"
(`title_ends`), at most TITLE_WORDS_MAX words (cut short, it ends before the last of its
language's small words, so on what it names), or TITLE_CHARACTERS_MAX characters in a
language written without spaces.
"""

from __future__ import annotations

import re

from app.languages import ENGLISH, Language, language_of
from app.stories import StoryRequest

TITLE_WORDS_MAX = 9
TITLE_CHARACTERS_MAX = 24  # a language without spaces: about as long to read as 9 words
# English: the words a title leaves small (and never ends with), and those that ask.
_SMALL_WORDS = frozenset("a an the and or of to in on at by for with from into over under "
                         "down up through who is are was".split())
_QUESTIONS = frozenset("what how why when where who".split())
# Where an idea's first part ends in any language: a comma, a colon, a semicolon or a
# sentence's end, in Latin, Arabic and Japanese punctuation, or a new line.
_PART_ENDS = r"[,;:،؛：；、，。！？!?\n]"
# What an idea may end (or, in Spanish, begin) with that a title does not.
_END_MARKS = ".!?…。！？؟"
_OPENING_MARKS = "¿¡"


def title_from_idea(request: StoryRequest, max_chars: int = 200) -> str:
    """A title made from the idea alone, in the story's language: the children named
    before it ("Mia and the Sleepy Owl", "Sofía y un pequeño zorro…"), else the idea's
    first part, its first letter capital."""
    language = language_of(request.language)
    subject = title_subject(request.prompt.strip().rstrip(_END_MARKS), language)
    names = [name for name in (request.child_name, request.sibling_name) if name]
    title = (joined([*names, subject], language) if names
             else subject[:1].upper() + subject[1:])
    return title[:max_chars].rstrip(" ,")


def joined(items: list[str], language: Language) -> str:
    """Names and a subject as a title joins them: "Mia, Leo and the Owl", "ゆいとレオと…"."""
    title = items[0]
    for n, item in enumerate(items[1:], start=2):
        glue = language.title_and if n == len(items) else language.title_comma
        if n == len(items):
            glue = next((other for pattern, other in language.title_and_before
                         if re.match(pattern, item)), glue)
        title += glue + item
    return title


def title_subject(idea: str, language: Language = ENGLISH) -> str:
    """What a title names, from its idea: its first part, said the language's way (see the
    module's docstring). In English, in title case, with "the" for "a": "a walk with Pip on
    a winter night to find foxes" is "the Walk with Pip on a Winter Night"; "a dragon who
    is afraid of the dark" is "the Dragon Who Is Afraid of the Dark"."""
    if language.title_case:
        return _english_subject(idea, language)
    text = idea.strip().lstrip(_OPENING_MARKS).rstrip(_END_MARKS).strip()
    ends = _PART_ENDS + (f"|{language.title_ends}" if language.title_ends else "")
    head = re.split(ends, text, maxsplit=1, flags=re.IGNORECASE)[0].strip() or text
    if not language.spaced:
        return (head if len(head) <= TITLE_CHARACTERS_MAX
                else head[:TITLE_CHARACTERS_MAX - 1] + "…")
    words = head.split()
    if len(words) > TITLE_WORDS_MAX:
        # Cut short, it ends on what it names: before the last of the language's small
        # words (an article, a preposition) that it keeps, and on none.
        words = words[:TITLE_WORDS_MAX]
        small = [n for n, word in enumerate(words) if word.lower() in language.title_small_words]
        if small and small[-1] > 1:
            words = words[:small[-1]]
        while len(words) > 1 and words[-1].lower() in language.title_small_words:
            words.pop()
    return " ".join(words)


def _english_subject(idea: str, english: Language) -> str:
    # Up to a comma (or another script's: the demo names an English story after an idea
    # typed in Japanese, "ゆい and the 月夜のおさんぽ"), or English's "to find".
    head = re.split(f",|[、，：；،؛]|{english.title_ends}", idea.strip().rstrip(".!?…"),
                    maxsplit=1, flags=re.IGNORECASE)[0].strip()
    words = head.split() or idea.split() or ["Adventure"]
    article = words[0].lower() in ("a", "an", "the") and len(words) > 1
    if article:
        words = words[1:]
    # "the Trip to the Moon", "the Dinosaurs"; not before a question, a doing or a name.
    article = article or not (words[0].lower() in _QUESTIONS or words[0].endswith("ing")
                              or words[0][:1].isupper())
    words = words[:TITLE_WORDS_MAX]
    while len(words) > 1 and words[-1].lower() in _SMALL_WORDS:
        words.pop()
    titled = [word if word.lower() in _SMALL_WORDS and n else word[:1].upper() + word[1:]
              for n, word in enumerate(words)]
    titled = [word.capitalize() if word in ("who", "is", "are", "was") else word
              for word in titled]
    return ("the " if article else "") + " ".join(titled)
