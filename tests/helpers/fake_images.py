"""The fake provider's Images API: `POST /v1/images/generations`, as OpenAI answers it.

    fake.images.calls_for(17)        # generations that carried X-Story-Job-Id: 17
    fake.images.mode = "refuse"      # or "ok", "500", "hang" (never answers), "garbage"
    fake.images.delay_s = 2.0        # each answer takes this long (the fake's drawing time)
    fake.images.requests             # the bodies sent, with their job ids
    fake.images.wait_for_call(17)    # block until job 17's call has arrived

An answer is one real image (a small WebP, or PNG for output_format=png) in `b64_json`,
with usage as the GPT image models report it. "refuse" is OpenAI's 400
`moderation_blocked`, counted as a call (the provider saw the request).
"""

from __future__ import annotations

import asyncio
import base64
import io
import threading
import time
from collections import Counter

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

WAIT_S = 30.0


def small_image(fmt: str = "WEBP", size: tuple[int, int] = (96, 64)) -> bytes:
    """A real picture: a night-blue field with a pale moon."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, (20, 30, 70))
    ImageDraw.Draw(image).ellipse((60, 8, 84, 32), fill=(240, 230, 190))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


class FakeImages:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.calls: Counter[str] = Counter()
            self.requests: list[dict] = []
        self.mode = "ok"
        self.delay_s = 0.0

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
                    raise AssertionError(f"no images call for job {job_id}")
                self._arrived.wait(remaining)

    async def generate(self, request: Request) -> Response:
        body = await request.json()
        job_id = request.headers.get("x-story-job-id", "none")
        with self._arrived:
            self.calls[job_id] += 1
            self.requests.append({"job_id": job_id, "body": body,
                                  "headers": dict(request.headers)})
            self._arrived.notify_all()
        if self.mode == "hang":
            await asyncio.sleep(3600)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.mode == "refuse":
            return JSONResponse({"error": {
                "message": "Your request was rejected by the safety system.",
                "type": "image_generation_user_error", "param": None,
                "code": "moderation_blocked"}}, status_code=400)
        if self.mode == "500":
            return JSONResponse({"error": {"message": "server error", "type": "server_error",
                                           "param": None, "code": None}}, status_code=500)
        data = (b"not a picture" if self.mode == "garbage" else
                small_image("PNG" if body.get("output_format") == "png" else "WEBP"))
        return JSONResponse({
            "created": int(time.time()),
            "data": [{"b64_json": base64.b64encode(data).decode()}],
            "usage": {"input_tokens": 60, "output_tokens": 272, "total_tokens": 332,
                      "input_tokens_details": {"text_tokens": 60, "image_tokens": 0}},
        })
