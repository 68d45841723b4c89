"""Tonight's one-tap idea (app/ideas.py): the same for a child all evening, another the
next night, from the child's likes, companions and the season."""

from __future__ import annotations

import re
import string
from datetime import UTC, date, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.i18n import gettext, speaking
from app.ideas import SEASONS, idea_in, season, southern_hemisphere, tonight_idea
from app.languages import LANGUAGES as LANGUAGES_OF_STORIES
from app.requests import PROMPT_MAX_CHARS, parse_story_request
from app.stories import Child

MIA = Child(id=1, name="Mia", likes="foxes, the moon and Captain Biscuit",
            companions="Pip, a little green dinosaur")
LEO = Child(id=2, name="Leo", likes="trains", companions="Rex the dragon; Bun, a rabbit")
THEO = Child(id=3, name="Theo")  # nothing named: the idea still varies
A_YEAR = [date(2026, 1, 1) + timedelta(days=n) for n in range(400)]


@pytest.mark.parametrize("children", [[MIA], [LEO], [THEO], [MIA, LEO]])
def test_two_nights_running_never_have_the_same_idea(children):
    ideas = [tonight_idea(children, day) for day in A_YEAR]
    assert all(tonight != tomorrow for tonight, tomorrow in zip(ideas, ideas[1:], strict=False))
    assert len(set(ideas[:7])) == 7  # a week of different evenings


def test_the_same_night_is_the_same_idea():
    night = date(2026, 12, 2)
    assert tonight_idea([MIA], night) == tonight_idea([MIA], night)
    assert tonight_idea([MIA], night) != tonight_idea([MIA], night + timedelta(days=1))


def test_the_idea_draws_on_the_child_s_likes_and_companions():
    ideas = [tonight_idea([MIA], day) for day in A_YEAR[:30]]
    assert all(" with Pip" in idea for idea in ideas)  # by name, not the description
    assert not any("dinosaur" in idea for idea in ideas)
    for like in ("foxes", "the moon", "Captain Biscuit"):
        assert any(like in idea for idea in ideas), like
    theirs = [tonight_idea([MIA, LEO], day) for day in A_YEAR[:30]]
    assert {"Pip", "Rex the dragon", "Bun"} <= {
        name for idea in theirs for name in ("Pip", "Rex the dragon", "Bun") if name in idea}
    assert any("trains" in idea for idea in theirs) and any("foxes" in idea for idea in theirs)
    assert not any(" with " in tonight_idea([THEO], day) for day in A_YEAR[:30])


def test_the_idea_draws_on_the_season():
    winter = [tonight_idea([THEO], date(2026, 12, 1) + timedelta(days=n)) for n in range(21)]
    summer = [tonight_idea([THEO], date(2026, 7, 1) + timedelta(days=n)) for n in range(21)]
    assert any("winter" in idea or "snow" in idea or "frosty" in idea for idea in winter)
    assert not any("summer" in idea or "fireflies" in idea for idea in winter)
    assert any("summer" in idea or "fireflies" in idea for idea in summer)
    assert not any("winter" in idea or "snow" in idea for idea in summer)
    # South of the equator December is summer.
    assert any("summer" in tonight_idea([THEO], day, southern=True) or "fireflies" in
               tonight_idea([THEO], day, southern=True)
               for day in (date(2026, 12, 1) + timedelta(days=n) for n in range(21)))


@pytest.mark.parametrize(("day", "southern", "expected"), [
    (date(2026, 12, 1), False, "winter"), (date(2026, 2, 28), False, "winter"),
    (date(2026, 3, 1), False, "spring"), (date(2026, 7, 15), False, "summer"),
    (date(2026, 10, 31), False, "autumn"), (date(2026, 12, 25), True, "summer"),
    (date(2026, 7, 15), True, "winter"), (date(2026, 4, 1), True, "autumn"),
])
def test_the_season_by_month_and_hemisphere(day, southern, expected):
    assert season(day, southern=southern) == expected


def test_the_hemisphere_comes_from_the_household_s_time_zone():
    assert southern_hemisphere(ZoneInfo("Australia/Sydney"))
    assert southern_hemisphere(ZoneInfo("America/Argentina/Buenos_Aires"))
    assert not southern_hemisphere(ZoneInfo("Europe/Paris"))
    assert not southern_hemisphere(UTC)


def test_an_idea_from_the_longest_profiles_is_a_valid_request():
    long = Child(id=9, name="N" * 40, likes="x" * 200, companions="y" * 200)
    for day in A_YEAR[:7]:
        idea = tonight_idea([long, long], day)
        assert len(idea) <= PROMPT_MAX_CHARS
        assert parse_story_request({"prompt": idea}).prompt == idea


WORDS = {tag: language.ideas for tag, language in LANGUAGES_OF_STORIES.items()}
LANGUAGES = list(WORDS)
# Words of the English ideas that no other language's ideas should still hold.
ENGLISH_WORDS = re.compile(r"\b(with|night|walk|ride|evening|goodnight|moon|owl|star|cloud|"
                           r"looking|leading|following|sleepy|treasure|spring|autumn)\b")


def test_every_story_language_has_its_ideas():
    assert set(WORDS) == set(LANGUAGES_OF_STORIES)
    for words in WORDS.values():
        assert len(words.ideas) == len(WORDS["en"].ideas)
        assert len(words.gentle) == len(WORDS["en"].gentle)
        assert all(len(words.things[name]) == 3 for name in SEASONS)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("children", [[MIA], [THEO], [MIA, LEO]])
def test_two_nights_running_never_have_the_same_idea_in_any_language(language, children):
    ideas = [tonight_idea(children, day, language=language) for day in A_YEAR]
    assert all(tonight != tomorrow for tonight, tomorrow in zip(ideas, ideas[1:], strict=False))
    assert len(set(ideas[:7])) == 7


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
def test_an_idea_is_said_in_the_story_s_language_with_the_family_s_own_words(language):
    words = WORDS[language]
    with_pip = words.company.format(name="Pip")
    for day in A_YEAR[:60]:
        mia = tonight_idea([MIA], day, language=language)
        assert with_pip in mia and "dinosaur" not in mia, mia
        # Nothing of the English ideas is left once the family's words are taken out.
        ours = mia
        for family in ("Pip", "foxes", "the moon", "Captain Biscuit"):
            ours = ours.replace(family, "")
        assert not ENGLISH_WORDS.search(ours), (language, mia)
        theo = tonight_idea([THEO], day, language=language)
        assert not ENGLISH_WORDS.search(theo) and not theo.startswith(" "), (language, theo)
        assert "{" not in theo and "Word(" not in theo, theo


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_form_an_idea_asks_for_is_there(language):
    """`{thing:dat}` asks German's things for their dative: each one has it (a Word
    without the form would be said in its plain one, the wrong case)."""
    words = WORDS[language]
    asked: dict[str, set[str]] = {"season": set(), "thing": set(), "like": set()}
    for idea in words.ideas:
        for _, name, form, _ in string.Formatter().parse(idea):
            if name in asked and form:
                asked[name].add(form)
    ours = {"season": list(words.seasons.values()), "like": list(words.gentle),
            "thing": [thing for things in words.things.values() for thing in things]}
    for name, forms in asked.items():
        for word in ours[name]:
            assert forms <= set(word.forms), (language, name, word.plain, forms)


def test_an_unknown_language_gets_english_ideas():
    night = date(2026, 12, 2)
    assert tonight_idea([MIA], night, language="xx") == tonight_idea([MIA], night)


@pytest.mark.parametrize(("english", "language"), [
    ("a trip to the moon", "en"), ("a trip to the moon", "es"), ("a brave little dragon", "ar"),
])
def test_a_form_idea_is_sent_in_the_story_s_language_from_any_page_language(english, language):
    with speaking(language):
        wanted = gettext(english)
    assert (wanted == english) == (language == "en")
    for page_language in LANGUAGES:
        with speaking(page_language):
            tapped = gettext(english)
        assert idea_in(tapped, language) == wanted, page_language
    assert idea_in("a trip to the moon and back", language) == "a trip to the moon and back"
    assert idea_in("", language) == ""
