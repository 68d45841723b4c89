"""Another story like this one, or what happens next.

    values = like_values(story)          # the form, prefilled with the story's request
    values = sequel_values(story)        # the same, asking what happens next
    request = as_sequel(request, story)  # the new job's request, continuing `story`

A sequel is an ordinary job whose request carries a short description of the earlier
story: its title, what it was about and its characters, never its whole text, so the
storyteller is still called once, with a small request.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from app.shelf.store import ShelfStore, StoredStory
from app.stories import PREVIOUSLY_MAX_CHARS, StoryRequest, parse_id

CHARACTERS_MAX = 6
# Capitalised words that are not names, even in the middle of a sentence.
_NOT_NAMES = frozenset(
    "Mr Mrs Ms Dr Miss Goodnight Good Night Sweet Dreams Once The End And But Then "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
    "January February March April May June July August September October November December "
    "This That These Those There They She He It We You Oh Yes No Ok OK".split()
)
_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_END = ".!?…:;\n"
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


def previously(story: StoredStory) -> str:
    """What the storyteller is told about the earlier story (a few lines, not the text)."""
    parts = [f"Title: {story.title}", f"It was about: {story.request.prompt}"]
    cast = characters(story)
    if cast:
        parts.append(f"Characters: {', '.join(cast)}")
    return "\n".join(parts)[:PREVIOUSLY_MAX_CHARS]


def as_sequel(request: StoryRequest, earlier: StoredStory) -> StoryRequest:
    """`request`, continuing `earlier`."""
    return replace(request, sequel_of=earlier.id, previously=previously(earlier))


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
    return like_values(story) | {
        "prompt": f"what happens next in “{story.title}”"[:500],
        "sequel_of": str(story.id),
        "sequel_title": story.title,
    }


async def earlier_story(shelf: ShelfStore, raw_id: str) -> StoredStory | None:
    """The story a form's `sequel_of` names, while it is on the shelf; None for none."""
    story_id = parse_id(raw_id)
    return None if story_id is None else await shelf.get_story(story_id)
