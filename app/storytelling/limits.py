"""What one story may cost in tokens, and which of the optional parameters a model takes.

    token_budget("long")                       # the completion budget, the same for any model
    token_budget("long", language="ja")        # ... for a story in Japanese (its characters)
    limits = RequestLimits(temperature=None, reasoning_tokens=0, every_cap=True)  # a storyteller's
    options = limits.options(model, CHAT_TOKEN_CAPS, "long")
    refused = limits.learn(model, error, options)   # a 400 naming one of them: drop it, retry

The budget is not chosen by a model's name: it is the length's room (its tokens in the
story's language, app/lengths.py) plus
STORY_REASONING_TOKENS for hidden reasoning (only the tokens used are billed; none by default
with a custom OPENAI_BASE_URL, whose small local models think aloud if at all and whose
context is small), and a story the budget cut off anyway is reported by the provider
(`finish_reason == "length"`, `incomplete`) and kept to its last sentence. A server of our
own choosing (a custom base URL) may honour only one spelling of the cap and ignore the
other without an error, so it is sent both (`every_cap`).

A provider that refuses one of the optional parameters answers 400 before any word is
written, and bills nothing. The request may then go again without it (or with the token
cap's other spelling), once per parameter, and the model is remembered: its next request
leaves the parameter out straight away.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from app.languages import DEFAULT_LANGUAGE, language_of
from app.lengths import BY_NAME
from app.logs import log

# Each length's tokens in English (or any spaced language): 534 / 1,038 / 1,794.
LENGTH_MAX_TOKENS = {name: length.tokens(language_of(DEFAULT_LANGUAGE))
                     for name, length in BY_NAME.items()}
# Room for a model's hidden reasoning, which the completion budget pays for too: without it
# the whole budget can go on thinking and the story comes back empty. Only the tokens used
# are billed, so it costs nothing unless the model needs it.
REASONING_ALLOWANCE_TOKENS = 8000

# The token cap's spellings, the preferred first: Chat Completions' current one, then the
# older one some servers still want; the Responses API has one.
CHAT_TOKEN_CAPS = ("max_completion_tokens", "max_tokens")
RESPONSES_TOKEN_CAPS = ("max_output_tokens",)
TEMPERATURE = "temperature"
# OpenAI's codes for a refused parameter ("Unsupported parameter: 'max_tokens' ...") and a
# refused value ("Unsupported value: 'temperature' does not support 0.8 ...").
REFUSAL_CODES = ("unsupported_parameter", "unsupported_value")
_REFUSAL_WORDS = ("unsupported", "not supported", "unrecognized", "unknown parameter")

T = TypeVar("T")


def token_budget(length: str, reasoning_tokens: int = REASONING_ALLOWANCE_TOKENS, *,
                 language: str = DEFAULT_LANGUAGE) -> int:
    """The most tokens one story of this length, in this language, may be written with,
    whatever the model."""
    return BY_NAME[length].tokens(language_of(language)) + reasoning_tokens


class RequestLimits:
    """The optional parameters each request carries, and what each model has refused.
    `every_cap`: send the token cap in each spelling not refused, not only the first."""

    def __init__(self, *, temperature: float | None = None,
                 reasoning_tokens: int = REASONING_ALLOWANCE_TOKENS,
                 every_cap: bool = False) -> None:
        self.temperature = temperature  # None: no sampling parameter is sent
        self.reasoning_tokens = reasoning_tokens
        self.every_cap = every_cap
        self._refused: dict[str, set[str]] = {}

    def options(self, model: str, token_caps: tuple[str, ...], length: str, *,
                language: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
        """The token cap (the first spelling the model has not refused) and, when set, the
        temperature, for one request (a story of `length` in `language`)."""
        refused = self._refused.get(model, set())
        options: dict[str, Any] = {}
        caps = [name for name in token_caps if name not in refused]
        for cap in caps if self.every_cap else caps[:1]:
            options[cap] = token_budget(length, self.reasoning_tokens, language=language)
        if self.temperature is not None and TEMPERATURE not in refused:
            options[TEMPERATURE] = self.temperature
        return options

    async def send(self, model: str, token_caps: tuple[str, ...], length: str,
                   request: Callable[[dict[str, Any]], Awaitable[T]], *,
                   language: str = DEFAULT_LANGUAGE) -> T:
        """`request(options)`, sent again without a parameter the provider refused (each
        parameter once: a refusal comes before any word and bills nothing). Any other
        error, and a second refusal of the same parameter, is raised as it came."""
        tried: set[str] = set()
        while True:
            options = self.options(model, token_caps, length, language=language)
            try:
                return await request(options)
            except Exception as error:
                refused = self.learn(model, error, options)
                if refused is None or refused in tried:
                    raise
                tried.add(refused)

    def learn(self, model: str, error: Exception, sent: Mapping[str, Any]) -> str | None:
        """The parameter a 400 refused, if it is one of `sent` (remembered for the model,
        logged the first time); None: the error is something else, not to be retried."""
        parameter = refused_parameter(error, sent)
        if parameter is None:
            return None
        refused = self._refused.setdefault(model, set())
        if parameter not in refused:
            refused.add(parameter)
            log("parameter_refused", level=logging.WARNING, model=model, parameter=parameter,
                detail="sent without it from now on")
        return parameter


def refused_parameter(error: Exception, sent: Mapping[str, Any]) -> str | None:
    """Which of the parameters sent a provider's 400 refused: the one its `param` names
    (with OpenAI's codes), or else the one its message names as unsupported."""
    if getattr(error, "status_code", None) != 400:
        return None
    body = getattr(error, "body", None)
    message = str(body.get("message") or "") if isinstance(body, dict) else ""
    message = (message or str(error)).lower()
    param = getattr(error, "param", None)
    code = getattr(error, "code", None)
    refusal = code in REFUSAL_CODES or any(word in message for word in _REFUSAL_WORDS)
    if not refusal:
        return None
    if param is not None:
        return param if param in sent else None
    # No `param`: the first parameter sent that the message names, before any advice on
    # what to use instead ("... Use 'max_completion_tokens' instead").
    complaint = message.split(" use ", 1)[0]
    named = [(complaint.find(name), name) for name in sent if name in complaint]
    return min(named)[1] if named else None
