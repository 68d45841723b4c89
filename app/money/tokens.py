"""Tokens counted from text, for a call whose provider reported no usage (a local server
ignores `stream_options`): the story keeps them, marked estimated, as its ledger row does,
so the two agree. What the call is charged stays its set-aside (the most it could cost).

    counted_usage(prompt_text, story_text)    # Usage(input_tokens=..., output_tokens=...)

A token is about four characters of English, fewer of most other languages: the count
rounds up, and never says a text with characters had none.
"""

from __future__ import annotations

from app.money import Usage

CHARS_PER_TOKEN = 4


def tokens_in(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def counted_usage(prompt: str, text: str) -> Usage:
    return Usage(input_tokens=tokens_in(prompt), output_tokens=tokens_in(text))
