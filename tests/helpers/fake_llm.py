"""A fake OpenAI-compatible server, over real HTTP, that counts calls per job.

    with FakeLLM() as fake:                 # serves on 127.0.0.1:<free port>
        fake.url                            # OPENAI_BASE_URL for the app
        fake.mode = "500"                   # or "ok", "429", "malformed", "empty", "refusal",
                                            # "no_choices", "nul", "surrogate", "length"
        fake.hold()                         # answers wait until fake.release()
        fake.hold_after_chunks = 3          # ... or stream 3 chunks first, then wait
        fake.chunk_delay_s = 0.2            # a streamed answer's pace
        fake.calls_for(17)                  # requests that carried X-Story-Job-Id: 17
        fake.story = "Title\n\nBody"        # answer with this text instead of the echo
        fake.moderation_inputs              # texts sent to /v1/moderations; any text
                                            # containing FLAG_WORD comes back flagged
        fake.moderation_down = True         # /v1/moderations answers 500
        fake.moderation_delay_s = 2.0       # /v1/moderations takes this long to answer

It runs uvicorn in a thread with its own event loop, so it keeps answering while a test's
own loop is blocked on a database lock.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections import Counter

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

FLAG_WORD = "grimbleflag"  # a made-up word the fake moderation endpoint flags
MODES = ("ok", "500", "429", "malformed", "empty", "refusal", "no_choices", "nul", "surrogate",
         "length")
# What the model "writes" in the modes that test its output (sent JSON-escaped, as a real
# server would: `\u0000`, `\ud800`).
NUL_STORY = ("The Night\x00 Light\r\n\r\nOnce upon a time\x00 a lamp \x1b[0mglowed.\x07\n"
             "\tIt hummed\x7f softly.\x0b The end.")
SURROGATE_STORY = "The Moon \ud83d Boat\n\nA boat sailed \udc00 to the moon. Goodnight."
LENGTH_STORY = ("The Long Night\n\nOnce upon a time there was a sleepy fox. "
                "She curled up by the fire! \"Goodnight,\" said the owl.\n\n"
                "Then the fox dreamed of a meadow where the")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
        self.moderation_inputs: list[str] = []
        self.moderation_down = False
        self.moderation_delay_s = 0.0
        self._lock = threading.Lock()
        self._gate = threading.Event()
        self._gate.set()
        self._arrived = threading.Condition()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        app = Starlette(routes=[
            Route("/v1/chat/completions", self._complete, methods=["POST"]),
            Route("/v1/moderations", self._moderate, methods=["POST"]),
        ])
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off")
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
        self._gate.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.requests.clear()
            self.max_in_flight = 0
            self.moderation_inputs.clear()
        self.story = None
        self.moderation_down = False
        self.moderation_delay_s = 0.0
        self.mode = "ok"
        self.delay_s = 0.0
        self.chunk_delay_s = 0.0
        self.hold_after_chunks: int | None = None
        self._gate.set()

    def hold(self) -> None:
        """Answers wait until release(): the test decides when the LLM 'finishes'."""
        self._gate.clear()

    def release(self) -> None:
        self._gate.set()

    def calls_for(self, job_id: int) -> int:
        with self._lock:
            return self.calls[str(job_id)]

    @property
    def total_calls(self) -> int:
        with self._lock:
            return sum(self.calls.values())

    def wait_for_call(self, job_id: int, timeout_s: float = 10.0) -> None:
        """Block until a request for this job has arrived (it may still be held)."""
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while self.calls[str(job_id)] == 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no LLM call for job {job_id}")
                self._arrived.wait(remaining)

    # -- the endpoint --------------------------------------------------------------------

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        job_id = request.headers.get("x-story-job-id", "none")
        with self._arrived:
            with self._lock:
                self.calls[job_id] += 1
                self.requests.append({"job_id": job_id, "body": body,
                                      "headers": dict(request.headers)})
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._arrived.notify_all()
        try:
            while not self._gate.is_set() and self.hold_after_chunks is None:
                await asyncio.sleep(0.01)  # held before answering at all
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            if body.get("stream"):
                return await self._stream(body, job_id)
            return self._answer(body, job_id)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _moderate(self, request: Request) -> Response:
        body = await request.json()
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

    def _refusal(self) -> Response | None:
        """The answers that come before any story: an error status, or garbage."""
        if self.mode == "500":
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, 500)
        if self.mode == "429":
            return JSONResponse({"error": {"message": "slow down", "type": "rate_limit"}}, 429,
                                headers={"retry-after": "0"})
        return None

    def _content(self, body: dict, job_id: str) -> tuple[str | None, str, str | None]:
        """(content, finish_reason, refusal) the "model" answers with in this mode."""
        mode = self.mode
        content: str | None = f"The Story of Job {job_id}\n\nOnce upon a time, " \
                              f"a gentle tale about: {body['messages'][-1]['content'][-60:]}"
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
        return content, finish, refusal

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
            "usage": {"prompt_tokens": 42, "completion_tokens": 314, "total_tokens": 356},
        }), media_type="application/json")

    async def _stream(self, body: dict, job_id: str) -> Response:
        """The same answer as server-sent events, a few words a chunk, as a real model
        streams: `chunk_delay_s` between chunks; after `hold_after_chunks` chunks, it waits
        while held."""
        refused = self._refusal()
        if refused is not None:
            return refused
        content, finish, refusal = self._content(body, job_id)
        model = body.get("model", "fake")

        def event(choices: list[dict], **extra: object) -> bytes:
            chunk = {"id": f"chatcmpl-{job_id}", "object": "chat.completion.chunk",
                     "created": int(time.time()), "model": model, "choices": choices, **extra}
            return f"data: {json.dumps(chunk)}\n\n".encode()

        async def events():
            if self.mode == "malformed":
                yield b"data: {not json\n\n"
                return
            if self.mode != "no_choices":
                yield event([{"index": 0, "delta": {"role": "assistant", "content": ""},
                              "finish_reason": None}])
                pieces = re.findall(r"\S*\s*", content or "")
                for number, start in enumerate(range(0, len(pieces), 2)):
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
                yield event([{"index": 0, "delta": {}, "finish_reason": finish}])
            if (body.get("stream_options") or {}).get("include_usage"):
                yield event([], usage={"prompt_tokens": 42, "completion_tokens": 314,
                                       "total_tokens": 356})
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")
