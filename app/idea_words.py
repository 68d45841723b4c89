"""What tonight's ideas are made of, as each story language says them: each language's own,
written in app/locale/<tag>/ideas.toml and read here once; app/ideas.py picks one and fills
it in.

    ideas_of("es").ideas[0].format(company=" con Pip", season=Word("invierno"), like=Word("zorros"))
    # "un paseo con Pip en una noche de invierno para encontrar zorros"

Each language has seven ideas of its own, not translated word for word, so the family's own
words (a like, a companion's name) sit where they read well: after "with", or after a colon
in Polish, whose prepositions would change a word's ending. Our own words come in the forms
an idea asks for by name (`{thing:dat}`: German's dative after "unter"), else as they are.
No two ideas of a language begin alike, so two nights running never read the same.

In the file, a word is its text, or a table of its forms (`{ plain = "die ersten
Schneeflocken", dat = "den ersten Schneeflocken" }`); seasons and things are by season.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

SEASON_NAMES = ("winter", "spring", "summer", "autumn")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"  # as app/i18n/catalogues.py's


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


@functools.cache
def ideas_of(tag: str) -> IdeaWords:
    """A story language's ideas, read from its app/locale/<tag>/ideas.toml (once a process)."""
    with (LOCALE_DIR / tag / "ideas.toml").open("rb") as file:
        written = tomllib.load(file)
    return IdeaWords(
        ideas=tuple(written["ideas"]),
        company=written["company"],
        seasons={name: _word(written["seasons"][name]) for name in SEASON_NAMES},
        things={name: tuple(map(_word, written["things"][name])) for name in SEASON_NAMES},
        gentle=tuple(map(_word, written["gentle"])),
    )


def _word(written: str | dict[str, str]) -> Word:
    """A word as the file writes it: its text, or a table of its forms (`plain` its own)."""
    if isinstance(written, str):
        return Word(written)
    forms = dict(written)
    return Word(forms.pop("plain"), forms)
