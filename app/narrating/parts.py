"""A story's words cut into parts a narrator can read in one call each.

    parts("The Sleepy Owl", body, limit=4000)   # ["The Sleepy Owl.\n\nOnce upon ...", ...]

The title is read first, then the story (never a note about it: a paragraph wholly in
brackets, as the page shows it). Parts are cut between paragraphs where they
can be, else between sentences, else between words (a "sentence" of thousands of
characters with no stop), and only as a last resort inside a word: each is at most
`limit` characters and none is empty. The same words and limit always give the same
parts, so asking again finds which of them are read already.
"""

from __future__ import annotations

import re

# A sentence ends at its stop (and closing quotes or brackets), in any of the story
# languages' scripts: . ! ? … and the Japanese 。！？.
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'»”’)\]]*\s+|(?<=[。！？])")


def parts(title: str, body: str, *, limit: int) -> list[str]:
    """The words to read, in parts of at most `limit` characters."""
    heading = title.strip()
    if heading and heading[-1] not in ".!?…。！？":
        heading += "."
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body)
                  if p.strip() and not _is_note(p.strip())] or [""]
    paragraphs[0] = f"{heading}\n\n{paragraphs[0]}".strip() if heading else paragraphs[0]
    pieces = [piece for paragraph in paragraphs if paragraph
              for piece in _fitted(paragraph, limit)]
    made: list[str] = []
    for piece in pieces:
        if made and len(made[-1]) + 2 + len(piece) <= limit:
            made[-1] += "\n\n" + piece
        else:
            made.append(piece)
    return made


def _is_note(paragraph: str) -> bool:
    """A paragraph wholly in brackets is a note about the story (the demo's), not read."""
    return paragraph.startswith("(") and paragraph.endswith(")")


def _fitted(paragraph: str, limit: int) -> list[str]:
    """A paragraph as pieces of at most `limit`: whole, or its sentences packed together."""
    if len(paragraph) <= limit:
        return [paragraph]
    pieces: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE_END.split(paragraph) if s and s.strip()):
        for piece in _by_words(sentence, limit):
            if pieces and len(pieces[-1]) + 1 + len(piece) <= limit:
                pieces[-1] += " " + piece
            else:
                pieces.append(piece)
    return pieces


def _by_words(sentence: str, limit: int) -> list[str]:
    if len(sentence) <= limit:
        return [sentence]
    pieces: list[str] = []
    for word in sentence.split():
        while len(word) > limit:  # no space to cut at: cut the word itself
            pieces.append(word[:limit])
            word = word[limit:]
        if pieces and len(pieces[-1]) + 1 + len(word) <= limit:
            pieces[-1] += " " + word
        elif word:
            pieces.append(word)
    return pieces
