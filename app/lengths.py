"""The lengths a story can be asked for, one record each: the one home of their words, the
caps and tokens derived from them, the reading time a page shows and their names. The SQL
CHECKs on the columns that name a length are tested against them (tests/test_vocabulary.py).

    length_of("short").words                 # 240: asked of the storyteller, in words
    length_of("short").minutes               # 2: "about 2 min" on the form
    length_of("short").size(language_of("ja"))   # 500: Japanese counts its characters
    length_of("long").cap(language_of("en"))     # 1,260: past it the app stops reading
    reading_minutes(story.body, "ja")        # what a page says of a story's own text

A length is words where a language separates its words with spaces, and the same reading
time in characters where it does not (Japanese): its seconds aloud, at the language's own
pace (app/languages.py's `read_aloud_per_minute`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.i18n import N_
from app.languages import READ_ALOUD_WORDS_PER_MIN, Language, language_of

# The app stops reading a story this many times longer than the length asked.
CAP_FACTOR = 1.5
# ... or this many characters (all of them, spaces and markup too) for each word of that cap,
# whichever comes first, so that one 2 MB "word" is no story. Generous: English takes under
# 6 characters a word, its space included, German's compounds under 8. A language written
# without spaces has its cap in characters already: this many of them for each.
CAP_CHARS_PER_WORD = 12
CAP_CHARS_PER_CHARACTER = 2
# The tokens a length is written in: about 1.4 a word of English prose, about 1.5 a
# character of Japanese (kana and kanji), with room for a model that overshoots (or a
# language that takes more tokens a word), plus the title.
TOKENS_PER_WORD = 1.4
TOKENS_PER_CHARACTER = 1.5
BUDGET_HEADROOM = 1.5
TITLE_TOKENS = 30


@dataclass(frozen=True)
class Length:
    """A story's length: `words` asked of the storyteller in a spaced language."""

    name: str  # as the columns, the form and the API say it
    label: str  # a choice's name on the form and the Children page ("Short"): N_
    named: str  # its name in a sentence ("short · 2 min", "short stories"): N_
    words: int

    @property
    def seconds(self) -> int:
        """Read aloud slowly: 120 / 240 / 420."""
        return round(self.words * 60 / READ_ALOUD_WORDS_PER_MIN)

    @property
    def minutes(self) -> int:
        """The minutes the form says it takes to read aloud: 2 / 4 / 7."""
        return max(round(self.seconds / 60), 1)

    def size(self, language: Language) -> int:
        """What the storyteller is asked for in `language`: its words, or the characters
        read aloud in the same time where words are not spaced (500 / 1,000 / 1,750 in
        Japanese)."""
        if language.spaced:
            return self.words
        return round(self.seconds * language.read_aloud_per_minute / 60)

    def cap(self, language: Language) -> int:
        """The most of `language`'s unit (words or characters) the app reads of a story:
        360 / 720 / 1,260 words; 750 / 1,500 / 2,625 characters of Japanese."""
        return int(self.size(language) * CAP_FACTOR)

    def char_cap(self, language: Language) -> int:
        """The most characters the app reads of a story: 4,320 / 8,640 / 15,120; in a
        language written without spaces, 1,500 / 3,000 / 5,250."""
        per = CAP_CHARS_PER_WORD if language.spaced else CAP_CHARS_PER_CHARACTER
        return self.cap(language) * per

    def tokens(self, language: Language) -> int:
        """The completion tokens it may take, hidden reasoning apart."""
        per = TOKENS_PER_WORD if language.spaced else TOKENS_PER_CHARACTER
        return math.ceil(self.size(language) * per * BUDGET_HEADROOM) + TITLE_TOKENS


SHORT = Length("short", N_("Short"), N_("short"), words=240)
MEDIUM = Length("medium", N_("Medium"), N_("medium"), words=480)
LONG = Length("long", N_("Long"), N_("long"), words=840)
# Every length by its name, shortest first.
BY_NAME: dict[str, Length] = {length.name: length for length in (SHORT, MEDIUM, LONG)}
LENGTHS = tuple(BY_NAME)  # ("short", "medium", "long")
DEFAULT_LENGTH = MEDIUM.name
# The words each length asks for (in a spaced language).
LENGTH_WORDS = {name: length.words for name, length in BY_NAME.items()}


def length_of(name: str) -> Length:
    """A length's record by its name (KeyError for one the app does not know: a request's
    length is checked where it is parsed)."""
    return BY_NAME[name]


def reading_minutes(text: str, language: str) -> int:
    """Minutes to read `text`, written in `language`, aloud, slowly; at least one."""
    spoken = language_of(language)
    return minutes_to_read(spoken.count(text), spoken)


def minutes_to_read(amount: int, language: Language) -> int:
    """Minutes to read `amount` of a language's unit (words, or characters where words are
    not spaced) aloud, slowly; at least one."""
    return max(round(amount / language.read_aloud_per_minute), 1)
