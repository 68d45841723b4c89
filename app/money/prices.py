"""Prices: the pinned table (genai-prices, at the version the lock holds; nothing fetched at
run time), overridden or extended by PRICES.

    table = PriceTable({"my-local-model": Price()})      # PRICES, parsed by app/config.py
    table.price_of("gpt-6-luna")        # Price(...), or None: unpriced (costs 0, and named)
    table.set_aside(request, model)     # a story's largest possible cost, micro-dollars
    table.picture_set_aside(model)

A model is looked up by the name the provider answered with, so a dated snapshot
("gpt-5.4-mini-2026-03-17") finds its family's price in the table. The table's prices are
read at 1,000 tokens (below any tier), per million. Its first lookup imports the table
(a quarter of a second): the app warms it in a thread after start-up.
"""

from __future__ import annotations

import math
import re
import threading
from decimal import Decimal

from app.money import PER_MTOK, Price, Usage
from app.stories import StoryRequest
from app.storytelling.limits import REASONING_ALLOWANCE_TOKENS, token_budget

PROVIDER = "openai"
_SAMPLE = 1000  # tokens: prices are read here, below any tier, and scaled to a million
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")
# A picture's largest output: the GPT image models report 272 tokens for the low-quality
# 768 x 512 one asked for (app/illustrating/openai_images.py), so twice that; the prompt is
# the style and 600 characters of the story.
PICTURE_OUTPUT_TOKENS_MAX = 600
PICTURE_INPUT_TOKENS_MAX = 1_000
# A story's prompt, at most: the instructions and the family's fields (a token is never
# less than a character of them, so the characters bound it from above).
STORY_INSTRUCTION_TOKENS_MAX = 1_500


class PriceTable:
    def __init__(self, overrides: dict[str, Price] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._pinned: dict[str, Price | None] = {}
        self._lock = threading.Lock()

    def price_of(self, model: str) -> Price | None:
        for name in dict.fromkeys((model, _DATED.sub("", model))):
            if name in self.overrides:
                return self.overrides[name]
        with self._lock:
            if model not in self._pinned:
                self._pinned[model] = pinned_price(model)
            return self._pinned[model]

    def knows(self, model: str) -> bool:
        """Whether `model`'s price (or its having none) is at hand without a look-up."""
        return model in self.overrides or _DATED.sub("", model) in self.overrides \
            or model in self._pinned

    def warm(self, *models: str) -> None:
        """Import the table and look these up (in a thread: it blocks for a moment)."""
        for model in models:
            self.price_of(model)

    def set_aside(self, request: StoryRequest, model: str,
                  reasoning_tokens: int = REASONING_ALLOWANCE_TOKENS) -> int:
        """The most a story for `request` can cost: its whole token budget (with room for
        `reasoning_tokens`) written, and its prompt read, at the model's prices
        (micro-dollars; 0 when the model is unpriced)."""
        price = self.price_of(model)
        return 0 if price is None else price.charge(story_most(request, reasoning_tokens))

    def picture_set_aside(self, model: str) -> int:
        price = self.price_of(model)
        return 0 if price is None else price.charge(PICTURE_MOST)

    def narration_set_aside(self, text: str, model: str) -> int:
        """The most reading `text` aloud can cost (micro-dollars; 0 when unpriced)."""
        price = self.price_of(model)
        return 0 if price is None else price.charge(narration_most(text))


def story_most(request: StoryRequest, reasoning_tokens: int = REASONING_ALLOWANCE_TOKENS) -> Usage:
    """The most a story's call can use: the cap it is sent with (`reasoning_tokens` of room
    included) written, and its prompt read (the instructions and every field the family
    filled in; a token is never less than a character of them)."""
    prompt = STORY_INSTRUCTION_TOKENS_MAX + sum(
        len(str(value)) for value in vars(request).values() if value is not None)
    return Usage(input_tokens=prompt, output_tokens=token_budget(
        request.length, reasoning_tokens, language=request.language))


# A narration part's most: its instructions and words read (a token is never less than a
# character), and its audio written at no slower than NARRATION_CHARS_PER_S_MIN (a slow
# bedtime voice reads 12 to 15), at AUDIO_TOKENS_PER_S (OpenAI's audio output: one token
# per 50 ms), with its transcript (a token per character at most) beside it. Chat audio is
# sent this as its cap (app/narrating/chat_audio.py), so the provider holds it too.
NARRATION_INSTRUCTION_TOKENS_MAX = 300
NARRATION_CHARS_PER_S_MIN = 5
AUDIO_TOKENS_PER_S = 20


def narration_most(text: str) -> Usage:
    chars = len(text)
    audio = math.ceil(chars / NARRATION_CHARS_PER_S_MIN * AUDIO_TOKENS_PER_S)
    return Usage(input_tokens=NARRATION_INSTRUCTION_TOKENS_MAX + chars,
                 output_tokens=audio + chars, audio_tokens=audio)


# The most a picture's call can use.
PICTURE_MOST = Usage(input_tokens=PICTURE_INPUT_TOKENS_MAX, output_tokens=PICTURE_OUTPUT_TOKENS_MAX,
                     images=1)


def pinned_price(model: str) -> Price | None:
    """The pinned table's price for `model` at the provider; None when it has none."""
    import genai_prices

    def rate(**usage: int) -> Decimal:
        calculation = genai_prices.calc_price(genai_prices.Usage(**usage), model,
                                              provider_id=PROVIDER)
        return Decimal(calculation.total_price) * PER_MTOK / _SAMPLE

    try:
        output = rate(output_tokens=_SAMPLE)
        audio = rate(output_tokens=_SAMPLE, output_audio_tokens=_SAMPLE)
        return Price(input_per_mtok=rate(input_tokens=_SAMPLE), output_per_mtok=output,
                     cached_per_mtok=rate(input_tokens=_SAMPLE, cache_read_tokens=_SAMPLE),
                     audio_output_per_mtok=audio if audio != output else None)
    except LookupError:
        return None
