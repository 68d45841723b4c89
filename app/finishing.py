"""Finishing a story cut short: the words it carries on from (its title and the story so
far up to its last whole sentence), and the finished text made of those and the model's
rest.

    carried = carried_words(job.text_so_far, title)  # None: no words were kept
    text = finished_text(carried, rest)              # rest_of(carried, text) == rest
"""

from __future__ import annotations

import re

from app.stories import clean_text, split_title

# The end of a sentence: its mark(s) (Arabic's question mark too), any closing quotes or
# brackets, then space or the end; or Japanese's full stop, ! or ?, and its closing quotes,
# with no space after them (its sentences run on without one).
_SENTENCE_END = re.compile(r"[.!?…؟]+[\"'”’»)\]」』]*(?=\s|$)|[。！？]+[」』）”’]*")


def cut_to_last_sentence(text: str) -> str:
    """A text cut off mid-sentence, ended at its last full sentence (or marked as cut off
    with an ellipsis when it has no full sentence at all)."""
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    if not ends:
        return text.rstrip() + "…"
    return text[: ends[-1]].rstrip()


def carried_words(text_so_far: str, untitled: str) -> str | None:
    """What finishing a story cut short carries on from: its title line, a blank line, and
    the story so far up to its last whole sentence; None when no words were kept. A story
    cut before its first line ended has no title yet: its words are the story's beginning,
    under `untitled` (the idea's title), never a title of their own."""
    text = clean_text(text_so_far).strip()
    if not text:
        return None
    title, body = split_title(text) if "\n" in text else (untitled, text)
    ends = [match.end() for match in _SENTENCE_END.finditer(body)]
    begun = body[: ends[-1]].rstrip() if ends else ""
    return f"{title}\n\n{begun}"


def finished_text(carried: str, rest: str) -> str:
    """A finished story's whole text: the carried words, then the model's `rest` (a new
    paragraph when the model began one, else the same one)."""
    title, _, begun = carried.partition("\n\n")
    if not begun.strip():
        return f"{title}\n\n{rest.lstrip()}"
    joint = "\n\n" if rest[:1] == "\n" else " "
    return f"{title}\n\n{begun.rstrip()}{joint}{rest.lstrip()}"


def rest_of(carried: str, text: str) -> str:
    """The model's part of a finished story's text so far (finished_text's inverse)."""
    title, _, begun = carried.partition("\n\n")
    head = f"{title}\n\n{begun.rstrip()}" if begun.strip() else f"{title}\n\n"
    return text[len(head):] if text.startswith(head) else ""
