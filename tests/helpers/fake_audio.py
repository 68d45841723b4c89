"""The fake provider's voices: `POST /v1/audio/speech`, and Chat Completions asked for
`modalities: ["text", "audio"]`, as OpenAI answers them, with real, tiny audio.

    fake.audio.calls_for(17)         # speech or audio chat calls that carried X-Story-Job-Id: 17
    fake.audio.mode = "500"          # or "ok", "hang" (never answers), "garbage" (bytes that are
                                     # not audio), "wav" (WAV whatever was asked), "no_route" (a
                                     # server without /audio/speech: 404 "Invalid URL", not
                                     # counted), "model_not_found" (404 about VOICE_MODEL)
    fake.audio.seconds = 40.0        # how long each answer is (default: the words at 15 a second)
    fake.audio.delay_s = 2.0         # each answer takes this long
    fake.audio.hold()                # answers wait until fake.audio.release()
    fake.audio.requests              # the bodies sent, with their job ids and APIs
    fake.audio.wait_for_call(17)     # block until job 17's call has arrived
    fake.audio.usage = {...}         # the chat answer's usage block instead (as sent)

The audio is made here, in code: MP3 as silent MPEG-1 Layer III frames (32 kbit/s, 44.1 kHz,
mono: 104 bytes each, 1152 samples), WAV as 8 kHz 8-bit silence. A chat answer reports usage as
OpenAI's audio models do: its audio tokens (20 a second) and its transcript's among the
completion tokens.
"""

from __future__ import annotations

import asyncio
import base64
import struct
import threading
import time
from collections import Counter

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

WAIT_S = 30.0
# An MPEG-1 Layer III frame header: 32 kbit/s, 44.1 kHz, no padding, mono.
MP3_HEADER = bytes((0xFF, 0xFB, 0x10, 0xC4))
MP3_FRAME_BYTES = 104
MP3_FRAME_S = 1152 / 44100
CHARS_PER_S = 15
AUDIO_TOKENS_PER_S = 20


def silent_mp3(seconds: float) -> bytes:
    """`seconds` of silence as MP3 frames (an ID3 tag before them, as encoders write)."""
    frames = max(1, round(seconds / MP3_FRAME_S))
    frame = MP3_HEADER + bytes(MP3_FRAME_BYTES - 4)
    tag = b"ID3\x04\x00\x00\x00\x00\x00\x0a" + bytes(10)
    return tag + frame * frames


def silent_wav(seconds: float, rate: int = 8000) -> bytes:
    samples = max(1, int(seconds * rate))
    return (b"RIFF" + struct.pack("<I", 36 + samples) + b"WAVEfmt "
            + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate, 1, 8)
            + b"data" + struct.pack("<I", samples) + b"\x80" * samples)


class FakeAudio:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.calls: Counter[str] = Counter()
            self.requests: list[dict] = []
        self.mode = "ok"
        self.seconds: float | None = None
        self.delay_s = 0.0
        self.usage: object = None
        self._released = threading.Event()
        self._released.set()

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def calls_for(self, job_id: int) -> int:
        with self._lock:
            return self.calls[str(job_id)]

    def total_calls(self) -> int:
        with self._lock:
            return sum(self.calls.values())

    def wait_for_call(self, job_id: int, timeout_s: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while not self.calls[str(job_id)]:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no audio call for job {job_id}")
                self._arrived.wait(remaining)

    async def _arrive(self, request: Request, body: dict, api: str) -> Response | None:
        """Count the call, then wait as asked; an error answer in the error modes."""
        job_id = request.headers.get("x-story-job-id", "none")
        with self._arrived:
            self.calls[job_id] += 1
            self.requests.append({"job_id": job_id, "body": body, "api": api,
                                  "headers": dict(request.headers)})
            self._arrived.notify_all()
        if self.mode == "hang":
            await asyncio.sleep(3600)
        while not self._released.is_set():
            await asyncio.sleep(0.01)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.mode == "500":
            return JSONResponse({"error": {"message": "server error", "type": "server_error",
                                           "param": None, "code": None}}, status_code=500)
        if self.mode == "model_not_found":
            return JSONResponse({"error": {
                "message": f"The model '{body.get('model')}' does not exist.",
                "type": "invalid_request_error", "param": None, "code": "model_not_found"}}, 404)
        return None

    def _audio(self, text: str, asked: str) -> tuple[bytes, float]:
        seconds = self.seconds if self.seconds is not None else max(1.0, len(text) / CHARS_PER_S)
        if self.mode == "garbage":
            return b"this is not audio at all" * 20, seconds
        if self.mode == "wav" or asked == "wav":
            return silent_wav(seconds), seconds
        return silent_mp3(seconds), seconds

    async def speech(self, request: Request) -> Response:
        if self.mode == "no_route":
            return JSONResponse({"error": {"message": "Invalid URL (POST /v1/audio/speech)",
                                           "type": "invalid_request_error", "param": None,
                                           "code": None}}, 404)
        body = await request.json()
        if not body.get("input"):  # refused before any reading: billed nothing, not counted
            return JSONResponse({"error": {"message": "Missing required parameter: 'input'.",
                                           "type": "invalid_request_error", "param": "input",
                                           "code": "missing_required_parameter"}}, 400)
        refused = await self._arrive(request, body, "speech")
        if refused is not None:
            return refused
        data, _ = self._audio(body["input"], body.get("response_format", "mp3"))
        kind = "audio/wav" if data[:4] == b"RIFF" else "audio/mpeg"
        return Response(data, media_type=kind)

    async def chat(self, request: Request, body: dict) -> Response:
        refused = await self._arrive(request, body, "chat")
        if refused is not None:
            return refused
        text = str((body.get("messages") or [{}])[-1].get("content", ""))
        data, seconds = self._audio(text, (body.get("audio") or {}).get("format", "mp3"))
        audio_tokens = int(seconds * AUDIO_TOKENS_PER_S)
        text_tokens = max(1, len(text) // 4)
        usage = self.usage if self.usage is not None else {
            "prompt_tokens": 60 + len(text) // 4,
            "completion_tokens": audio_tokens + text_tokens,
            "total_tokens": 60 + len(text) // 4 + audio_tokens + text_tokens,
            "completion_tokens_details": {"audio_tokens": audio_tokens,
                                          "text_tokens": text_tokens}}
        job_id = request.headers.get("x-story-job-id", "none")
        return JSONResponse({
            "id": f"chatcmpl-audio-{job_id}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": None, "refusal": None,
                "audio": {"id": f"audio-{job_id}", "expires_at": int(time.time()) + 3600,
                          "data": base64.b64encode(data).decode(), "transcript": text}}}],
            "usage": usage})
