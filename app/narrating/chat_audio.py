"""A part read aloud by Chat Completions' audio output: one `chat.completions.create` per
narration job, not streamed, with `modalities: ["text", "audio"]`.

    narrator = ChatNarrator(client, model="gpt-audio-1.5", voice="sage")
    narration = await narrator.read(text, language="en", job_id=17)

The model is asked to read the words as they are, slowly and softly, in the story's
language, and is sent a cap (`max_completion_tokens`) of what reading them can take
(app/money/prices.py's narration_most), so the set-aside holds at the provider too. The
call carries `X-Story-Job-Id` (the part's own job id) and the client makes no retries.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from app.failures import NARRATION_UNPLAYABLE, NARRATOR_FAILED, NARRATOR_UNREADABLE
from app.languages import language_of
from app.money import Usage
from app.money.prices import narration_most
from app.narrating import Narration, NarrationError
from app.narrating.audio import CONTENT_TYPE, FORMAT, NotAudio, mp3
from app.storytelling.capped import BodyTooLarge
from app.storytelling.provider import FAILURES, ProviderClient, loaded, trouble_of

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

# A part's most: about three minutes of a calm voice, well under the audio a call may
# return and under the body cap once base64-encoded (app/storytelling/capped.py).
PART_CHARS = 2_500
INSTRUCTIONS = (
    "You read bedtime stories aloud to a child who is falling asleep. Read the text you are "
    "given exactly as it is written, word for word, in {language}: add nothing, leave "
    "nothing out, say nothing about it. Read slowly, softly and warmly, with calm pauses "
    "between paragraphs.")


class ChatNarrator:
    name = "openai"
    part_chars = PART_CHARS

    def __init__(self, client: ProviderClient, *, model: str, voice: str) -> None:
        self.client = client
        self.model = model
        self.voice = voice

    async def aclose(self) -> None:
        await self.client.aclose()

    async def read(self, text: str, *, language: str, job_id: int) -> Narration:
        await loaded()  # off the event loop (app/storytelling/provider.py)
        import openai

        named = language_of(language).english
        try:
            answer = await self.client().chat.completions.create(
                model=self.model, modalities=["text", "audio"],
                audio={"voice": self.voice, "format": FORMAT},
                messages=[{"role": "system", "content": INSTRUCTIONS.format(language=named)},
                          {"role": "user", "content": text}],
                max_completion_tokens=narration_most(text).output_tokens,
                stream=False, extra_headers={"X-Story-Job-Id": str(job_id)})
        except (openai.APIError, BodyTooLarge) as error:
            trouble, detail = trouble_of(error)
            raise NarrationError(FAILURES[trouble].narration, detail) from error
        data = _audio_of(answer)
        try:
            found = mp3(data)
        except NotAudio as error:
            raise NarrationError(NARRATION_UNPLAYABLE, str(error)) from None
        return Narration(found.frames, CONTENT_TYPE, found.seconds, self.model, self.voice,
                         _usage_of(answer))


def _audio_of(answer: ChatCompletion) -> bytes:
    try:
        audio = answer.choices[0].message.audio
        encoded = audio.data if audio is not None else ""
        data = base64.b64decode(encoded, validate=True) if encoded else b""
    except (AttributeError, IndexError, TypeError, binascii.Error):
        raise NarrationError(NARRATOR_UNREADABLE, "no audio in the answer") from None
    if not data:
        raise NarrationError(NARRATOR_FAILED, "the answer has no audio")
    return data


def _usage_of(answer: ChatCompletion) -> Usage | None:
    """The tokens reported, as reported, whatever they are (the meter bounds them)."""
    usage: Any = answer.usage
    if usage is None:
        return None
    details = getattr(usage, "completion_tokens_details", None)
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    return Usage(input_tokens=getattr(usage, "prompt_tokens", None),  # type: ignore[arg-type]
                 cached_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
                 output_tokens=getattr(usage, "completion_tokens", None),  # type: ignore[arg-type]
                 audio_tokens=getattr(details, "audio_tokens", None) or 0)
