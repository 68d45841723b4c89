"""Tonight's one-tap idea: what the story is about when a parent taps "Tonight, for Mia",
different from one night to the next, drawn from the child's likes, their companions and
the season, said in the language the story will be written in. No I/O and no clock: the
caller gives the household's date (in `TZ`).

    idea = tonight_idea([mia], date(2026, 12, 2), southern=southern_hemisphere(tz))
    # "a walk with Pip on a winter night to find foxes"
    idea = tonight_idea([mia, leo], day)          # a story for both: both profiles
    tonight_idea([mia], day, language="es")       # "un paseo con Pip en una noche de invierno..."
    idea_in("a trip to the moon", "fr")           # the form's idea, in the story's language

The same children on the same date always get the same idea (a page rendered twice makes
one story, and a test can say what it will be); the next night's is another. The night
picks one of the language's ideas (app/locale/<tag>/ideas.toml) in turn, starting where the
children's own number puts them, and a like, a companion and a thing of the season by the
same count: as no two of them begin alike before the family's words come in, two nights
running never have the same idea.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from datetime import date, tzinfo
from typing import TypeVar

from app.i18n import N_, UI_LANGUAGES, gettext, speaking
from app.idea_words import SEASON_NAMES, Word
from app.languages import DEFAULT_LANGUAGE, language_of
from app.stories import Child

IDEA_PART_MAX_CHARS = 120  # a like or a companion, as an idea names it
# Seasons by month, as the northern hemisphere has them (the southern's are the other way).
SEASONS = SEASON_NAMES  # winter, spring, summer, autumn
_SEASON_OF_MONTH = (0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0)  # January ... December
# Time zones south of the equator (by their name's start): their seasons are turned round.
_SOUTHERN_ZONES = (
    "Australia/", "Antarctica/", "Pacific/Auckland", "Pacific/Chatham", "Pacific/Fiji",
    "Pacific/Tongatapu", "Pacific/Apia", "Pacific/Noumea", "Pacific/Efate", "NZ",
    "America/Argentina/", "America/Buenos_Aires", "America/Sao_Paulo", "America/Santiago",
    "America/Montevideo", "America/Asuncion", "America/La_Paz", "America/Lima",
    "Africa/Johannesburg", "Africa/Maputo", "Africa/Harare", "Africa/Lusaka",
    "Africa/Windhoek", "Africa/Gaborone", "Africa/Maseru", "Africa/Mbabane",
    "Indian/Mauritius", "Indian/Reunion", "Indian/Antananarivo", "Chile/", "Brazil/",
)
# The story form's ideas: one tap fills the prompt (app.js); without JavaScript each is a
# link that does the same. Shown in the page's language, as a family would type them, and
# sent in the story's (`idea_in`): the language chosen may be another.
FORM_IDEAS = (
    N_("a brave little dragon"),
    N_("a trip to the moon"),
    N_("a sleepy owl who lost its hoot"),
    N_("a teddy bear's midnight picnic"),
    N_("a whale who sings lullabies"),
    N_("a garden that grows at night"),
)
_Choice = TypeVar("_Choice")
# A profile's likes are a list ("foxes, the moon and Captain Biscuit"); its companions are
# split at ";" and lines only, as a comma describes one ("Pip, a little green dinosaur").
_LIKES_BETWEEN = re.compile(r"\s*(?:[,;\n]|\band\b)\s*", re.IGNORECASE)
_COMPANIONS_BETWEEN = re.compile(r"\s*[;\n]\s*")


def season(day: date, *, southern: bool = False) -> str:
    """The season on `day`: winter is December to February, spring March to May, and so
    on (`southern`: June to August is winter)."""
    index = _SEASON_OF_MONTH[day.month - 1]
    return SEASONS[(index + 2) % 4 if southern else index]


def southern_hemisphere(timezone: tzinfo) -> bool:
    """Whether the household's time zone (`TZ`, an IANA name) is south of the equator."""
    name = str(getattr(timezone, "key", "") or "")
    return name.startswith(_SOUTHERN_ZONES)


def tonight_idea(
    children: Sequence[Child], day: date, *, southern: bool = False, told: int = 0,
    language: str = DEFAULT_LANGUAGE,
) -> str:
    """The one-tap idea for these children (one, or two for a story for both) on the
    household's date `day`, in `language` (the story's): another one each night, from their
    likes, a companion (by the name before its description: "Pip" of "Pip, a little green
    dinosaur") and the season; and another after each of the `told` stories asked for that
    day already, so a second story tonight is not the first again. The family's own words
    are kept as they typed them. The storyteller is told the likes and companions whole
    besides (app/requests.py)."""
    words = language_of(language).ideas
    night = day.toordinal() + _number(children) + told  # each list's next choice
    this_season = season(day, southern=southern)
    likes = [like for child in children for like in _parts(child.likes, _LIKES_BETWEEN)]
    companions = [_name_of(companion) for child in children
                  for companion in _parts(child.companions, _COMPANIONS_BETWEEN)]
    like = Word(_clip(_pick(likes, night))) if likes else _pick(words.gentle, night)
    companion = _pick(companions, night) if companions else None
    return _pick(words.ideas, night).format(
        season=words.seasons[this_season], thing=_pick(words.things[this_season], night),
        like=like, company=words.company.format(name=_clip(companion)) if companion else "")


def form_ideas() -> tuple[str, ...]:
    """The story form's ideas in the page's language."""
    return tuple(gettext(idea) for idea in FORM_IDEAS)


def idea_in(prompt: str, language: str) -> str:
    """`prompt` in the story's `language` when it is one of the form's ideas as any of the
    page languages says it (tapped on a Spanish page for a French story), untouched, else
    the prompt as it was written."""
    for idea in FORM_IDEAS:
        if prompt in _said_in_every_language(idea):
            with speaking(language):
                return gettext(idea)
    return prompt


@functools.cache  # per POST otherwise: the catalogues do not change while the app runs
def _said_in_every_language(idea: str) -> frozenset[str]:
    said = set()
    for language in UI_LANGUAGES:
        with speaking(language):
            said.add(gettext(idea))
    return frozenset(said)


def _number(children: Sequence[Child]) -> int:
    """The children's own number (the same in every process, unlike `hash`): where their
    round of ideas starts, so that brothers and sisters do not all get the same one."""
    who = "|".join(f"{child.id}:{child.name}" for child in children)
    return int.from_bytes(hashlib.sha256(who.encode()).digest()[:4], "big")


def _pick(choices: Sequence[_Choice], night: int) -> _Choice:
    return choices[night % len(choices)]


def _parts(text: str | None, between: re.Pattern[str]) -> list[str]:
    return [part.strip(" .!") for part in between.split(text or "") if part.strip(" .!")]


def _name_of(companion: str) -> str:
    """A companion as an idea names them: "Pip" of "Pip, a little green dinosaur"."""
    return companion.split(",", 1)[0].strip() or companion


def _clip(text: str) -> str:
    if len(text) <= IDEA_PART_MAX_CHARS:
        return text
    return text[: IDEA_PART_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
