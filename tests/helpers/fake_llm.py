"""A fake OpenAI-compatible server, over real HTTP, that counts calls per job.

    with FakeLLM() as fake:                 # serves on 127.0.0.1:<free port>
        fake.url                            # OPENAI_BASE_URL for the app
        fake.mode = "500"                   # or "ok", "429", "malformed", "empty", "refusal",
                                            # "no_choices", "nul", "surrogate", "length",
                                            # "failed" (Responses API only), and how small
                                            # local models misbehave (both APIs unless said):
                                            # "ignores_cap" (honours max_tokens only, else
                                            # writes on and on), "no_finish" ([DONE], no
                                            # finish reason; chat), "closed_early" (the
                                            # connection closed before it; chat),
                                            # "single_breaks", "paragraph_title",
                                            # "labelled_title", "echoed_markup"; and the
                                            # stream shapes below
        fake.replay = "no_finish_reason"    # chat streams answer with the recorded body of
                                            # tests/fixtures/llama_cpp/no_finish_reason.sse,
                                            # verbatim (paced by chunk_delay_s, hold_after_chunks)
        fake.hold()                         # answers wait until fake.release()
        fake.hold_after_chunks = 3          # ... or stream 3 chunks first, then wait
                                            # (silence, its connection open)
        fake.chunk_delay_s = 0.2            # a streamed answer's pace (slow but steady)
        fake.calls_for(17)                  # billed requests (chat + Responses creates) that
                                            # carried X-Story-Job-Id: 17
        fake.story = "Title\n\nBody"        # answer with this text instead of the echo
        fake.usage = {"prompt_tokens": -5}  # report this usage block (both APIs; as sent:
                                            # any JSON, hostile numbers included)
        fake.moderation_inputs              # texts sent to /v1/moderations; any text
                                            # containing FLAG_WORD comes back flagged
        fake.moderation_down = True         # /v1/moderations answers 500
        fake.moderation_delay_s = 2.0       # /v1/moderations takes this long to answer
        fake.moderations_api = False        # a server without it: 404 "Invalid URL"
        fake.chat_closed_early              # job ids whose chat stream the client left
        fake.wait_for_chat_closed(17)       # ... block until job 17's is among them

Streams that bring no words, or not as a stream should (after the role delta a chat stream
opens with; a keep-alive comes every KEEPALIVE_EVERY_S, or chunk_delay_s, until the client
leaves or the response is stopped):

        fake.mode = "empty_deltas"          # `{"content": ""}` deltas; Responses API: text
                                            # deltas with `"delta": ""`
        fake.mode = "role_deltas"           # `{"role": "assistant"}` deltas; Responses API:
                                            # `keepalive` events
        fake.mode = "keepalive_after_words" # KEEPALIVE_AFTER_CHUNKS chunks of words, then
                                            # empty deltas; Responses API: empty text deltas
                                            # and `keepalive` events in turn
        fake.mode = "closed_before_words"   # the connection closed (chat)
        fake.mode = "done_before_words"     # `[DONE]`: no finish reason, no usage, as a
                                            # one-slot server ends a stream for another (chat)
        fake.mode = "whole_answer"          # a `"stream": true` request answered with one
                                            # `chat.completion` JSON body, finish reason and
                                            # usage and all (chat; counted once, as any call)

Models and what they refuse, answered before any word and never billed (not in `calls`):

        GET  /v1/models/{model}             # 200 the model; 404 model_not_found if retired
        fake.retired_models = {"gpt-4o-mini"}   # ... and creates with it answer that 404 too
        fake.models_api = False             # a server without GET /models/{id}: plain 404
        fake.shutdown_dates = {"fake-model": "2026-12-11"}   # its `shutdown_date`, as sent
                                            # (an ISO date, a Unix timestamp, or anything)
        fake.model_lookups                  # the models asked for, in order
        fake.refuse("gpt-6-luna", "max_tokens", "temperature")   # OpenAI's 400s for those
        fake.refuse_max_completion_tokens = True   # an older server: 400 naming it, no code
        fake.unbilled_for(17)               # requests for job 17 answered with one of these
        fake.unbilled_requests              # their bodies: {"job_id", "body", "api", "status"}

The Responses API in background mode, as OpenAI runs it:

        POST /v1/responses                  # a create: counted in calls and creates;
                                            # background=true answers at once (queued)
                                            # while the fake writes on in its own loop
        GET  /v1/responses/{id}             # a retrieve: the object so far; ?stream=true
                                            # [&starting_after=N] replays events > N, then
                                            # follows live to the terminal event
        POST /v1/responses/{id}/cancel      # stops the writing; status "cancelled"
        fake.responses_api = False          # a server without the API: creates answer 404
        fake.retired_while_writing = {"m"}  # creates with model m go, but its responses'
                                            # retrieves answer 404 model_not_found (retired
                                            # while the story is written)
        fake.creates_for(17), fake.retrieves_for(17), fake.cancels_for(17)
        fake.drop_stream_after_events = 5   # each streamed retrieve is cut after 5 events
        fake.hold_create()                  # creates start writing but their answers wait
        fake.release_create()               # ... until this
        fake.response_ids_for(17)           # ids created for job 17, oldest first
        fake.response(response_id)          # its object as it stands (status, output)
        fake.wait_for_status(response_id, "completed")
        fake.forget(response_id)            # the provider lost it: 404 from now on
        fake.retrieve_status = 401          # retrieves refused (a key revoked meanwhile);
                                            # the response is written on all the same
        fake.forget_all()
        fake.stream_window_s = 1.0          # a streamed retrieve of a response older than
                                            # this gets OpenAI's 400 (it streams only 5 min)
        fake.backdate(response_id, 360)     # the response was created 6 minutes earlier
        fake.silent_stream_after_events = 3 # each streamed retrieve sends 3 events, then
                                            # nothing, its connection open, while the
                                            # response goes on to its end
        fake.malformed_final_event = True   # the terminal event's message has content: null
                                            # (a plain retrieve still has it whole)
        fake.null_deltas = True             # text delta events carry "delta": null

Responses events carry sequence_number from 0 (response.created), as OpenAI's do; a stream
ends after its terminal event (response.completed / .incomplete / .failed) with no
`data: [DONE]`, and a cancelled (or forgotten) response's stream just ends, with no terminal
event. Retrieves and cancels count for the X-Story-Job-Id header, else the response's
metadata["job_id"], else "none". delay_s, hold(), hold_after_chunks and chunk_delay_s pace
the Responses writing exactly as they pace a chat stream. In the Responses API, "length" ends
`incomplete` (max_output_tokens), "failed" writes the text then ends `failed` (server_error),
"refusal" writes a refusal part, "no_choices" completes with no output, "malformed" answers
the create with garbage; in_flight counts the responses being written.

Pictures: `POST /v1/images/generations`, its own counts and modes (fake.images, a
FakeImages: tests/helpers/fake_images.py). Voices: `POST /v1/audio/speech` and chat
completions asked for audio, their own counts and modes (fake.audio, a FakeAudio:
tests/helpers/fake_audio.py).

It runs uvicorn in a thread with its own event loop, so it keeps answering while a test's
own loop is blocked on a database lock.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import secrets
import socket
import threading
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tests.helpers.fake_audio import FakeAudio
from tests.helpers.fake_images import FakeImages
from tests.helpers.waits import WAIT_S

FLAG_WORD = "grimbleflag"  # a made-up word the fake moderation endpoint flags
MODES = ("ok", "500", "429", "malformed", "empty", "refusal", "no_choices", "nul", "surrogate",
         "length", "failed", *tuple("ignores_cap no_finish closed_early single_breaks "
                                    "paragraph_title labelled_title echoed_markup".split()),
         *tuple("empty_deltas role_deltas keepalive_after_words closed_before_words "
                "done_before_words whole_answer".split()))
# The modes that bring no words: a keep-alive every this long (or chunk_delay_s), for at
# most KEEPALIVE_FOR_S; "keepalive_after_words" sends this many chunks of words first.
KEEPALIVE_EVERY_S = 0.5
KEEPALIVE_FOR_S = 120.0
KEEPALIVE_AFTER_CHUNKS = 3
# Recorded raw SSE bodies of streamed /chat/completions answers, replayed verbatim by name.
REPLAYS = Path(__file__).resolve().parent.parent / "fixtures" / "llama_cpp"
# What the model "writes" in the modes that test its output (sent JSON-escaped, as a real
# server would: `\u0000`, `\ud800`).
NUL_STORY = ("The Night\x00 Light\r\n\r\nOnce upon a time\x00 a lamp \x1b[0mglowed.\x07\n"
             "\tIt hummed\x7f softly.\x0b The end.")
SURROGATE_STORY = "The Moon \ud83d Boat\n\nA boat sailed \udc00 to the moon. Goodnight."
LENGTH_STORY = ("The Long Night\n\nOnce upon a time there was a sleepy fox. "
                "She curled up by the fire! \"Goodnight,\" said the owl.\n\n"
                "Then the fox dreamed of a meadow where the")

# How small local models misbehave (the modes of the same names).
SINGLE_BREAKS_STORY = ("The Sleepy Owl\nOnce upon a time an owl yawned in her tree.\n"
                       "She blinked at the round moon.\nThen she slept. Goodnight.")
PARAGRAPH_TITLE_STORY = ("Once upon a time, in a valley full of soft green hills and quiet "
                         "streams, a small fox named Pip lay awake and counted the stars.\n\n"
                         "She yawned at last. Goodnight.")
LABELLED_TITLE_STORY = ("The story's title is: The Sleepy Owl\n\nOnce upon a time an owl "
                        "yawned. Goodnight.")
ECHOED_MARKUP_STORY = ("<idea>a sleepy owl</idea>\nThe Sleepy Owl\n\nUse simple words and "
                       "sentences that suit a young child.\nOnce upon a time <name>Mia</name> "
                       "met an owl.\n\nThey slept. Goodnight.")
# "ignores_cap": a model that writes on and on, this sentence over and over.
ON_AND_ON = "The little fox yawned once more and looked at the stars. "
ENDLESS_WORDS = 50_000

# A Responses object in one of these states is done: nothing more is written to it.
TERMINAL = frozenset({"completed", "incomplete", "failed", "cancelled"})
RESPONSES_USAGE = {"input_tokens": 42, "input_tokens_details": {"cached_tokens": 0,
                                                                "cache_write_tokens": 0},
                   "output_tokens": 314, "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": 356}
FAILED_MESSAGE = "The server had an error while processing your request."
# OpenAI's 400s for a parameter (or value) the model does not take.
UNSUPPORTED = {
    "max_tokens": ("unsupported_parameter", "Unsupported parameter: 'max_tokens' is not "
                   "supported with this model. Use 'max_completion_tokens' instead."),
    "temperature": ("unsupported_value", "Unsupported value: 'temperature' does not support "
                    "{value} with this model. Only the default (1) value is supported."),
}
TOO_OLD_TO_STREAM = ("This response can no longer be streamed because it is more than 5 minutes"
                     " old.")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _json(obj: object, status: int = 200) -> Response:
    """JSON escaped as OpenAI sends it: Starlette's JSONResponse can't encode a lone
    surrogate."""
    return Response(json.dumps(obj), status, media_type="application/json")


def _error(status: int, message: str, kind: str = "invalid_request_error") -> Response:
    return _json({"error": {"message": message, "type": kind, "param": None, "code": None}},
                 status)


def _wrong_method() -> Response:
    return _error(405, "Method Not Allowed")


class _Stopped(Exception):
    """The response was cancelled or forgotten: its writing ends here."""


@dataclass
class _Stored:
    """A Responses API response the fake keeps: its object and every event written so far."""

    object: dict
    job_id: str
    body: dict
    events: list[tuple[str, str]] = field(default_factory=list)  # (type, JSON data)
    stopped: bool = False  # cancelled or forgotten: no more events
    in_flight: bool = False
    task: asyncio.Task | None = None
    born_s: float = field(default_factory=time.monotonic)  # for the stream window


class _WatchedStream(StreamingResponse):
    """A stream that reports a client who left before the last event was sent."""

    def __init__(self, events: AsyncIterator[bytes], left_early: Callable[[], None]) -> None:
        self._finished = False
        self._left_early = left_early

        async def watched() -> AsyncIterator[bytes]:
            async for chunk in events:
                yield chunk
            self._finished = True  # the last chunk went out: Starlette asked for another

        super().__init__(watched(), media_type="text/event-stream")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if not self._finished:
                self._left_early()


class FakeLLM:
    def __init__(self) -> None:
        self.mode = "ok"
        self.delay_s = 0.0
        self.chunk_delay_s = 0.0
        self.hold_after_chunks: int | None = None
        self.calls: Counter[str] = Counter()
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.story: str | None = None
        self.replay: str | None = None  # a file in REPLAYS (no suffix): chat answers with it
        self.moderation_inputs: list[str] = []
        self.moderation_down = False
        self.moderation_delay_s = 0.0
        self.moderations_api = True
        self.probes: list[str] = []  # GETs of POST-only routes (the start-up check)
        self.chat_closed_early: set[str] = set()
        # Models, and the requests refused before the model saw them (not billed)
        self.retired_models: set[str] = set()
        self.models_api = True
        self.shutdown_dates: dict[str, object] = {}
        self.model_lookups: list[str] = []
        self.refused_parameters: defaultdict[str, set[str]] = defaultdict(set)
        self.refuse_max_completion_tokens = False
        self.unbilled: Counter[str] = Counter()
        self.unbilled_requests: list[dict] = []
        # The Responses API
        self.responses_api = True
        self.retired_while_writing: set[str] = set()
        self.creates: Counter[str] = Counter()
        self.retrieves: Counter[str] = Counter()
        self.cancels: Counter[str] = Counter()
        self.drop_stream_after_events: int | None = None
        self.stream_window_s: float | None = None
        self.silent_stream_after_events: int | None = None
        self.malformed_final_event = False
        self.null_deltas = False
        self.report_usage = True  # False: a server that reports no usage (a local one)
        # The usage block to report instead of the true one (a hostile provider's numbers:
        # {"prompt_tokens": -5}, 1e300, "many", 10**18), on both APIs.
        self.usage: object = None
        self.retrieve_status: int | None = None  # 401/403: the key refused for retrieves
        self.images = FakeImages()
        self.audio = FakeAudio()
        self._responses: dict[str, _Stored] = {}
        self._ids_by_job: defaultdict[str, list[str]] = defaultdict(list)
        self._lock = threading.Lock()
        self._gate = threading.Event()
        self._gate.set()
        self._create_gate = threading.Event()
        self._create_gate.set()
        self._arrived = threading.Condition()  # notified on every call and state change
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        app = Starlette(routes=[
            Route("/v1/chat/completions", self._complete, methods=["POST"]),
            Route("/v1/moderations", self._moderate, methods=["POST"]),
            Route("/v1/images/generations", self.images.generate, methods=["POST"]),
            Route("/v1/audio/speech", self.audio.speech, methods=["POST"]),
            Route("/v1/models/{model:path}", self._retrieve_model, methods=["GET"]),
            Route("/v1/responses", self._create_response, methods=["POST"]),
            Route("/v1/responses/{response_id}", self._retrieve_response, methods=["GET"]),
            Route("/v1/responses/{response_id}/cancel", self._cancel_response,
                  methods=["POST"]),
            # A GET of a POST-only route (the app's start-up check): 405 where the server
            # has the route, 404 where it has none, as real servers answer it.
            Route("/v1/{endpoint:path}", self._probe, methods=["GET"]),
        ])
        # At exit, a client's kept-alive stream is not waited for: the tests are over.
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off", timeout_graceful_shutdown=0.5)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    # -- control -------------------------------------------------------------------------

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("fake LLM did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.forget_all()
        self._gate.set()
        self._create_gate.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def reset(self) -> None:
        self.forget_all()  # a previous test's writing stops and leaves no trace
        self.images.reset()
        self.audio.reset()
        with self._lock:
            self.calls.clear()
            self.requests.clear()
            self.max_in_flight = 0
            self.moderation_inputs.clear()
            self.chat_closed_early.clear()
            self.creates.clear()
            self.retrieves.clear()
            self.cancels.clear()
            self._ids_by_job.clear()
            self.model_lookups.clear()
            self.unbilled.clear()
            self.unbilled_requests.clear()
        self.retired_models = set()
        self.models_api = True
        self.shutdown_dates = {}
        self.refused_parameters = defaultdict(set)
        self.refuse_max_completion_tokens = False
        self.story = None
        self.replay = None
        self.moderation_down = False
        self.moderation_delay_s = 0.0
        self.moderations_api = True
        self.probes = []
        self.mode = "ok"
        self.delay_s = 0.0
        self.chunk_delay_s = 0.0
        self.hold_after_chunks: int | None = None
        self.responses_api = True
        self.retired_while_writing = set()
        self.drop_stream_after_events = None
        self.stream_window_s = None
        self.silent_stream_after_events = None
        self.malformed_final_event = False
        self.null_deltas = False
        self.report_usage = True
        self.usage = None
        self.retrieve_status = None
        self._gate.set()
        self._create_gate.set()

    def hold(self) -> None:
        """Answers wait until release(): the test decides when the LLM 'finishes'."""
        self._gate.clear()

    def release(self) -> None:
        self._gate.set()

    def hold_create(self) -> None:
        """Creates are counted and their responses start being written, but the answers
        wait until release_create(): the provider has it, the client has no id yet."""
        self._create_gate.clear()

    def release_create(self) -> None:
        self._create_gate.set()

    def refuse(self, model: str, *parameters: str) -> None:
        """Requests for `model` carrying any of `parameters` get OpenAI's 400 for it
        (`temperature`: any value but the default, 1)."""
        self.refused_parameters[model].update(parameters)

    def unbilled_for(self, job_id: int) -> int:
        with self._lock:
            return self.unbilled[str(job_id)]

    def calls_for(self, job_id: int) -> int:
        with self._lock:
            return self.calls[str(job_id)]

    def creates_for(self, job_id: int) -> int:
        with self._lock:
            return self.creates[str(job_id)]

    def retrieves_for(self, job_id: int) -> int:
        with self._lock:
            return self.retrieves[str(job_id)]

    def cancels_for(self, job_id: int) -> int:
        with self._lock:
            return self.cancels[str(job_id)]

    @property
    def total_calls(self) -> int:
        with self._lock:
            return sum(self.calls.values())

    def wait_for_call(self, job_id: int, timeout_s: float = WAIT_S) -> None:
        """Block until a request for this job has arrived (it may still be held)."""
        self._wait(lambda: self.calls[str(job_id)] > 0, timeout_s, f"no LLM call for job {job_id}")

    def wait_for_chat_closed(self, job_id: int, timeout_s: float = WAIT_S) -> None:
        """Block until the client has left this job's chat stream before its end."""
        self._wait(lambda: str(job_id) in self.chat_closed_early, timeout_s,
                   f"job {job_id}'s chat stream was not closed early")

    def response_ids_for(self, job_id: int) -> list[str]:
        """The ids of the responses created for this job (by X-Story-Job-Id or
        metadata["job_id"]), oldest first, forgotten ones too."""
        with self._lock:
            return list(self._ids_by_job.get(str(job_id), []))

    def response(self, response_id: str) -> dict:
        """A copy of the response's object as it stands; KeyError once forgotten."""
        with self._lock:
            return copy.deepcopy(self._responses[response_id].object)

    def wait_for_status(self, response_id: str, status: str, timeout_s: float = WAIT_S) -> dict:
        """Block until the response has this status; its object then."""
        def reached() -> bool:
            return self._responses[response_id].object["status"] == status

        self._wait(reached, timeout_s, f"response {response_id} never became {status}")
        return self.response(response_id)

    def forget(self, response_id: str) -> None:
        """The provider no longer has this response: its writing stops, lookups answer 404."""
        with self._arrived:
            with self._lock:
                record = self._responses.pop(response_id, None)
                if record is not None:
                    self._stop(record)
            self._arrived.notify_all()

    def backdate(self, response_id: str, seconds: float) -> None:
        """The response was created `seconds` earlier than it was (its created_at, and its
        age for the stream window)."""
        with self._lock:
            record = self._responses[response_id]
            record.object["created_at"] -= int(seconds)
            record.born_s -= seconds

    def forget_all(self) -> None:
        with self._arrived:
            with self._lock:
                for record in self._responses.values():
                    self._stop(record)
                self._responses.clear()
            self._arrived.notify_all()

    def _wait(self, done: Callable[[], bool], timeout_s: float, message: str) -> None:
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while True:
                with self._lock:
                    if done():
                        return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(message)
                self._arrived.wait(remaining)

    # -- the chat endpoint ---------------------------------------------------------------

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        if "audio" in (body.get("modalities") or []):  # a narration part: the voices' own
            return await self.audio.chat(request, body)
        job_id = request.headers.get("x-story-job-id", "none")
        refused = self._refused_before_the_model(body, job_id, "chat")
        if refused is not None:
            return refused
        with self._arrived:
            with self._lock:
                self.calls[job_id] += 1
                self.requests.append({"job_id": job_id, "body": body,
                                      "headers": dict(request.headers), "api": "chat"})
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._arrived.notify_all()
        try:
            while not self._gate.is_set() and self.hold_after_chunks is None:
                await asyncio.sleep(0.01)  # held before answering at all
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            if body.get("stream") and self.replay is not None:
                return _WatchedStream(self._replayed(self.replay), lambda: self._chat_left(job_id))
            if body.get("stream") and self.mode == "whole_answer":  # a server that won't stream
                return self._answer(body, job_id)
            if body.get("stream"):
                return await self._stream(request, body, job_id)
            return self._answer(body, job_id)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _probe(self, request: Request) -> Response:
        endpoint = "/" + request.path_params["endpoint"]
        self.probes.append(endpoint)
        there = {"/moderations": self.moderations_api, "/responses": self.responses_api,
                 "/images/generations": self.images.mode != "no_route",
                 "/audio/speech": self.audio.mode != "no_route",
                 "/chat/completions": True}
        if not there.get(endpoint, False):
            return _error(404, f"Invalid URL (GET /v1{endpoint})")
        return _wrong_method()

    async def _moderate(self, request: Request) -> Response:
        if not self.moderations_api:
            return _error(404, "Invalid URL (POST /v1/moderations)")
        body = await request.json()
        if "input" not in body:  # an empty request (a start-up check): refused, not recorded
            return _error(400, "Missing required parameter: 'input'.")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        with self._lock:
            self.moderation_inputs.extend(texts)
        if self.moderation_delay_s:
            await asyncio.sleep(self.moderation_delay_s)
        if self.moderation_down:
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, 500)
        results = [{"flagged": FLAG_WORD in text.lower(), "categories": {},
                    "category_scores": {}} for text in texts]
        return JSONResponse({"id": "modr-fake", "model": "omni-moderation-latest",
                             "results": results})

    # -- models, and what is refused before any word ---------------------------------------

    async def _retrieve_model(self, request: Request) -> Response:
        model = request.path_params["model"]
        with self._lock:
            self.model_lookups.append(model)
        if not self.models_api:  # as a server without the route answers
            return Response("Not Found", 404, media_type="text/plain")
        if model in self.retired_models:
            return self._model_not_found(model)
        answer = {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
        if model in self.shutdown_dates:  # OpenAI's `Model.shutdown_date`, announced
            answer["shutdown_date"] = self.shutdown_dates[model]
        return _json(answer)

    @staticmethod
    def _model_not_found(model: str) -> Response:
        return _json({"error": {
            "message": f"The model '{model}' does not exist or you do not have access to it.",
            "type": "invalid_request_error", "param": None, "code": "model_not_found"}}, 404)

    def _refused_before_the_model(self, body: dict, job_id: str, api: str) -> Response | None:
        """A retired model's 404, or a 400 for a parameter the model does not take: answered
        before any word, so not billed (counted in `unbilled`, not in `calls`)."""
        model = body.get("model", "")
        answer = None
        if model in self.retired_models:
            answer = self._model_not_found(model)
        elif self.refuse_max_completion_tokens and "max_completion_tokens" in body:
            # An older server's words: no code, no param.
            answer = _error(400, "Unsupported parameter: max_completion_tokens")
        else:
            for parameter in sorted(self.refused_parameters.get(model, ())):
                if parameter not in body or (parameter == "temperature"
                                             and body[parameter] == 1):
                    continue
                code, message = UNSUPPORTED.get(
                    parameter, ("unsupported_parameter",
                                f"Unsupported parameter: '{parameter}' is not supported with "
                                "this model."))
                answer = _json({"error": {"message": message.format(value=body[parameter]),
                                          "type": "invalid_request_error", "param": parameter,
                                          "code": code}}, 400)
                break
        if answer is None:
            return None
        with self._arrived:
            with self._lock:
                self.unbilled[job_id] += 1
                self.unbilled_requests.append({"job_id": job_id, "body": body, "api": api,
                                               "status": answer.status_code})
            self._arrived.notify_all()
        return answer

    def _refusal(self) -> Response | None:
        """The answers that come before any story: an error status, or garbage."""
        if self.mode == "500":
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, 500)
        if self.mode == "429":
            return JSONResponse({"error": {"message": "slow down", "type": "rate_limit"}}, 429,
                                headers={"retry-after": "0"})
        return None

    @staticmethod
    def _prompt(body: dict) -> str:
        """The user's text: chat's last message, or the Responses `input` (a string or
        messages), else the Responses `instructions`."""
        def text_of(content: object) -> str:
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content
                               if isinstance(part, dict))
            return content if isinstance(content, str) else ""

        if "messages" in body:
            return text_of(body["messages"][-1]["content"])
        given = body.get("input")
        if isinstance(given, str) and given:
            return given
        if isinstance(given, list):
            messages = [item for item in given if isinstance(item, dict) and "content" in item]
            if messages and (text := text_of(messages[-1]["content"])):
                return text
        return text_of(body.get("instructions"))

    def _content(self, body: dict, job_id: str) -> tuple[str | None, str, str | None]:
        """(content, finish_reason, refusal) the "model" answers with in this mode."""
        mode = self.mode
        prompt = self._prompt(body)
        idea = re.search(r"<idea>(.*?)</idea>", prompt, re.DOTALL)  # the app's, else any
        content: str | None = f"The Story of Job {job_id}\n\nOnce upon a time, " \
                              f"a gentle tale about: {idea.group(1) if idea else prompt[-60:]}"
        if self.story is not None:
            content = self.story
        refusal = None
        finish = "stop"
        if mode == "empty":
            content = ""
        if mode == "nul":
            content = NUL_STORY
        if mode == "surrogate":
            content = SURROGATE_STORY
        if mode == "length":  # the token budget ran out mid-sentence
            content, finish = self.story or LENGTH_STORY, "length"
        if mode == "refusal":
            content, refusal = None, "I can't help with that."
        content = {"single_breaks": SINGLE_BREAKS_STORY, "paragraph_title": PARAGRAPH_TITLE_STORY,
                   "labelled_title": LABELLED_TITLE_STORY,
                   "echoed_markup": ECHOED_MARKUP_STORY}.get(mode, content)
        if mode == "ignores_cap":  # max_tokens honoured (not max_completion_tokens), or none
            cap = body.get("max_tokens") or ENDLESS_WORDS
            words = ("The Endless Night\n\n" + ON_AND_ON * (cap // 10 + 1)).split(" ")
            content, finish = " ".join(words[:cap + 3]), "length"
        return content, finish, refusal

    async def _replayed(self, name: str) -> AsyncIterator[bytes]:
        """A recorded body, verbatim, an event at a time, paced as `_stream` paces chunks."""
        recorded = (REPLAYS / f"{name}.sse").read_bytes()
        events = re.findall(rb".*?(?:\r?\n\r?\n|$)", recorded, re.DOTALL)
        for number, event in enumerate(event for event in events if event):
            if self.hold_after_chunks is not None and number > self.hold_after_chunks:
                while not self._gate.is_set():
                    await asyncio.sleep(0.01)
            if self.chunk_delay_s:
                await asyncio.sleep(self.chunk_delay_s)
            yield event

    def _answer(self, body: dict, job_id: str) -> Response:
        refused = self._refusal()
        if refused is not None:
            return refused
        if self.mode == "malformed":
            return Response("{not json", media_type="application/json")
        content, finish, refusal = self._content(body, job_id)
        choices = [{"index": 0, "finish_reason": finish,
                    "message": {"role": "assistant", "content": content, "refusal": refusal}}]
        if self.mode == "no_choices":
            choices = []
        return Response(json.dumps({
            "id": f"chatcmpl-{job_id}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"), "choices": choices,
            "usage": (self._chat_usage() if self.report_usage else None),
        }), media_type="application/json")

    def _chat_usage(self) -> object:
        if self.usage is not None:
            return copy.deepcopy(self.usage)
        return {"prompt_tokens": 42, "completion_tokens": 314, "total_tokens": 356}

    async def _stream(self, request: Request, body: dict, job_id: str) -> Response:
        """The same answer as server-sent events, a few words a chunk, as a real model
        streams: `chunk_delay_s` between chunks; after `hold_after_chunks` chunks, it waits
        while held. "no_finish" ends with `[DONE]` and no finish reason; "closed_early"
        closes the connection after the words, before it; the modes that bring no words
        send the role delta only, then what the module's docstring says."""
        refused = self._refusal()
        if refused is not None:
            return refused
        content, finish, refusal = self._content(body, job_id)
        model = body.get("model", "fake")

        def event(choices: list[dict], **extra: object) -> bytes:
            chunk = {"id": f"chatcmpl-{job_id}", "object": "chat.completion.chunk",
                     "created": int(time.time()), "model": model, "choices": choices, **extra}
            return f"data: {json.dumps(chunk)}\n\n".encode()

        async def kept_alive(delta: dict) -> AsyncIterator[bytes]:
            """The same delta, with no words in it, every KEEPALIVE_EVERY_S (or
            chunk_delay_s), until the client leaves (at most KEEPALIVE_FOR_S)."""
            every_s = self.chunk_delay_s or KEEPALIVE_EVERY_S
            for _ in range(int(KEEPALIVE_FOR_S / every_s)):
                await asyncio.sleep(every_s)
                yield event([{"index": 0, "delta": delta, "finish_reason": None}])

        async def events():
            if self.mode == "malformed":
                yield b"data: {not json\n\n"
                return
            if self.mode != "no_choices":
                yield event([{"index": 0, "delta": {"role": "assistant", "content": ""},
                              "finish_reason": None}])
                if self.mode == "closed_before_words":
                    await self._cut(request)
                    return
                if self.mode == "done_before_words":  # as a server whose slot was taken
                    yield b"data: [DONE]\n\n"
                    return
                if self.mode in ("empty_deltas", "role_deltas"):
                    async for kept in kept_alive({"content": ""} if self.mode == "empty_deltas"
                                                 else {"role": "assistant"}):
                        yield kept
                    return
                pieces = re.findall(r"\S*\s*", content or "")
                for number, start in enumerate(range(0, len(pieces), 2)):
                    if self.mode == "keepalive_after_words" and number >= KEEPALIVE_AFTER_CHUNKS:
                        async for kept in kept_alive({"content": ""}):
                            yield kept
                        return
                    if self.hold_after_chunks is not None and number >= self.hold_after_chunks:
                        while not self._gate.is_set():
                            await asyncio.sleep(0.01)
                    if self.chunk_delay_s:
                        await asyncio.sleep(self.chunk_delay_s)
                    text = "".join(pieces[start:start + 2])
                    if text:
                        yield event([{"index": 0, "delta": {"content": text},
                                      "finish_reason": None}])
                if refusal:
                    yield event([{"index": 0, "delta": {"refusal": refusal},
                                  "finish_reason": None}])
                if self.mode == "closed_early":
                    await self._cut(request)
                    return
                if self.mode != "no_finish":
                    yield event([{"index": 0, "delta": {}, "finish_reason": finish}])
            if (body.get("stream_options") or {}).get("include_usage") and self.report_usage:
                yield event([], usage=self._chat_usage())
            yield b"data: [DONE]\n\n"

        return _WatchedStream(events(), lambda: self._chat_left(job_id))

    def _chat_left(self, job_id: str) -> None:
        with self._arrived:
            with self._lock:
                self.chat_closed_early.add(job_id)
            self._arrived.notify_all()

    # -- the Responses API -----------------------------------------------------------------

    async def _create_response(self, request: Request) -> Response:
        if not self.responses_api:  # not billed: no model ever saw it
            return _error(404, "Invalid URL (POST /v1/responses)")
        body = await request.json()
        if "model" not in body:  # an empty request (a start-up check): refused, not counted
            return _error(400, "Missing required parameter: 'model'.")
        job_id = request.headers.get("x-story-job-id", "none")
        refused = self._refused_before_the_model(body, job_id, "responses")
        if refused is not None:
            return refused
        with self._arrived:
            with self._lock:
                self.calls[job_id] += 1
                self.creates[job_id] += 1
                self.requests.append({"job_id": job_id, "body": body,
                                      "headers": dict(request.headers), "api": "responses"})
            self._arrived.notify_all()
        refused = self._refusal()
        if refused is not None:
            return refused
        if self.mode == "malformed":
            return Response("{not json", media_type="application/json")
        record = self._store(body, job_id)
        with self._lock:
            answer = copy.deepcopy(record.object)
        # The writing belongs to the fake's loop, not to this request: it goes on whatever
        # the client does.
        record.task = asyncio.create_task(self._write(record))
        streamed = bool(body.get("stream"))
        if not body.get("background") and not streamed:
            await asyncio.shield(record.task)
            with self._lock:
                answer = copy.deepcopy(record.object)
        while not self._create_gate.is_set():
            await asyncio.sleep(0.01)
        if streamed:
            return StreamingResponse(self._follow(request, record, -1, None),
                                     media_type="text/event-stream")
        return _json(answer)

    def _store(self, body: dict, job_id: str) -> _Stored:
        response_id = f"resp_{secrets.token_hex(24)}"
        metadata = body.get("metadata") or {}
        record = _Stored(object={
            "id": response_id, "object": "response", "created_at": int(time.time()),
            "status": "queued" if body.get("background") else "in_progress",
            "background": bool(body.get("background")), "error": None,
            "incomplete_details": None, "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"), "model": body.get("model", "fake"),
            "output": [], "parallel_tool_calls": True, "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None}, "service_tier": "default",
            "store": body.get("store", True), "temperature": 1.0,
            "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [],
            "top_p": 1.0, "truncation": "disabled", "usage": None, "user": None,
            "metadata": metadata,
        }, job_id=job_id, body=body)
        with self._arrived:
            with self._lock:
                self._responses[response_id] = record
                self._ids_by_job[job_id].append(response_id)
                if isinstance(metadata.get("job_id"), str) and metadata["job_id"] != job_id:
                    self._ids_by_job[metadata["job_id"]].append(response_id)
                self._append(record, "response.created", response=record.object)
                record.in_flight = True
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._arrived.notify_all()
        return record

    def _stop(self, record: _Stored) -> None:
        """No more events for this response (call under the lock)."""
        record.stopped = True
        self._leave_flight(record)

    def _leave_flight(self, record: _Stored) -> None:
        if record.in_flight:
            record.in_flight = False
            self.in_flight -= 1

    @staticmethod
    def _append(record: _Stored, kind: str, **fields: object) -> None:
        """Store the next event, a snapshot of `fields` now (call under the lock)."""
        event = {"type": kind, "sequence_number": len(record.events), **fields}
        record.events.append((kind, json.dumps(event)))

    @contextmanager
    def _writing(self, record: _Stored) -> Iterator[None]:
        """Change the response and store its events, unless it was stopped meanwhile."""
        with self._arrived:
            with self._lock:
                if record.stopped:
                    raise _Stopped
                yield
            self._arrived.notify_all()

    async def _pause(self, record: _Stored, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if record.stopped:
                raise _Stopped
            await asyncio.sleep(min(left, 0.01))

    async def _held(self, record: _Stored, held: Callable[[], bool]) -> None:
        while held():
            if record.stopped:
                raise _Stopped
            await asyncio.sleep(0.01)

    async def _write(self, record: _Stored) -> None:
        try:
            await self._write_text(record)
        except _Stopped:
            pass
        finally:
            with self._lock:
                self._leave_flight(record)

    async def _write_text(self, record: _Stored) -> None:
        """What the model does with a response: the chat stream's words, as Responses
        events, paced by the same controls."""
        obj = record.object
        with self._writing(record):
            obj["status"] = "in_progress"
            self._append(record, "response.in_progress", response=obj)
        # held before writing at all, as a chat answer is held before its first byte
        await self._held(record, lambda: not self._gate.is_set() and self.hold_after_chunks
                         is None)
        await self._pause(record, self.delay_s)
        mode = self.mode
        content, finish, refusal = self._content(record.body, record.job_id)
        if mode == "no_choices":  # an answer with nothing in it
            with self._writing(record):
                self._finish(record, "completed")
            return
        item = {"id": f"msg_{secrets.token_hex(24)}", "type": "message", "status": "in_progress",
                "role": "assistant", "content": []}
        part: dict = ({"type": "refusal", "refusal": ""} if refusal else
                      {"type": "output_text", "text": "", "annotations": [], "logprobs": []})
        where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        with self._writing(record):
            obj["output"].append(item)
            self._append(record, "response.output_item.added", output_index=0, item=item)
        with self._writing(record):
            item["content"].append(part)
            self._append(record, "response.content_part.added", **where, part=part)
        if refusal:
            with self._writing(record):
                part["refusal"] = refusal
                self._append(record, "response.refusal.delta", **where, delta=refusal)
            with self._writing(record):
                self._append(record, "response.refusal.done", **where, refusal=refusal)
        else:
            pieces = re.findall(r"\S*\s*", content or "")
            for number, start in enumerate(range(0, len(pieces), 2)):
                if mode in ("empty_deltas", "role_deltas") or (
                        mode == "keepalive_after_words" and number >= KEEPALIVE_AFTER_CHUNKS):
                    await self._keep_alive(record, where)
                    return
                if self.hold_after_chunks is not None and number >= self.hold_after_chunks:
                    await self._held(record, lambda: not self._gate.is_set())
                await self._pause(record, self.chunk_delay_s)
                text = "".join(pieces[start:start + 2])
                if text:
                    with self._writing(record):
                        part["text"] += text
                        self._append(record, "response.output_text.delta", **where,
                                     delta=None if self.null_deltas else text, logprobs=[])
            if mode == "failed":  # the server gives up mid-answer: no *.done events
                with self._writing(record):
                    item["status"] = "incomplete"
                    self._finish(record, "failed")
                return
            with self._writing(record):
                self._append(record, "response.output_text.done", **where, text=part["text"],
                             logprobs=[])
        with self._writing(record):
            self._append(record, "response.content_part.done", **where, part=part)
        with self._writing(record):
            item["status"] = "incomplete" if finish == "length" else "completed"
            self._append(record, "response.output_item.done", output_index=0, item=item)
        with self._writing(record):
            self._finish(record, "incomplete" if finish == "length" else "completed")

    async def _keep_alive(self, record: _Stored, where: dict) -> None:
        """Events with no words, every KEEPALIVE_EVERY_S (or chunk_delay_s), until the
        response is stopped (at most KEEPALIVE_FOR_S): empty text deltas ("empty_deltas"),
        `keepalive` events ("role_deltas"), or the two in turn."""
        every_s = self.chunk_delay_s or KEEPALIVE_EVERY_S
        for number in range(int(KEEPALIVE_FOR_S / every_s)):
            await self._pause(record, every_s)
            empty = {"empty_deltas": True, "role_deltas": False}.get(self.mode, number % 2 == 0)
            with self._writing(record):
                if empty:
                    self._append(record, "response.output_text.delta", **where, delta="",
                                 logprobs=[])
                else:
                    self._append(record, "keepalive")

    def _finish(self, record: _Stored, status: str) -> None:
        """The terminal event (call under the lock)."""
        obj = record.object
        obj["status"] = status
        if status == "completed":
            obj["completed_at"] = int(time.time())
        if status == "incomplete":
            obj["incomplete_details"] = {"reason": "max_output_tokens"}
        if status == "failed":
            obj["error"] = {"code": "server_error", "message": FAILED_MESSAGE}
        elif self.report_usage:
            obj["usage"] = copy.deepcopy(RESPONSES_USAGE if self.usage is None else self.usage)
        sent = obj
        if self.malformed_final_event:  # as seen from a provider: a message with no content
            sent = copy.deepcopy(obj)
            for item in sent["output"]:
                item["content"] = None
        self._append(record, f"response.{status}", response=sent)
        self._leave_flight(record)

    def _lookup(self, request: Request, counter: Counter[str]) -> _Stored | None:
        """Count the retrieve or cancel for its job, and find the response."""
        response_id = request.path_params["response_id"]
        with self._arrived:
            with self._lock:
                record = self._responses.get(response_id)
                job_id = request.headers.get("x-story-job-id")
                if job_id is None and record is not None:
                    job_id = record.object["metadata"].get("job_id")
                counter[str(job_id) if job_id is not None else "none"] += 1
            self._arrived.notify_all()
        return record

    @staticmethod
    def _not_found(request: Request) -> Response:
        return _error(404, f"Response with id '{request.path_params['response_id']}' not found.")

    async def _retrieve_response(self, request: Request) -> Response:
        record = self._lookup(request, self.retrieves)
        if record is None:
            return self._not_found(request)
        if record.body.get("model") in self.retired_while_writing:
            return self._model_not_found(record.body["model"])
        if self.retrieve_status is not None:  # the key revoked while the story is written
            return _error(self.retrieve_status, "Incorrect API key provided.")
        if request.query_params.get("stream", "").lower() == "true":
            window_s = self.stream_window_s
            if window_s is not None and time.monotonic() - record.born_s > window_s:
                return _error(400, TOO_OLD_TO_STREAM)
            after = int(request.query_params.get("starting_after", -1))
            return StreamingResponse(
                self._follow(request, record, after, self.drop_stream_after_events,
                             self.silent_stream_after_events),
                media_type="text/event-stream")
        with self._lock:
            return _json(copy.deepcopy(record.object))

    async def _cancel_response(self, request: Request) -> Response:
        record = self._lookup(request, self.cancels)
        if record is None:
            return self._not_found(request)
        with self._arrived:
            with self._lock:
                if record.object["status"] not in TERMINAL:
                    record.object["status"] = "cancelled"
                    self._stop(record)
                answer = copy.deepcopy(record.object)
            self._arrived.notify_all()
        return _json(answer)

    async def _follow(self, request: Request, record: _Stored, after: int,
                      drop_after: int | None,
                      silent_after: int | None = None) -> AsyncIterator[bytes]:
        """Every stored event after `after`, then the new ones as they are written, until the
        terminal event, or until the response is cancelled or forgotten (then it just ends,
        with no terminal event). OpenAI's Responses streams send no `data: [DONE]`."""
        position = max(after + 1, 0)  # sequence numbers are list positions
        sent = 0
        while True:
            if self.retrieve_status is not None:  # the key revoked: its streams closed
                await self._cut(request)
                return
            with self._lock:
                pending = record.events[position:]
                over = record.stopped or record.object["status"] in TERMINAL
            for kind, data in pending:
                if drop_after is not None and sent >= drop_after:
                    await self._cut(request)
                    return
                if silent_after is not None and sent >= silent_after:
                    await self._fall_silent(request, record)
                    return
                yield f"event: {kind}\ndata: {data}\n\n".encode()
                position += 1
                sent += 1
            if silent_after is not None and sent >= silent_after:
                await self._fall_silent(request, record)
                return
            if over:
                return
            if drop_after is not None and sent >= drop_after:
                await self._cut(request)
                return
            await asyncio.sleep(0.01)

    async def _fall_silent(self, request: Request, record: _Stored) -> None:
        """Send nothing more, the connection open, until the client leaves (or the response
        is forgotten), as a stream stuck somewhere between the provider and the app."""
        while not record.stopped and not await request.is_disconnected():
            await asyncio.sleep(0.05)

    async def _cut(self, request: Request) -> None:
        """Close this request's connection under it, as a network cut would: the client
        sees its stream end without the final chunk."""
        client = request.scope.get("client")
        for connection in list(self._server.server_state.connections):
            if getattr(connection, "client", None) == client:
                connection.transport.close()  # flushes what was sent, then closes
        for _ in range(500):  # until uvicorn sees it gone, or the stream is cancelled
            if await request.is_disconnected():
                return
            await asyncio.sleep(0.01)
