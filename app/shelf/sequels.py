"""Another story like this one, or what happens next.

    values = like_values(story)          # the form, prefilled with the story's request
    values = sequel_values(story)        # the same, asking what happens next
    request = as_sequel(request, story)  # the new job's request, continuing `story`
    prompt = in_language(prompt, story.title, "fr")   # its first prompt, in French

A sequel is an ordinary job whose request carries a short summary of the earlier story
(`previously`): its title, what it was about, its characters, how it began and where it
ended, never its whole text, so the storyteller is still called once, with a small
request. The summary is taken from the stored text (see `summary`): no second call, and
nothing more billed than the sequel's own story.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from app.languages import LANGUAGES
from app.requests import PREVIOUSLY_MAX_CHARS, PROMPT_MAX_CHARS
from app.shelf.store import ShelfStore, StoredStory
from app.stories import StoryRequest, paragraphs, parse_id

CHARACTERS_MAX = 6
# A summary's parts, each at most this long, so that together they fit `previously`.
SUMMARY_TITLE_MAX_CHARS = 200
SUMMARY_ABOUT_MAX_CHARS = 150
SUMMARY_CAST_MAX_CHARS = 150
SUMMARY_BEGAN_MAX_CHARS = 200
SUMMARY_ENDED_MAX_CHARS = 240
ENDING_SENTENCES = 2  # where it ended: its last sentences (but the goodnights)
# Capitalised words that are not names, even in the middle of a sentence.
_NOT_NAMES = frozenset(
    "Mr Mrs Ms Dr Miss Goodnight Good Night Sweet Dreams Once The End And But Then "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
    "January February March April May June July August September October November December "
    "This That These Those There They She He It We You Oh Yes No Ok OK".split()
)
_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_END = ".!?…:;\n"
# A sentence: up to its mark(s) and any closing quotes or brackets, then space or the end.
_SENTENCE = re.compile(r"\S.*?(?:[.!?…]+[\"'”’»)\]]*(?=\s|$)|$)", re.S)
# How a bedtime story signs off, which says nothing of where it ended: "Goodnight, Mia.",
# "Sweet dreams, Mia.", "The End."
_SIGN_OFF = re.compile(r"^(?:good\s*night|sweet dreams|sleep tight|the end)\b[^.!?…]{0,40}"
                       r"[.!?…]*$", re.IGNORECASE)
_BEFORE_A_WORD = " \t\"'“‘«(—–-"


def characters(story: StoredStory) -> list[str]:
    """The story's characters: the listener, then the names used most in the story
    (capitalised words that appear in the middle of a sentence), at most a few."""
    text = story.body
    named: Counter[str] = Counter()
    mid_sentence: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group()
        if not word[0].isupper() or word in _NOT_NAMES or len(word) < 2:
            continue
        named[word] += 1
        before = text[max(match.start() - 12, 0):match.start()].rstrip(_BEFORE_A_WORD)
        if before and before[-1] not in _SENTENCE_END:
            mid_sentence.add(word)
    found = [word for word, _ in named.most_common() if word in mid_sentence]
    listening = [name for name in (story.request.child_name, story.request.sibling_name) if name]
    if listening:
        heard = {name.lower() for name in listening}
        found = listening + [word for word in found if word.lower() not in heard]
    return found[:CHARACTERS_MAX]


def sentences(text: str) -> list[str]:
    """A text's sentences, in order, each on one line (a paragraph's break ends one too)."""
    found: list[str] = []
    for block in paragraphs(text):
        begun = False
        for match in _SENTENCE.finditer(block):
            sentence = " ".join(match.group().split())
            if begun and sentence[0].islower():  # `"Who?" she asked.`: one sentence
                found[-1] += f" {sentence}"
            else:
                found.append(sentence)
            begun = True
    return found


def _narrative(body: str) -> list[str]:
    """The story's sentences without what is not the story: a note in brackets of its own
    (the demo's "(This story was written by ...)") and the goodnights that sign it off."""
    told = "\n\n".join(block for block in paragraphs(body)
                        if not (block.startswith("(") and block.endswith(")")))
    said = sentences(told)
    while said and _SIGN_OFF.match(said[-1]):
        said.pop()
    return said


def _clip(text: str, max_chars: int) -> str:
    """`text`, or as many of its words as fit in `max_chars` with an ellipsis."""
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def summary(title: str, body: str, prompt: str, cast: list[str]) -> str:
    """A short summary of a story for its sequel, made from its stored text alone (no call
    to the storyteller, so nothing billed): its title, what it was asked about, its
    characters (`cast`, see `characters`), its first sentence (how it began: who, where)
    and its last sentences but the goodnights (where it ended). Each part is clipped at a
    word, so that the whole fits `previously`'s column.

        Title: Pip and the Owl
        It was about: an owl who cannot sleep
        Characters: Mia, Pip, Hoot
        It began: Once upon a time, Pip met a small owl named Hoot.
        It ended: They flew over the hill to see Luna, who was fast asleep.
    """
    parts = [f"Title: {_clip(title, SUMMARY_TITLE_MAX_CHARS)}",
             f"It was about: {_clip(prompt, SUMMARY_ABOUT_MAX_CHARS)}"]
    if cast:
        parts.append(f"Characters: {_clip(', '.join(cast), SUMMARY_CAST_MAX_CHARS)}")
    said = _narrative(body)
    if said:
        parts.append(f"It began: {_clip(said[0], SUMMARY_BEGAN_MAX_CHARS)}")
    if len(said) > 1:
        ending = said[max(len(said) - ENDING_SENTENCES, 1):]
        parts.append(f"It ended: {_clip(' '.join(ending), SUMMARY_ENDED_MAX_CHARS)}")
    return "\n".join(parts)[:PREVIOUSLY_MAX_CHARS]


def previously(story: StoredStory) -> str:
    """What the storyteller is told about the earlier story: its summary (not the text)."""
    return summary(story.title, story.body, story.request.prompt, characters(story))


def as_sequel(
    request: StoryRequest, earlier: StoredStory, *, same_children: bool = False
) -> StoryRequest:
    """`request`, continuing `earlier`; with `same_children`, for the children it was for
    (child and sibling, their ages, likes and companions, as that story was asked)."""
    if same_children:
        was = earlier.request
        request = replace(request, child_name=was.child_name, age=was.age,
                          sibling_name=was.sibling_name, sibling_age=was.sibling_age,
                          likes=was.likes, companions=was.companions)
    return replace(request, sequel_of=earlier.id, previously=previously(earlier))


def next_prompts(title: str) -> dict[str, str]:
    """A sequel's first prompt in each language, by its tag: the prompt a sequel's form
    starts with, in the language the story is asked in (each language's `next_prompt`)."""
    return {tag: language.next_prompt.format(title=title)[:PROMPT_MAX_CHARS]
            for tag, language in LANGUAGES.items()}


def in_language(prompt: str, title: str, language: str) -> str:
    """The sequel's prompt: its first one in `language` while it is still a first one
    (in any language, untouched), else the prompt as it was written."""
    prompts = next_prompts(title)
    return prompts.get(language, prompt) if prompt in prompts.values() else prompt


def sequel_fields(story: StoredStory) -> dict[str, str]:
    """What the sequel's form carries of the story it continues: its id (a hidden field),
    its title, and whom it was for (the chooser's "as before")."""
    return {"sequel_of": str(story.id), "sequel_title": story.title,
            "sequel_child": story.request.child_name or "",
            "sequel_sibling": story.request.sibling_name or ""}


def like_values(story: StoredStory) -> dict[str, str]:
    """The story form, filled in with this story's request (all of it editable)."""
    request = story.request
    return {
        "prompt": request.prompt,
        "child_name": request.child_name or "",
        "age": str(request.age) if request.age else "",
        "length": request.length,
        "language": request.language,
    }


def sequel_values(story: StoredStory) -> dict[str, str]:
    """The story form for "What happens next?": the same child, age and length, a prompt
    to keep or change, and the story it continues (a hidden field)."""
    language = story.request.language
    return like_values(story) | sequel_fields(story) | {
        "prompt": next_prompts(story.title).get(language, next_prompts(story.title)["en"]),
        # For the same children, unless the chooser says otherwise.
        "for": "earlier" if story.request.child_name else "",
    }


async def earlier_story(shelf: ShelfStore, raw_id: str) -> StoredStory | None:
    """The story a form's `sequel_of` names, while it is on the shelf; None for none."""
    story_id = parse_id(raw_id)
    return None if story_id is None else await shelf.get_story(story_id)
