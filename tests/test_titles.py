"""A story's title as the model writes its first line: a "Title:" label before it, in any
of the story languages and in markdown, is no part of the title; a title that only begins
with the word keeps it. A title the app makes itself (the model wrote none) is made in the
story's own language."""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import replace
from datetime import UTC, date, timedelta

import pytest

from app.ideas import tonight_idea
from app.languages import LANGUAGES
from app.shelf.backup import export_zip
from app.shelf.store import ShelfStore
from app.stories import Child, Story, StoryRequest, clean_story, split_title, without_invisibles
from app.storytelling.prompt import build_prompt
from app.storytelling.reader import Ending, Reader
from app.titles import TITLE_CHARACTERS_MAX, TITLE_WORDS_MAX, title_from_idea
from tests.helpers.app import ACCEPT_JSON, post_story, wait_for_job
from tests.helpers.backups import stories_json

BODY = "Once upon a time the moon yawned. Goodnight."


@pytest.mark.parametrize(("line", "title"), [
    ("Title: The Sleepy Moon", "The Sleepy Moon"),
    ("title: the sleepy moon", "the sleepy moon"),
    ("TITLE: The Sleepy Moon", "The Sleepy Moon"),
    ("Título: La luna dormilona", "La luna dormilona"),  # es, pt
    ("Titulo: A lua sonolenta", "A lua sonolenta"),
    ("Titre : La lune endormie", "La lune endormie"),  # fr, with its space before the colon
    ("Titre : « La lune endormie »", "La lune endormie"),
    ("Titel: Der schläfrige Mond", "Der schläfrige Mond"),  # de, nl
    ("Titel: De slaperige maan", "De slaperige maan"),
    ("Titolo: La luna assonnata", "La luna assonnata"),  # it
    ("Tytuł: Śpiący księżyc", "Śpiący księżyc"),  # pl
    ("TYTUŁ: Śpiący księżyc", "Śpiący księżyc"),
    ("Назва: Сонний місяць", "Сонний місяць"),  # uk
    ("タイトル：ねむたいおつきさま", "ねむたいおつきさま"),  # ja, its colon full width
    ("題名：「ねむたいおつきさま」", "ねむたいおつきさま"),
    ("**Title:** The Sleepy Moon", "The Sleepy Moon"),
    ("**Title: The Sleepy Moon**", "The Sleepy Moon"),
    ("*Titre* : La lune", "La lune"),
    ("# Title: The Sleepy Moon", "The Sleepy Moon"),
    ("## Titel: Der Mond", "Der Mond"),
    ('Title: "The Sleepy Moon"', "The Sleepy Moon"),
    ("Title - The Sleepy Moon", "The Sleepy Moon"),
    ("Title — The Sleepy Moon", "The Sleepy Moon"),
])
def test_a_title_label_is_dropped_in_every_language(line, title):
    assert split_title(f"{line}\n\n{BODY}") == (title, BODY)


@pytest.mark.parametrize("line", [
    "Titles of the Night",
    "Title Fight at the Zoo",
    "Titel-loos",
    "The Title: A Story of Names",
    "Titanic Dreams: A Voyage",
    "Entitled: The Cat Who Wanted Everything",
])
def test_a_title_that_merely_starts_with_the_word_is_kept(line):
    assert split_title(f"{line}\n\n{BODY}") == (line, BODY)


def test_a_label_on_a_line_of_its_own_is_not_the_title():
    assert split_title(f"**Title:**\n\nThe Sleepy Moon\n\n{BODY}") == ("The Sleepy Moon", BODY)
    assert split_title(f"Title:\n\n{BODY}") == ("A Bedtime Story", BODY)


def test_a_label_with_nothing_after_it_keeps_the_text_whole():
    assert split_title("Title:") == ("A Bedtime Story", "Title:")


@pytest.mark.anyio
async def test_a_labelled_title_shows_without_its_label_on_the_page_library_and_export(
    client, fake_llm, db
):
    fake_llm.story = f"Title: The Sleepy Moon\n\n{BODY}"
    job = await wait_for_job(client, (await post_story(client)).json()["job_id"])
    assert job["status"] == "completed", job
    story_id = job["story_id"]
    page = (await client.get(f"/stories/{story_id}")).text
    library = (await client.get("/stories")).text
    listed = (await client.get("/stories", headers=ACCEPT_JSON)).json()["stories"]
    exported = stories_json(await export_zip(ShelfStore(db), UTC))
    assert "The Sleepy Moon" in page and "Title:" not in page
    assert "The Sleepy Moon" in library and "Title:" not in library
    assert [story["title"] for story in listed] == ["The Sleepy Moon"]
    assert [story["title"] for story in exported["stories"]] == ["The Sleepy Moon"]


# -- what the reader takes for a title (app/storytelling/reader.py) -------------------------

IDEA = StoryRequest(prompt="a dragon who is afraid of the dark", length="short")


def shown(text: str, request: StoryRequest = IDEA) -> str:
    return Reader(request, prompt=build_prompt(request), job_id=1).shown(text)


@pytest.mark.parametrize(("first_line", "title"), [
    ("The story's title is: The Sleepy Moon", "The Sleepy Moon"),
    ("**The story's title is:** The Sleepy Moon", "The Sleepy Moon"),
    ("The title of the story is: The Sleepy Moon", "The Sleepy Moon"),
    ("# The Sleepy Moon", "The Sleepy Moon"),
    ("Where Did the Moon Go?", "Where Did the Moon Go?"),
])
def test_a_line_that_is_a_title_once_its_label_is_gone_is_the_title(first_line, title):
    assert shown(f"{first_line}\nOnce upon a time. Goodnight.") == (
        f"{title}\n\nOnce upon a time. Goodnight.")


@pytest.mark.parametrize("first_line", [
    "Ladies,",  # a greeting
    "Once upon a time, there was a small dragon.",  # a sentence
    "Once upon a time, in a valley full of soft green hills, a small dragon lay awake "
    "and counted every star",  # a paragraph: past 80 characters
])
def test_a_line_that_is_no_title_stays_in_the_story_under_the_idea_s_title(first_line):
    assert shown(f"{first_line}\nHe slept. Goodnight.") == (
        f"The Dragon Who Is Afraid of the Dark\n\n{first_line}\n\nHe slept. Goodnight.")


def test_a_first_line_past_a_title_s_length_is_the_story_before_it_ends():
    """SmolLM2 may begin with the story itself: once its first line is too long for a
    title, the card shows it as the story under the idea's title, not as a heading."""
    begun = "In the ocean, there was a big whale who could only sleep at night. He had lots"
    assert shown(begun[:70]) == begun[:70]  # a title, perhaps: no telling yet
    assert shown(begun + " of teeth") == (
        f"The Dragon Who Is Afraid of the Dark\n\n{begun} of teeth")


def test_the_idea_s_title_names_the_children_as_the_demo_does():
    request = StoryRequest(prompt="a dragon who is afraid of the dark", child_name="Mia",
                           sibling_name="Leo")
    assert shown("Ladies,\nHe slept.", request).startswith(
        "Mia, Leo and the Dragon Who Is Afraid of the Dark\n\n")


@pytest.mark.parametrize("text", [
    "Title: The Moon\nOnce upon a time.\nThe end.",
    "Ladies,\nthe fox slept.\n",
    "The Moon\n\nOnce upon a ",
    "<idea>an owl</idea>\nThe Owl\n\nOnce <name>Mia</name> slept.",
    "Sure! Here's a bedtime story about a fox.\nThe Fox\nOnce upon a time.",
    "Okay, here is a gentle bedtime story for a five-year-old about a dragon who is afraid",
    "\u202eThe Moon\u202c\nOnce <قصة>upon\u2066 a time.",
    "\u200b\u200b\nOnce upon a time, a fox.",
    "**Title:**\n ",  # a label, its title yet to come
    "\u200b\n",
    "**Title:**\nSure!\nThe Owl\nOnce",
])
def test_shaping_a_shaped_text_changes_nothing(text):
    """A story picked up again from its saved words (an adopted background story) reads on
    as if it had never been put down."""
    once = shown(text)
    assert shown(once) == once
    assert shown(once + "more words.") == shown(text + "more words.")


# -- what the provider sends is untrusted: invisible characters, lengths, preambles ---------

IDEA_TITLE = "The Dragon Who Is Afraid of the Dark"


def told(text: str, ending: Ending = Ending.STOP) -> Story:
    reader = Reader(IDEA, prompt=build_prompt(IDEA), job_id=1)
    return reader.story(text, ending=ending, model="m", prompt_tokens=None,
                        completion_tokens=None)


def stored(title: str, body: str = BODY) -> Story:
    return clean_story(Story(title=title, body=body, model="m"))


@pytest.mark.parametrize("mark", [
    "\u200b", "\u200c", "\u200d", "\u200e", "\u200f",  # zero-width spaces, joiners, marks
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # bidi embeddings and overrides
    "\u2066", "\u2067", "\u2068", "\u2069",  # bidi isolates
    "\ufeff", "\u061c", "\u180e", "\u2060", "\u2061", "\u2064",  # BOM, ALM, word joiners
    "\u00ad", "\U000e0041",  # any other format character: a soft hyphen, a tag letter
])
def test_bidi_overrides_and_zero_width_characters_never_reach_a_title(mark):
    assert shown(f"{mark}The {mark}Sleepy{mark} Moon{mark}\nOnce upon a time. Goodnight.") == (
        "The Sleepy Moon\n\nOnce upon a time. Goodnight.")
    assert stored(f"{mark}The Sleepy{mark} Moon{mark}").title == "The Sleepy Moon"


def test_every_format_character_unicode_knows_is_one_a_title_drops():
    formats = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(formats) > 150 and without_invisibles("".join(formats)) == ""


def test_an_invisible_character_hides_no_title_label():
    assert shown("\u200bTitle:\u2060 The Sleepy Moon\nOnce upon a time.") == (
        "The Sleepy Moon\n\nOnce upon a time.")


@pytest.mark.parametrize("line", ["\u202e\u200b", "...", "—", "~~~", "\u200b!?\u2069", "« »",
                                  "\u3164"])
def test_a_title_with_nothing_visible_is_made_from_the_idea(line):
    story = told(f"{line}\nOnce upon a time, a dragon slept. Goodnight.")
    assert story.title == IDEA_TITLE
    assert story.body.endswith("Once upon a time, a dragon slept. Goodnight.")
    assert stored(line).title == "A Bedtime Story"  # a storyteller's title, the demo's too


def test_a_stored_title_is_one_line_of_bounded_length():
    assert stored("The Sleepy\n  Moon ").title == "The Sleepy Moon"
    assert len(stored("Moon " * 400_000).title) <= 200


def test_a_first_line_of_two_megabytes_is_no_title_and_is_cut():
    huge = "moon" * 500_000  # one 2 MB "word"
    reader = Reader(IDEA, prompt=build_prompt(IDEA), job_id=1)
    for text in (huge, f"{huge}\nThe dragon slept. Goodnight.", f"# {huge}\n\nGoodnight."):
        assert reader.past_cap(text)
        story = told(text, Ending.CAPPED)
        assert story.title == IDEA_TITLE
        assert len(story.body) <= 4_320 + 1  # 360 words x 12 characters, and an ellipsis
        assert story.body.startswith("moonmoon") and story.body.endswith("…")
    assert shown(huge).startswith(f"{IDEA_TITLE}\n\nmoonmoon")  # as it arrives, too


@pytest.mark.parametrize("preamble", [
    "Here is a gentle bedtime story for a 5-year-old about a fox, about 400 words:",
    "Sure! Here's a bedtime story about a dragon who is afraid of the dark.",
    "Of course. Below is a calming story for Mia:",
    "Okay, here is your story:",
    "Certainly! Here’s a short, calming bedtime story:",
    "OK, here you go:",
    "here is a calming story for Mia.",
    "**Sure! Here is your story:**",
    "Sure!",
    "Of course.\nHere is your story:",  # two lines of it
])
def test_an_instruction_paraphrased_by_the_model_does_not_start_the_story(preamble):
    story = "Once upon a time, a dragon slept.\nGoodnight."
    shaped = "Once upon a time, a dragon slept.\n\nGoodnight."
    assert shown(f"{preamble}\n\nThe Sleepy Dragon\n{story}") == f"The Sleepy Dragon\n\n{shaped}"
    assert shown(f"{preamble}\n{story}") == f"{IDEA_TITLE}\n\n{shaped}"
    assert told(f"{preamble}\n{story}").body == shaped


@pytest.mark.parametrize("begun", [
    "Here is a gentle bedtime story for a 5-year-old about a dragon who is afraid of the dark",
    "Okay! As you asked, I have written something calm and gentle for a five-year-old, about",
])
def test_a_preamble_still_arriving_is_not_shown_as_the_story(begun):
    assert len(begun) > 80
    assert shown(begun) == begun  # no telling yet
    assert shown(begun + ":\nThe Sleepy Dragon\nOnce") == "The Sleepy Dragon\n\nOnce"


@pytest.mark.parametrize("title", [
    "Here Comes the Moon",
    "Here Is the Story of Pip",
    "Here's to the Moon!",
    "OK Go and the Stars",
    "Okay, Little Owl",
    "Sure-Footed Sam",
    "Certainly Not, Said the Cat",
])
def test_a_title_that_opens_like_a_preamble_is_the_title(title):
    assert shown(f"{title}\nOnce upon a time. Goodnight.") == (
        f"{title}\n\nOnce upon a time. Goodnight.")


@pytest.mark.parametrize("line", [
    "Here is Mia, who loved the stars.",
    "Here is your story: a fox, a moon and a boat.",  # said in the story, not before it
    "Sure, said the fox, here is a story for you:",
])
def test_a_story_line_that_opens_like_a_preamble_stays_in_the_story(line):
    text = f"The Stars\nOnce upon a time.\n{line}\nGoodnight."
    assert shown(text) == f"The Stars\n\nOnce upon a time.\n\n{line}\n\nGoodnight."


@pytest.mark.parametrize("line", [
    "Here is Mia, who loved the stars.",
    "Here is the story of Pip, who lived by the sea.",
    "This is a story about a little fox.",
    "Okay, said the owl, it is time for bed.",
])
def test_a_story_that_begins_like_a_preamble_keeps_its_first_line(line):
    assert shown(f"{line}\nGoodnight.") == f"{IDEA_TITLE}\n\n{line}\n\nGoodnight."
    assert shown(f"The Stars\n{line}\nGoodnight.") == f"The Stars\n\n{line}\n\nGoodnight."


# -- a title the app makes itself, in the story's language (the model wrote none) -------------

# language: (the idea, the child, the title for the child, the title for nobody named, and a
# first line that is no title, a sentence of the story)
MADE = {
    "en": ("a sleepy owl", "Mia", "Mia and the Sleepy Owl", "The Sleepy Owl",
           "Once upon a time, an owl could not sleep."),
    "es": ("un pequeño zorro que no encuentra la luna", "Sofía",
           "Sofía y un pequeño zorro que no encuentra la luna",
           "Un pequeño zorro que no encuentra la luna", "Había una vez un zorro."),
    "fr": ("une petite chouette qui a perdu son hululement", "Léa",
           "Léa et une petite chouette qui a perdu son hululement",
           "Une petite chouette qui a perdu son hululement", "Il était une fois une chouette."),
    "de": ("ein kleiner Fuchs, der den Mond sucht", "Jonas", "Jonas und ein kleiner Fuchs",
           "Ein kleiner Fuchs", "Es war einmal ein kleiner Fuchs."),
    "it": ("una balena che canta ninne nanne", "Giulia",
           "Giulia e una balena che canta ninne nanne", "Una balena che canta ninne nanne",
           "C'era una volta una balena."),
    "pt": ("um dragão com medo do escuro", "João", "João e um dragão com medo do escuro",
           "Um dragão com medo do escuro", "Era uma vez um dragão."),
    "nl": ("een slaperige uil die zijn oehoe kwijt is", "Daan",
           "Daan en een slaperige uil die zijn oehoe kwijt is",
           "Een slaperige uil die zijn oehoe kwijt is", "Er was eens een uil."),
    "pl": ("przejażdżka łódką po rzece w blasku księżyca, a po drodze: lisy", "Zosia",
           "Zosia i przejażdżka łódką po rzece w blasku księżyca",
           "Przejażdżka łódką po rzece w blasku księżyca", "Dawno, dawno temu żył lis."),
    "ar": ("قطة صغيرة تبحث عن القمر", "سارة", "سارة وقطة صغيرة تبحث عن القمر",
           "قطة صغيرة تبحث عن القمر", "كان يا ما كان، قطة صغيرة."),
    "uk": ("маленьке лисеня, яке шукає місяць", "Оксана", "Оксана та маленьке лисеня",
           "Маленьке лисеня", "Жило собі маленьке лисеня."),
    "ja": ("月をさがす小さなきつね", "ゆい", "ゆいと月をさがす小さなきつね",
           "月をさがす小さなきつね", "むかしむかし、小さなきつねがいました。"),
}
THEO = Child(id=2, name="Theo")
# Words of English a title in another language must not hold (the glue and the article).
ENGLISH_GLUE = re.compile(r"\b(?:the|and|The|And)\b")


def test_every_story_language_has_a_title_made_in_it_here():
    assert set(MADE) == set(LANGUAGES)


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_title_the_app_makes_is_in_the_story_s_language(language):
    """Its word order and case, no word of English: "Sofía y un pequeño zorro…", never "The
    Un Pequeño Zorro…" nor "Sofía and the …" (English keeps its title case)."""
    idea, child, named, alone, sentence = MADE[language]
    request = StoryRequest(prompt=idea, child_name=child, language=language)
    assert title_from_idea(request) == named
    assert title_from_idea(replace(request, child_name=None)) == alone
    # The model's first line is a sentence of the story, or it wrote the story alone.
    assert shown(f"{sentence}\n{sentence}", request) == f"{named}\n\n{sentence}\n\n{sentence}"
    long_line = sentence * 40
    assert shown(long_line, request) == f"{named}\n\n{long_line}"
    if language != "en":
        assert not ENGLISH_GLUE.search(named.replace(child, "")), named


@pytest.mark.parametrize(("language", "title"), [
    ("en", "Mia, Leo and the Sleepy Owl"),
    ("es", "Sofía, Inés y un pequeño zorro que no encuentra la luna"),
    ("uk", "Оксана, Тарас та маленьке лисеня"),
    ("ja", "ゆいとレオと月をさがす小さなきつね"),
    ("ar", "سارة وليلى وقطة صغيرة تبحث عن القمر"),
])
def test_a_title_names_both_children_the_language_s_way(language, title):
    idea, *_ = MADE[language]
    first, second = {"en": ("Mia", "Leo"), "es": ("Sofía", "Inés"), "uk": ("Оксана", "Тарас"),
                     "ja": ("ゆい", "レオ"), "ar": ("سارة", "ليلى")}[language]
    request = StoryRequest(prompt=idea, child_name=first, sibling_name=second,
                           language=language)
    assert title_from_idea(request) == title


def test_spanish_says_and_as_e_before_the_sound_of_i():
    assert title_from_idea(StoryRequest(prompt="islas de nubes", child_name="Sofía",
                                        language="es")) == "Sofía e islas de nubes"
    assert title_from_idea(StoryRequest(prompt="hielo y estrellas", child_name="Sofía",
                                        language="es")) == "Sofía y hielo y estrellas"


@pytest.mark.parametrize("language", [tag for tag in LANGUAGES if tag not in ("en", "ja")])
def test_a_long_idea_s_title_ends_on_what_it_names(language):
    """Cut to its most words, a title does not end on an article or a preposition."""
    for day in range(7):
        idea = tonight_idea([THEO], date(2026, 12, 1) + timedelta(days=day), language=language)
        title = title_from_idea(StoryRequest(prompt=idea, language=language))
        assert len(title.split()) <= TITLE_WORDS_MAX, title
        assert title.split()[-1].lower() not in LANGUAGES[language].title_small_words, title
        assert title[:1] == title[:1].upper()


def test_a_japanese_title_is_the_idea_s_opening_and_counts_characters():
    idea = tonight_idea([THEO], date(2026, 12, 1), language="ja")
    assert title_from_idea(StoryRequest(prompt=idea, language="ja")) in idea.split("：")[0]
    long = "ほしぞらのしたでねむたいこぐまとちいさなうさぎがいっしょにうたをうたうおはなし"
    made = title_from_idea(StoryRequest(prompt=long, language="ja"))
    assert len(made) == TITLE_CHARACTERS_MAX and made.endswith("…")


def test_the_demo_s_english_titles_are_as_they_were():
    assert title_from_idea(StoryRequest(prompt="a sleepy owl")) == "The Sleepy Owl"
    assert title_from_idea(StoryRequest(prompt="a sleepy owl", child_name="Mia")) == (
        "Mia and the Sleepy Owl")
