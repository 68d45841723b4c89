"""The demo storyteller (app/storytelling/demo.py) uses the child's likes and companions,
and its titles follow the idea, so another night's one-tap idea is another title."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from app.ideas import tonight_idea
from app.stories import Child, StoryRequest
from app.storytelling.demo import DemoStoryteller
from app.titles import title_from_idea, title_subject

MIA = Child(id=1, name="Mia", likes="foxes, the moon and Captain Biscuit",
            companions="Pip, a little green dinosaur")


def composed(prompt: str, *, job_id: int = 1, **fields: object) -> tuple[str, list[str]]:
    request = StoryRequest(prompt=prompt, child_name="Mia", **fields)
    return DemoStoryteller(delay_s=0).compose(request, job_id=job_id)


def test_a_fortnight_of_one_tap_stories_has_a_title_each_night():
    nights = [date(2026, 12, 1) + timedelta(days=n) for n in range(14)]
    titles = [composed(tonight_idea([MIA], night), job_id=n, likes=MIA.likes,
                       companions=MIA.companions)[0] for n, night in enumerate(nights)]
    assert all(tonight != tomorrow for tonight, tomorrow in zip(titles, titles[1:], strict=False))
    assert len(set(titles[:7])) == 7
    assert all(title.startswith(("Mia and ", "Mia's ")) for title in titles)


def test_another_idea_is_another_title_and_the_same_request_the_same_story():
    ideas = ["a dragon who is afraid of the dark", "a dragon who loves cake",
             "a trip to the moon", "a sleepy owl", "a whale who sings lullabies"]
    titles = {composed(idea, job_id=7)[0] for idea in ideas}
    assert len(titles) == len(ideas)
    assert composed("a sleepy owl", job_id=3) == composed("a sleepy owl", job_id=3)
    assert "Quiet Adventure" not in " ".join(titles)


@pytest.mark.parametrize(("idea", "subject"), [
    ("a walk with Pip on a winter night to find foxes", "the Walk with Pip on a Winter Night"),
    ("a dragon who is afraid of the dark", "the Dragon Who Is Afraid of the Dark"),
    ("a secret picnic under new blossom with Pip, to meet the moon",
     "the Secret Picnic under New Blossom with Pip"),
    ("trip to the moon", "the Trip to the Moon"),
    ("Pip goes to space!", "Pip Goes to Space"),
    ("what happens next in “Pip and the Owl”", "What Happens Next in “Pip and the Owl”"),
])
def test_a_title_names_the_idea_s_first_part(idea, subject):
    assert title_subject(idea) == subject


def test_the_demo_brings_back_the_companions_and_weaves_in_a_like():
    _, paragraphs = composed("a sleepy owl", likes=MIA.likes, companions=MIA.companions)
    text = "\n\n".join(paragraphs)
    assert "Mia's friend Pip, a little green dinosaur, came along" in text
    assert text.count("Pip") >= 3  # the friend of the story, by name, all the way through
    assert any(like in text for like in ("foxes", "the moon", "Captain Biscuit"))
    assert "favourite things" in text
    _, plain = composed("a sleepy owl")
    assert "Pip" not in "\n\n".join(plain) and "favourite things" not in "\n\n".join(plain)


def test_two_companions_are_both_brought_back():
    _, paragraphs = composed("a sleepy owl", companions="Pip, a little green dinosaur; Bun")
    assert ("Mia's friends Pip, a little green dinosaur, and Bun came along"
            in "\n\n".join(paragraphs))


@pytest.mark.parametrize(("language", "idea", "child", "title"), [
    ("es", "un pequeño zorro que no encuentra la luna", "Sofía",
     "Sofía y un pequeño zorro que no encuentra la luna"),
    ("uk", "подорож човником з Піп", "Оксана", "Оксана та подорож човником з Піп"),
    ("ja", "月をさがす小さなきつね", "ゆいと", None),
])
def test_the_demo_s_title_for_another_language_has_no_english_in_it(language, idea, child,
                                                                     title):
    """The demo writes English, but the title it makes of a family's idea in another
    language is made in that language (app/titles.py), never "Оксана and the Подорож…"."""
    request = StoryRequest(prompt=idea, child_name=child, language=language)
    made, _ = DemoStoryteller(delay_s=0).compose(request, job_id=1)
    assert " and " not in made and not made.startswith("The ")
    assert made == (title or title_from_idea(request))
