"""The story languages, one record each: the one home of what the app knows of a language.
Every other list of languages derives from these records or is tested against them: the
form's choices, the page languages (every story language is one, with its catalogue in
app/locale/<tag>/, and its one-tap ideas beside it, ideas.toml), `make messages` (`python -m
app languages`), the storyteller's prompt, the titles the app makes, and the SQL CHECKs on
every column that names a language (tests/test_vocabulary.py reads them in sql/schema.sql).

    language_of("es").name           # "Español", the form's choice
    language_of("es").english        # "Spanish", as the storyteller is told
    language_of("ar").direction      # "rtl"
    language_of("ja").spaced         # False: lengths and caps count its characters
    LANGUAGES                        # {"en": ENGLISH, "es": SPANISH, ...}, the form's order

Plural rules are Babel's (CLDR's), as each catalogue's `Plural-Forms` says: nothing to keep
here. Adding a language is its record below (appended to LANGUAGES), its ideas, a migration
widening the CHECKs, and its catalogue: docs/languages.md, "Adding a language".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.idea_words import IdeaWords, ideas_of

# A spaced language's lengths are words, read aloud slowly at about this many a minute.
READ_ALOUD_WORDS_PER_MIN = 120
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Language:
    """A story language (and page language): how it is named, written and told."""

    tag: str  # BCP 47, as a page's `lang` says it and the columns store it
    name: str  # in itself: the form's choice
    english: str  # in English: what the storyteller is told
    # A sequel's first prompt ("What happens next?"), quoting the earlier title its way.
    next_prompt: str
    # The word a model labels its title line with in this language ("Título:"), lower case.
    title_labels: tuple[str, ...]
    # How a title the app makes names the children before its subject: the last joined by
    # `title_and` ("Mia and the Owl"), any before by `title_comma` ("Mia, Leo and ...");
    # `title_and_before`: another way to say "and" before a word that matches.
    title_and: str = " and "
    title_comma: str = ", "
    title_and_before: tuple[tuple[str, str], ...] = ()
    # Where an idea's first part, a title's subject, ends besides a comma or a colon (a
    # regular expression: English's "to find", Spanish's "para encontrar"); and the small
    # words (articles, prepositions: "entre", "los") before which a subject cut at its most
    # words ends, so that it ends on what it names.
    title_ends: str = ""
    title_small_words: frozenset[str] = frozenset()
    # English capitalises a title's words; every other language writes it as a sentence
    # (its first letter capital, the rest as typed: German's nouns are capital already).
    title_case: bool = False
    right_to_left: bool = False
    # Whether words are separated by spaces. A language that does not (Japanese) has no
    # words to count: a story's length and its caps are its characters, read aloud in the
    # same time as the words of a spaced one (`read_aloud_per_minute` of them a minute).
    spaced: bool = True
    read_aloud_per_minute: int = READ_ALOUD_WORDS_PER_MIN
    # What the storyteller is told besides the language's name (the prompt's wording).
    instruction: str = ""
    # PostgreSQL's text search configuration for its words' stems (the library's search,
    # story_search_config in sql/); None: it has none, and 'simple' is used.
    search_config: str | None = None
    # Babel's format of a day on a page (a day without its year, and a month, follow
    # CLDR's skeletons in every language: app/i18n/formats.py).
    day_format: str = "medium"

    @property
    def direction(self) -> str:
        """`dir` of a page or text in it."""
        return "rtl" if self.right_to_left else "ltr"

    @property
    def ideas(self) -> IdeaWords:
        """Tonight's one-tap ideas as it says them (app/ideas.py): its
        app/locale/<tag>/ideas.toml."""
        return ideas_of(self.tag)

    @property
    def prompt(self) -> str:
        """What the storyteller is told of the language when it is not English."""
        told = f"Write the story in {self.english}."
        return f"{told} {self.instruction}" if self.instruction else told

    @property
    def unit(self) -> str:
        """What a length counts in it, as the storyteller is told: words or characters."""
        return "words" if self.spaced else "characters"

    def count(self, text: str) -> int:
        """A text's length in this language's unit: its words, or its characters (spaces
        apart) where words are not spaced."""
        return len(text.split()) if self.spaced else len(_SPACE.sub("", text))


ENGLISH = Language(
    tag="en", name="English", english="English",
    next_prompt="what happens next in “{title}”",
    title_labels=("title",),
    title_case=True,
    title_ends=r"\s(?:to (?:find|meet|say|see)|looking for|following)\s",
    search_config="english",
)
SPANISH = Language(
    tag="es", name="Español", english="Spanish",
    next_prompt="qué pasa después en «{title}»",
    title_labels=("título", "titulo"),
    title_and=" y ",
    # "y" is said "e" before the sound of i: "Sofía e Inés".
    title_and_before=((r"h?[iíIÍ](?![aeoáéóuú])", " e "),),
    title_ends=r"\s+para\s+encontrar\b",
    title_small_words=frozenset(
        "a al de del el la las los lo un una unos unas y e o en con por para sin sobre bajo "
        "entre hasta desde que su sus".split()),
    search_config="spanish",
)
FRENCH = Language(
    tag="fr", name="Français", english="French",
    next_prompt="la suite de « {title} »",
    title_labels=("titre",),
    title_and=" et ",
    title_ends=r"\s+pour\s+(?:trouver|chercher)\b",
    title_small_words=frozenset(
        "à au aux de du des d’ le la les l’ un une et ou en avec par pour sans sur sous entre "
        "vers dans travers qui que sa son ses".split()),
    search_config="french",
)
GERMAN = Language(
    tag="de", name="Deutsch", english="German",
    next_prompt="wie es weitergeht in „{title}“",
    title_labels=("titel",),
    title_and=" und ",
    title_small_words=frozenset(
        "der die das den dem des ein eine einen einem einer und oder in im an am auf aus bei "
        "mit nach über unter durch für um zu vom zum zur".split()),
    search_config="german",
)
ITALIAN = Language(
    tag="it", name="Italiano", english="Italian",
    next_prompt="cosa succede dopo in «{title}»",
    title_labels=("titolo",),
    title_and=" e ",
    title_ends=r"\s+per\s+trovare\b",
    title_small_words=frozenset(
        "a al allo alla ai agli alle di d’ del dello della dei degli delle il lo la i gli le "
        "un uno una e o in nel nello nella con su sul sulla per tra fra sopra sotto lungo "
        "attraverso che".split()),
    search_config="italian",
)
PORTUGUESE = Language(
    tag="pt", name="Português", english="Portuguese",
    next_prompt="o que acontece a seguir em «{title}»",
    title_labels=("título", "titulo"),
    title_and=" e ",
    title_ends=r"\s+para\s+encontrar\b",
    title_small_words=frozenset(
        "a à ao aos as às o os de do da dos das um uma uns umas e ou em no na nos nas num numa "
        "com por pelo pela para sem sobre sob entre até que".split()),
    search_config="portuguese",
)
DUTCH = Language(
    tag="nl", name="Nederlands", english="Dutch",
    next_prompt="wat er daarna gebeurt in ‘{title}’",
    title_labels=("titel",),
    title_and=" en ",
    title_ends=r"\s+om\s+(?=.*\bte\s+vinden\b)",
    title_small_words=frozenset(
        "de het een en of in op aan met naar over onder door voor om te van bij tot die "
        "dat".split()),
    search_config="dutch",
)
POLISH = Language(
    tag="pl", name="Polski", english="Polish",
    next_prompt="co dzieje się dalej w „{title}”",
    title_labels=("tytuł", "tytul"),
    title_and=" i ",
    title_small_words=frozenset(
        "i a w we z ze na po do od pod nad przez dla o u za przy".split()),
    search_config="polish",
)
ARABIC = Language(
    tag="ar", name="العربية", english="Arabic",
    next_prompt="ماذا يحدث بعد ذلك في «{title}»",
    title_labels=("العنوان",),
    title_and=" و",
    # "و" (and) is written joined to the word after it: "سارة وليلى والقطة".
    title_comma=" و",
    title_ends=r"\s+للبحث\s",
    right_to_left=True,
    day_format="long",  # "4 ديسمبر 2026" reads better than its slashed medium form
    title_small_words=frozenset(
        "في من إلى على عن مع تحت فوق عبر أو".split()),
    search_config="arabic",
)
UKRAINIAN = Language(
    tag="uk", name="Українська", english="Ukrainian",
    next_prompt="що було далі в «{title}»",
    title_labels=("назва", "заголовок"),
    title_and=" та ",
    title_small_words=frozenset(
        "і й та а в у з із зі на по до від під над крізь через для о про за при".split()),
)
# Japanese puts no spaces between its words: a story's length and caps are its characters
# (about 250 read aloud slowly a minute, a picture book's pace).
JAPANESE = Language(
    tag="ja", name="日本語", english="Japanese",
    next_prompt="「{title}」のつづき",
    title_labels=("タイトル", "題名", "表題"),
    title_and="と", title_comma="と",
    spaced=False, read_aloud_per_minute=250,
    instruction="Write it as a Japanese picture book is written: mostly hiragana, with only "
                "the kanji a young child learns first.",
    day_format="long",
)

# Every story language, by its tag, in the order the form offers them.
LANGUAGES: dict[str, Language] = {language.tag: language for language in (
    ENGLISH, SPANISH, FRENCH, GERMAN, ITALIAN, PORTUGUESE, DUTCH, POLISH, ARABIC, UKRAINIAN,
    JAPANESE)}
DEFAULT_LANGUAGE = ENGLISH.tag  # a story's unless asked otherwise, and the source's
# The languages with a catalogue of their own (English is the source's): `make messages`.
TRANSLATED = tuple(tag for tag in LANGUAGES if tag != DEFAULT_LANGUAGE)


def language_of(tag: str | None) -> Language:
    """A tag's record ("es", "es-MX": Spanish); English for one the app does not know."""
    return LANGUAGES.get((tag or "").split("-")[0].lower(), ENGLISH)


def direction(tag: str | None) -> str:
    """A text's direction (`dir`) from its language, never guessed from its first letter."""
    return language_of(tag).direction
