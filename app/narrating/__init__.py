"""Stories read aloud: what a narrator is, what it gives back, how it refuses.

    narration = await narrator.read(text, language="en", job_id=17)   # Narration(audio, ...)

A narrator reads one part of a story per call and is called once per narration job (the
worker's promise, as for stories and pictures). `openai` asks Chat Completions for audio
output (app/narrating/chat_audio.py); `speech` asks any server's `/audio/speech`
(app/narrating/speech.py). Both ask for MP3 and check what comes back
(app/narrating/audio.py) before anything is kept.

May use: app.money (a call's usage, a part's most), app.storytelling (the provider's client,
what went wrong with a call, which endpoints the server lacks), app.failures, app.languages
and app.logs. Never the queue, the shelf or the web: the worker hands a narrator a part's
words and gets its audio back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.failures import ProviderError
from app.money import Usage


@dataclass(frozen=True)
class Narration:
    audio: bytes  # MP3 frames alone (app/narrating/audio.py's `mp3`)
    content_type: str
    seconds: float
    model: str
    voice: str
    usage: Usage | None = None  # what the provider reported it cost; None: nothing


class NarrationError(ProviderError):
    """The part could not be read aloud (its Failure's code is what the job stores)."""


class Narrator(Protocol):
    name: str
    model: str
    part_chars: int  # the most characters one call reads

    async def read(self, text: str, *, language: str, job_id: int) -> Narration: ...

    async def aclose(self) -> None: ...
