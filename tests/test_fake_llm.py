"""The fake LLM's Responses API (background mode) and chat streams, driven by the real
`openai` client over real HTTP: what the fake sends must parse into the SDK's typed models
(strictly validated here), and behave as OpenAI's does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import openai
import pytest
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseTextDeltaEvent,
)

from tests.helpers.fake_llm import LENGTH_STORY, REPLAYS, FakeLLM

pytestmark = pytest.mark.anyio

STORY = "The Brave Otter\n\nOnce upon a time an otter swam under the bright moon. Goodnight."
WRITTEN = [  # every event of a plain text answer, in OpenAI's order
    "response.created", "response.in_progress", "response.output_item.added",
    "response.content_part.added", "response.output_text.done", "response.content_part.done",
    "response.output_item.done", "response.completed",
]
DELTA = "response.output_text.delta"


@pytest.fixture
async def llm(fake_llm: FakeLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=fake_llm.url, api_key="x", max_retries=0,
                                _strict_response_validation=True)
    async with client:
        yield client


def job(job_id: int) -> dict[str, str]:
    return {"X-Story-Job-Id": str(job_id)}


async def create(llm: openai.AsyncOpenAI, job_id: int, **options: object):
    options.setdefault("background", True)
    return await llm.responses.create(model="fake-model", input="a brave otter",
                                      metadata={"job_id": str(job_id)},
                                      extra_headers=job(job_id), **options)


async def read_stream(llm: openai.AsyncOpenAI, response_id: str, **options: object) -> list:
    stream = await llm.responses.retrieve(response_id, stream=True, **options)
    return [event async for event in stream]


async def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def text_of(events: list) -> str:
    return "".join(event.delta for event in events if event.type == DELTA)


def written_text(fake: FakeLLM, response_id: str) -> str:
    output = fake.response(response_id)["output"]
    return "".join(part.get("text", "") for item in output for part in item["content"])


@pytest.mark.slow
async def test_a_background_create_answers_at_once_and_counts_apart(fake_llm, llm):
    fake_llm.hold()
    # The story is held until the end of this test: a create that waited for it to be
    # written would never answer (wait_for fails it), however busy the machine.
    response = await asyncio.wait_for(create(llm, 7), timeout=30)
    assert response.id.startswith("resp_")
    assert response.status in ("queued", "in_progress")
    assert response.background is True
    assert response.metadata == {"job_id": "7"}
    assert response.output == []
    assert fake_llm.response_ids_for(7) == [response.id]
    assert fake_llm.requests[-1]["api"] == "responses"
    assert fake_llm.requests[-1]["body"]["background"] is True

    held = fake_llm.wait_for_status(response.id, "in_progress")
    assert held["output"] == []  # held: not a word yet
    assert (await llm.responses.retrieve(response.id, extra_headers=job(7))).status == \
        "in_progress"
    assert (await llm.responses.cancel(response.id, extra_headers=job(7))).status == \
        "cancelled"
    assert (fake_llm.calls_for(7), fake_llm.creates_for(7)) == (1, 1)
    assert (fake_llm.retrieves_for(7), fake_llm.cancels_for(7)) == (1, 1)
    assert fake_llm.total_calls == 1


async def test_a_streamed_retrieve_parses_into_typed_events(fake_llm, llm):
    fake_llm.story = STORY
    response = await create(llm, 8)
    events = await read_stream(llm, response.id)  # no header: counted by metadata.job_id

    assert [e.type for e in events if e.type != DELTA] == WRITTEN
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert isinstance(events[0], ResponseCreatedEvent)
    assert events[0].response.id == response.id
    deltas = [e for e in events if e.type == DELTA]
    assert all(isinstance(e, ResponseTextDeltaEvent) for e in deltas)
    assert len(deltas) == 8  # two words a delta: 15 words
    completed = events[-1]
    assert isinstance(completed, ResponseCompletedEvent)
    assert completed.response.status == "completed"
    assert text_of(events) == completed.response.output_text == STORY
    assert completed.response.usage.input_tokens == 42
    assert completed.response.usage.output_tokens == 314
    assert completed.response.usage.total_tokens == 356
    assert fake_llm.retrieves_for(8) == 1
    assert fake_llm.calls_for(8) == 1


async def test_the_echo_finds_the_prompt_in_any_input_form(fake_llm, llm):
    parts = [{"role": "user", "content": [{"type": "input_text", "text": "a sleepy whale"}]}]
    answer = await llm.responses.create(model="fake-model", input=parts, extra_headers=job(3))
    assert answer.status == "completed"  # without background: written, then answered
    assert answer.output_text.startswith("The Story of Job 3\n\n")
    assert answer.output_text.endswith("a gentle tale about: a sleepy whale")

    text = await llm.responses.create(model="fake-model", input="a tiny fox",
                                      instructions="Write gently.", extra_headers=job(3))
    assert text.output_text.endswith("about: a tiny fox")
    told = await llm.responses.create(model="fake-model", input=[],
                                      instructions="a kind owl", extra_headers=job(3))
    assert told.output_text.endswith("about: a kind owl")
    chat = await llm.chat.completions.create(model="fake-model", extra_headers=job(3),
                                             messages=[{"role": "user", "content": "a mole"}])
    assert chat.choices[0].message.content.endswith("about: a mole")
    assert [r["api"] for r in fake_llm.requests] == ["responses"] * 3 + ["chat"]
    assert fake_llm.calls_for(3) == 4


async def test_starting_after_gives_only_the_later_events(fake_llm, llm):
    fake_llm.story = STORY
    response = await create(llm, 9)
    fake_llm.wait_for_status(response.id, "completed")
    whole = await read_stream(llm, response.id, extra_headers=job(9))
    cursor = 6
    rest = await read_stream(llm, response.id, starting_after=cursor, extra_headers=job(9))
    assert [e.sequence_number for e in rest] == list(range(cursor + 1, len(whole)))
    assert text_of(whole[:cursor + 1]) + text_of(rest) == text_of(whole) == STORY
    assert 0 < len(text_of(whole[:cursor + 1])) < len(STORY)
    assert fake_llm.retrieves_for(9) == 2


async def test_the_writing_goes_on_with_no_client_attached(fake_llm, llm):
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.01
    response = await create(llm, 10)
    assert fake_llm.response(response.id)["status"] in ("queued", "in_progress")
    fake_llm.wait_for_status(response.id, "completed")
    done = await llm.responses.retrieve(response.id)
    assert done.status == "completed"
    assert done.output_text == STORY
    assert done.completed_at is not None
    assert fake_llm.retrieves_for(10) == 1


async def test_length_ends_incomplete(fake_llm, llm):
    fake_llm.mode = "length"
    response = await create(llm, 11)
    events = await read_stream(llm, response.id)
    assert events[-1].type == "response.incomplete"
    final = await llm.responses.retrieve(response.id)
    assert final.status == "incomplete"
    assert final.incomplete_details.reason == "max_output_tokens"
    assert final.output_text == text_of(events) == LENGTH_STORY


async def test_failed_ends_failed(fake_llm, llm):
    fake_llm.mode = "failed"
    response = await create(llm, 12)
    events = await read_stream(llm, response.id)
    assert events[-1].type == "response.failed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = await llm.responses.retrieve(response.id)
    assert final.status == "failed"
    assert final.error.code == "server_error"
    assert final.error.message


async def test_a_refusal_is_a_refusal_part(fake_llm, llm):
    fake_llm.mode = "refusal"
    response = await create(llm, 13)
    events = await read_stream(llm, response.id)
    kinds = [e.type for e in events]
    assert "response.refusal.delta" in kinds and "response.refusal.done" in kinds
    assert DELTA not in kinds
    final = events[-1].response
    assert final.status == "completed"
    assert final.output[0].content[0].type == "refusal"
    assert final.output[0].content[0].refusal == "I can't help with that."
    assert final.output_text == ""


async def test_error_modes_answer_the_create_and_count(fake_llm, llm):
    fake_llm.mode = "500"
    with pytest.raises(openai.InternalServerError):
        await create(llm, 14)
    fake_llm.mode = "429"
    with pytest.raises(openai.RateLimitError):
        await create(llm, 14)
    assert fake_llm.calls_for(14) == fake_llm.creates_for(14) == 2
    assert fake_llm.response_ids_for(14) == []


async def test_a_cancel_stops_the_writing_at_once(fake_llm, llm):
    fake_llm.story = STORY
    fake_llm.hold_after_chunks = 2
    fake_llm.hold()
    response = await create(llm, 15)
    await until(lambda: len(written_text(fake_llm, response.id).split()) == 4)
    cancelled = await llm.responses.cancel(response.id, extra_headers=job(15))
    assert cancelled.status == "cancelled"
    so_far = written_text(fake_llm, response.id)
    events_so_far = await read_stream(llm, response.id)  # ends: no terminal event
    fake_llm.release()
    await asyncio.sleep(0.1)
    assert written_text(fake_llm, response.id) == so_far == "The Brave Otter\n\nOnce "
    assert events_so_far[-1].type == DELTA
    assert await read_stream(llm, response.id) == events_so_far
    again = await llm.responses.cancel(response.id)  # idempotent, counted by metadata
    assert again.status == "cancelled"
    assert fake_llm.cancels_for(15) == 2

    finished = await create(llm, 16)
    fake_llm.wait_for_status(finished.id, "completed")
    assert (await llm.responses.cancel(finished.id)).status == "completed"


async def test_a_forgotten_response_is_not_found(fake_llm, llm):
    fake_llm.hold()
    response = await create(llm, 17)
    fake_llm.forget(response.id)
    with pytest.raises(openai.NotFoundError) as retrieved:
        await llm.responses.retrieve(response.id, extra_headers=job(17))
    assert response.id in retrieved.value.message
    with pytest.raises(openai.NotFoundError):
        await llm.responses.cancel(response.id, extra_headers=job(17))
    with pytest.raises(openai.NotFoundError):
        await llm.responses.retrieve("resp_unknown", stream=True)
    with pytest.raises(KeyError):
        fake_llm.response(response.id)
    assert fake_llm.response_ids_for(17) == [response.id]
    assert (fake_llm.retrieves_for(17), fake_llm.cancels_for(17)) == (1, 1)

    other = await create(llm, 18)
    fake_llm.forget_all()
    with pytest.raises(openai.NotFoundError):
        await llm.responses.retrieve(other.id)


async def test_a_server_without_the_api_answers_404(fake_llm, llm):
    fake_llm.responses_api = False
    with pytest.raises(openai.NotFoundError):
        await create(llm, 19)
    assert fake_llm.calls_for(19) == 0


@pytest.mark.slow
async def test_a_dropped_stream_resumes_with_starting_after(fake_llm, llm):
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.01
    fake_llm.drop_stream_after_events = 4
    response = await create(llm, 20)
    received: list = []
    cuts = 0
    for _attempt in range(10):
        options = {"starting_after": received[-1].sequence_number} if received else {}
        stream = await llm.responses.retrieve(response.id, stream=True, **options)
        got = []
        try:
            async for event in stream:
                got.append(event)
        except openai.APIConnectionError:
            cuts += 1  # the cut, as the SDK sees it
        assert len(got) <= 4
        received += got
        if received and received[-1].type == "response.completed":
            break
    assert [e.sequence_number for e in received] == list(range(len(received)))
    assert [e.type for e in received if e.type != DELTA] == WRITTEN
    assert text_of(received) == STORY
    retrieves = fake_llm.retrieves_for(20)
    assert retrieves == -(-len(received) // 4)  # one a four events
    assert cuts == retrieves - 1  # every stream but the last was cut
    assert fake_llm.calls_for(20) == 1


async def test_a_held_create_is_written_before_it_is_answered(fake_llm, llm):
    fake_llm.story = STORY
    fake_llm.hold_create()
    answer = asyncio.create_task(create(llm, 21))
    await until(lambda: fake_llm.response_ids_for(21) != [])
    [response_id] = fake_llm.response_ids_for(21)
    fake_llm.wait_for_status(response_id, "completed")
    await asyncio.sleep(0.05)
    assert not answer.done()
    assert fake_llm.creates_for(21) == 1
    fake_llm.release_create()
    response = await answer
    assert response.id == response_id
    assert response.status == "queued"  # the answer as the provider made it, late
    assert written_text(fake_llm, response_id) == STORY


@pytest.mark.slow
async def test_a_chat_stream_left_early_is_recorded(fake_llm, llm):
    fake_llm.story = STORY
    fake_llm.chunk_delay_s = 0.05
    messages = [{"role": "user", "content": "an otter"}]
    left = await llm.chat.completions.create(model="fake-model", messages=messages,
                                             stream=True, extra_headers=job(22))
    chunks = [await left.__anext__() for _ in range(2)]
    assert chunks[1].choices[0].delta.content == "The Brave "
    await left.close()
    fake_llm.wait_for_chat_closed(22, timeout_s=5)

    read = await llm.chat.completions.create(model="fake-model", messages=messages,
                                             stream=True, extra_headers=job(23))
    text = "".join([c.choices[0].delta.content or "" async for c in read if c.choices])
    assert text == STORY
    await asyncio.sleep(0.1)
    assert fake_llm.chat_closed_early == {"22"}
    with pytest.raises(TimeoutError):
        fake_llm.wait_for_chat_closed(23, timeout_s=0.1)


async def test_reset_forgets_the_responses(fake_llm, llm):
    fake_llm.hold()
    response = await create(llm, 24)
    fake_llm.reset()
    assert fake_llm.in_flight == 0
    assert (fake_llm.calls_for(24), fake_llm.response_ids_for(24)) == (0, [])
    with pytest.raises(openai.NotFoundError):
        await llm.responses.retrieve(response.id)


# -- models, and what a model refuses before any word -------------------------------------


async def test_a_model_is_retrieved_and_a_retired_one_is_not_found_as_openai_says(fake_llm, llm):
    fake_llm.retired_models = {"gpt-4o-mini"}
    model = await llm.models.retrieve("gpt-6-luna")
    assert model.id == "gpt-6-luna"
    with pytest.raises(openai.NotFoundError) as gone:
        await llm.models.retrieve("gpt-4o-mini")
    assert gone.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError) as create_gone:
        await llm.responses.create(model="gpt-4o-mini", input="an owl", background=True,
                                   extra_headers=job(30))
    assert create_gone.value.code == "model_not_found"
    assert fake_llm.model_lookups == ["gpt-6-luna", "gpt-4o-mini"]
    assert (fake_llm.calls_for(30), fake_llm.unbilled_for(30)) == (0, 1)


async def test_a_model_s_shutdown_date_is_in_its_answer_as_sent(fake_llm, llm):
    fake_llm.shutdown_dates = {"gpt-5-mini": "2026-12-11", "o3": 1796990400}
    assert (await llm.models.retrieve("gpt-5-mini")).shutdown_date == "2026-12-11"
    assert (await llm.models.retrieve("gpt-6-luna")).shutdown_date is None
    # A timestamp is not the library's schema (a string), yet a server may send one: the
    # app's client (not strict, as the library's default) hands it over as sent.
    async with openai.AsyncOpenAI(base_url=fake_llm.url, api_key="x", max_retries=0) as lenient:
        assert (await lenient.models.retrieve("o3")).shutdown_date == 1796990400
    fake_llm.reset()
    assert fake_llm.shutdown_dates == {}


async def test_a_refused_parameter_is_openais_400_and_not_billed(fake_llm, llm):
    fake_llm.refuse("gpt-6-luna", "max_tokens", "temperature")
    messages = [{"role": "user", "content": "an owl"}]
    with pytest.raises(openai.BadRequestError) as refused:
        await llm.chat.completions.create(model="gpt-6-luna", messages=messages, max_tokens=9,
                                          extra_headers=job(31))
    assert (refused.value.param, refused.value.code) == ("max_tokens", "unsupported_parameter")
    assert "Use 'max_completion_tokens' instead" in refused.value.message
    with pytest.raises(openai.BadRequestError) as refused:
        await llm.chat.completions.create(model="gpt-6-luna", messages=messages,
                                          temperature=0.8, extra_headers=job(31))
    assert (refused.value.param, refused.value.code) == ("temperature", "unsupported_value")
    assert "does not support 0.8" in refused.value.message
    await llm.chat.completions.create(model="gpt-6-luna", messages=messages, temperature=1,
                                      max_completion_tokens=9, extra_headers=job(31))
    assert (fake_llm.unbilled_for(31), fake_llm.calls_for(31)) == (2, 1)


@pytest.mark.parametrize("recording", sorted(path.stem for path in REPLAYS.glob("*.sse")))
async def test_a_recorded_stream_is_replayed_byte_for_byte(fake_llm, recording):
    """Any recording in tests/fixtures/llama_cpp/ comes back as it was recorded."""
    import httpx

    fake_llm.replay = recording
    body = {"model": "fake-model", "stream": True,
            "messages": [{"role": "user", "content": "a star"}]}
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{fake_llm.url}/chat/completions", json=body)
    assert answer.content == (REPLAYS / f"{recording}.sse").read_bytes()
    assert fake_llm.total_calls == 1


async def test_a_model_that_ignores_max_completion_tokens_honours_max_tokens(fake_llm, llm):
    fake_llm.mode = "ignores_cap"
    messages = [{"role": "user", "content": "a star"}]
    stream = await llm.chat.completions.create(model="fake-model", messages=messages,
                                               stream=True, max_tokens=50,
                                               max_completion_tokens=10)
    text, finish = "", None
    async for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    assert finish == "length" and 50 <= len(text.split()) <= 54
