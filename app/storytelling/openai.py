"""The provider call: one streamed Chat Completions request per story (`LLM_API=chat`),
and what a provider's error means to a story (both provider APIs'; their prompt:
app/storytelling/prompt.py).

    storyteller = OpenAIStoryteller(ProviderClient(api_key=..., timeout_s=180), model="gpt-6-luna")
    story = await storyteller.write(request, job_id=17, on_text=print)   # streamed

It makes one billed request per call (the client's own retries are off: a retry is a
second bill), handing the text so far to `on_text` as it arrives. A request the provider
refuses for one of its optional parameters (a 400 before any word, billed nothing) goes
again without it (app/storytelling/limits.py). The answer is read to the app's own rules
(app/storytelling/reader.py): past its word cap the stream is closed; LLM_TIMEOUT_S bounds
the wait for the first word and each silence after one, not a story arriving at a steady
pace (a chunk with no words, an empty, role-only or keep-alive delta, is silence); a stream
that ends, or goes quiet, with no finish reason is a story cut short, before its first word
too ("Try again"), and "sent nothing" is said only of an answer that ended properly, with
no words. A server that answers the streamed request with one whole JSON body has it read
as the story. A model the provider no longer has fails the story at once, naming it, and
the home page says so (app/storytelling/availability.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from app.failures import (
    DECLINED,
    MODEL_UNAVAILABLE,
    STORYTELLER_EMPTY,
    STORYTELLER_TIMEOUT,
    StorytellerError,
)
from app.stories import Story, StoryRequest, TextSink
from app.storytelling.availability import (
    ModelAvailability,
    is_model_not_found,
    model_gone_detail,
)
from app.storytelling.limits import CHAT_TOKEN_CAPS, RequestLimits
from app.storytelling.prompt import build_prompt
from app.storytelling.provider import FAILURES, loaded, trouble_of
from app.storytelling.reader import (
    STOPPED_BEFORE_WORDS,
    STOPPED_MID_STORY,
    CutShort,
    Ending,
    Reader,
)
from app.storytelling.streaming import Showing, next_chunk

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

    from app.storytelling.provider import ProviderClient


class OpenAIStoryteller:
    name = "openai"

    def __init__(self, client: ProviderClient, *, model: str, temperature: float | None = None,
                 availability: ModelAvailability | None = None,
                 limits: RequestLimits | None = None) -> None:
        self.client = client
        self.model = model
        self.limits = limits or RequestLimits(temperature=temperature)
        self.availability = availability or ModelAvailability(model)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def write(
        self, request: StoryRequest, *, job_id: int, on_text: TextSink | None = None
    ) -> Story:
        await loaded()  # off the event loop (app/storytelling/provider.py)
        import openai

        raw, finish, refused, usage, model, answered = "", None, False, None, None, False
        # `reported`: a usage report came, the last chunk of an answer that ended properly;
        # `streaming`: the create came back, and its answer is being read.
        reported, streaming = False, False
        prompt = build_prompt(request)
        reader = Reader(request, prompt=prompt, job_id=job_id)
        showing = Showing(reader, on_text)
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": prompt[0]}, {"role": "user", "content": prompt[1]}]
        silence_s = self.client.timeout_s

        async def create(options: dict[str, Any]) -> Any:
            return await self.client().chat.completions.create(
                model=self.model,
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                extra_headers={"X-Story-Job-Id": str(job_id)},
                **options,
            )

        heard_at = time.monotonic()  # when words last came: silence is counted from here
        try:
            try:
                async with asyncio.timeout(silence_s):
                    stream = await self.limits.send(self.model, CHAT_TOKEN_CAPS,
                                                    request.length, create,
                                                    language=request.language)
            except openai.NotFoundError as error:
                raise self._not_found(error, job_id) from None
            self.availability.mark_offered()
            async with stream:  # leaving it closes the stream: the app reads no further
                streaming = True
                chunks = _whole_answer(stream) if _is_whole(stream.response) else stream
                while not reader.past_cap(raw):
                    # LLM_TIMEOUT_S bounds each silence (no words), not the whole story
                    chunk = await next_chunk(chunks, silence_s, showing, since=heard_at)
                    if chunk is None:
                        break
                    reported = reported or chunk.usage is not None
                    model = chunk.model or model
                    usage = chunk.usage or usage
                    for choice in chunk.choices:
                        if choice.index != 0:
                            continue
                        answered = True
                        finish = choice.finish_reason or finish
                        delta = choice.delta
                        if delta is None:
                            continue
                        refused = refused or bool(getattr(delta, "refusal", None))
                        if delta.content:
                            raw += delta.content
                            showing.add(raw)
                        if _has_words(delta):
                            heard_at = time.monotonic()
        except TimeoutError:
            if reader.shown(raw).strip():
                raise CutShort(STOPPED_MID_STORY) from None
            raise StorytellerError(STORYTELLER_TIMEOUT, "no words before the timeout") from None
        except (openai.APIError, ValueError) as error:  # ValueError: a chunk that is not JSON
            if isinstance(error, openai.APIConnectionError) and reader.shown(raw).strip():
                raise CutShort(STOPPED_MID_STORY) from None  # the connection closed mid-story
            if streaming and isinstance(error, openai.APIConnectionError) and not isinstance(
                    error, openai.APITimeoutError):  # closed under the stream, before a word
                raise CutShort(STOPPED_BEFORE_WORDS) from None
            raise provider_error(error) from None
        finally:  # the words kept are every word that came
            showing.flush()

        if refused or finish == "content_filter":
            raise StorytellerError(DECLINED, f"refused, finish reason {finish}")
        if not finish and not reported and not reader.shown(raw).strip():
            # It ended before its first word and never said it was done: a cut (another
            # request took the server's slot), not an empty answer.
            raise CutShort(STOPPED_BEFORE_WORDS)
        if not answered:
            raise StorytellerError(STORYTELLER_EMPTY, "no choices in the answer")
        ending = (Ending.CAPPED if reader.past_cap(raw) else Ending.LENGTH if finish == "length"
                  else Ending.STOP if finish else Ending.NONE)
        return reader.story(
            raw, ending=ending, model=model or self.model,
            # as reported, whatever it is: the meter reads it (app/money/meter.py)
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
        )

    def _not_found(self, error: Exception, job_id: int) -> StorytellerError:
        """A 404 from the create: the model is gone (said on the home page), or the URL."""
        if is_model_not_found(error, self.model):
            self.availability.mark_gone(seen_by=f"job {job_id}")
            return StorytellerError(MODEL_UNAVAILABLE, model_gone_detail(self.model))
        return provider_error(error)


def _has_words(delta: Any) -> bool:
    """Whether a delta brings words: text, a refusal, or the model's reasoning (llama.cpp's
    and DeepSeek's `reasoning_content`, others' `reasoning`). An empty, whitespace or
    role-only delta brings none: a keep-alive, which moves no silence clock."""
    return any(isinstance(text, str) and text.strip() for text in (
        delta.content, getattr(delta, "refusal", None),
        getattr(delta, "reasoning_content", None), getattr(delta, "reasoning", None)))


def _is_whole(response: Any) -> bool:
    """Whether the server answered the streamed request with one JSON body: its whole
    answer at once (a server that does not stream), not server-sent events."""
    kind = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    return kind.endswith("json")


async def _whole_answer(stream: Any) -> AsyncIterator[Any]:
    """A whole `chat.completion` (read with the limit every body has), as the one chunk of
    a stream: each choice's message its delta, its finish reason, usage and model kept, so
    the same loop reads it to the same rules. Nothing is sent again."""
    import httpx2 as httpx
    import openai
    from openai.types.chat import ChatCompletionChunk

    response = stream.response
    try:
        body = await response.aread()
    except httpx.TimeoutException as error:  # as the library says it of a stream
        raise openai.APITimeoutError(request=response.request) from error
    except httpx.RequestError as error:
        raise openai.APIConnectionError(request=response.request) from error
    answer = json.loads(body)  # ValueError: an unreadable answer
    if not isinstance(answer, dict):
        raise ValueError("the answer is not a chat.completion")
    choices = answer.get("choices")
    yield ChatCompletionChunk.construct(**{**answer, "choices": [
        {"index": choice.get("index", 0), "finish_reason": choice.get("finish_reason"),
         "delta": choice["message"] if isinstance(choice.get("message"), dict) else {}}
        for choice in (choices if isinstance(choices, list) else [])
        if isinstance(choice, dict)]})


def provider_error(error: Exception) -> StorytellerError:
    """Why the provider call went wrong, as a Failure (its status is the log's detail)."""
    trouble, detail = trouble_of(error)
    return StorytellerError(FAILURES[trouble].story, detail)

