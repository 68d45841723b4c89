"""What tonight's ideas are made of, as each story language says them: each language's own
(its record's `ideas`, app/languages.py); app/ideas.py picks one and fills it in.

    SPANISH.ideas.ideas[0].format(company=" con Pip", season=Word("invierno"), like=Word("zorros"))
    # "un paseo con Pip en una noche de invierno para encontrar zorros"

Each language has seven ideas of its own, not translated word for word, so the family's own
words (a like, a companion's name) sit where they read well: after "with", or after a colon
in Polish, whose prepositions would change a word's ending. Our own words come in the forms
an idea asks for by name (`{thing:dat}`: German's dative after "unter"), else as they are.
No two ideas of a language begin alike, so two nights running never read the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SEASON_NAMES = ("winter", "spring", "summer", "autumn")


@dataclass(frozen=True)
class Word:
    """A word or phrase, with the other forms an idea may ask for (`{like:dat}`)."""

    plain: str
    forms: Mapping[str, str] = field(default_factory=dict)

    def __format__(self, form: str) -> str:
        return self.forms.get(form, self.plain) if form else self.plain


@dataclass(frozen=True)
class IdeaWords:
    """One language's ideas (`{company}`, `{season}`, `{thing}`, `{like}` in each), how it
    says "with Pip" (`company`), and its seasons, things of the season and gentle things
    (what a story looks for when the profile names no likes)."""

    ideas: tuple[str, ...]
    company: str
    seasons: Mapping[str, Word]
    things: Mapping[str, tuple[Word, ...]]
    gentle: tuple[Word, ...]


def plain(*words: str) -> tuple[Word, ...]:
    """Words with no other forms."""
    return tuple(Word(word) for word in words)


def seasons(*words: str | Word) -> dict[str, Word]:
    """The four seasons' words, winter first."""
    return {name: word if isinstance(word, Word) else Word(word)
            for name, word in zip(SEASON_NAMES, words, strict=True)}


def things(*rows: tuple[Word, ...]) -> dict[str, tuple[Word, ...]]:
    """Each season's things, winter's first."""
    return dict(zip(SEASON_NAMES, rows, strict=True))
