"""A part read aloud by a speech server: one `POST /audio/speech` per narration job.

    narrator = SpeechNarrator(client, model="kokoro", voice="af_heart")
    narration = await narrator.read(text, language="en", job_id=17)

Any OpenAI-compatible speech server (Kokoro-FastAPI, Speaches, LocalAI, OpenAI's own)
takes `model`, `voice`, `input` and `response_format`, and answers the audio's bytes. Its
input is limited (OpenAI's: 4,096 characters), so a part is at most PART_CHARS. Such a
server reports no usage: a part's call is charged its set-aside, marked estimated (nothing,
at a model with no price). A 404 for the route (not the model) marks `/audio/speech`
missing, named on the home page with the setting that mends it.
"""

from __future__ import annotations

from app.failures import NARRATION_UNPLAYABLE, NARRATION_UNSUPPORTED
from app.narrating import Narration, NarrationError
from app.narrating.audio import CONTENT_TYPE, FORMAT, NotAudio, mp3
from app.storytelling.capped import BodyTooLarge
from app.storytelling.endpoints import SPEECH, Endpoints, is_missing_route, no_endpoint_message
from app.storytelling.provider import FAILURES, ProviderClient, loaded, trouble_of

PART_CHARS = 4_000  # under the speech API's 4,096


class SpeechNarrator:
    name = "speech"
    part_chars = PART_CHARS

    def __init__(self, client: ProviderClient, *, model: str, voice: str,
                 endpoints: Endpoints | None = None) -> None:
        self.client = client
        self.model = model
        self.voice = voice
        self.endpoints = endpoints or Endpoints()

    async def aclose(self) -> None:
        await self.client.aclose()

    async def read(self, text: str, *, language: str, job_id: int) -> Narration:
        await loaded()  # off the event loop (app/storytelling/provider.py)
        import openai

        try:
            answer = await self.client().audio.speech.create(
                model=self.model, voice=self.voice, input=text, response_format=FORMAT,
                extra_headers={"X-Story-Job-Id": str(job_id)})
            data = answer.content
        except openai.NotFoundError as error:
            if is_missing_route(error, self.model):  # the route, not the model
                self.endpoints.mark_missing(SPEECH, seen_by=f"job {job_id}")
                raise NarrationError(NARRATION_UNSUPPORTED,
                                     no_endpoint_message(SPEECH)) from error
            trouble, detail = trouble_of(error)
            raise NarrationError(FAILURES[trouble].narration, detail) from error
        except (openai.APIError, BodyTooLarge) as error:
            trouble, detail = trouble_of(error)
            raise NarrationError(FAILURES[trouble].narration, detail) from error
        try:
            found = mp3(data)
        except NotAudio as error:
            raise NarrationError(NARRATION_UNPLAYABLE, str(error)) from None
        return Narration(found.frames, CONTENT_TYPE, found.seconds, self.model, self.voice)
