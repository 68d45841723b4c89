"""The fake provider's Images API: `POST /v1/images/generations`, as OpenAI answers it.

    fake.images.calls_for(17)        # generations that carried X-Story-Job-Id: 17
    fake.images.mode = "refuse"      # or "ok", "500", "hang" (never answers), "garbage",
                                     # "no_route" (a server without the Images API: 404
                                     # "Invalid URL", not counted), "model_not_found" (404
                                     # about IMAGE_MODEL), "huge" (a 50 MB body, streamed)
    fake.images.huge_sent_mb         # ... how many of those megabytes went out
    fake.images.delay_s = 2.0        # each answer takes this long (the fake's drawing time)
    fake.images.hold()               # answers wait until fake.images.release()
    fake.images.requests             # the bodies sent, with their job ids
    fake.images.wait_for_call(17)    # block until job 17's call has arrived
    fake.images.picture = painted((1536, 1024), "PNG")   # answer with these bytes instead
    fake.images.usage = {"input_tokens": -5}   # report this usage block instead (as sent)

An answer is one real image (a small WebP, or PNG for output_format=png) in `b64_json`,
with usage as the GPT image models report it. "refuse" is OpenAI's 400
`moderation_blocked`, counted as a call (the provider saw the request). A body without a
prompt (the app's start-up check) is refused with a 400, as OpenAI does, and not counted.
"""

from __future__ import annotations

import asyncio
import base64
import io
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

WAIT_S = 30.0
HUGE_MB = 50


def small_image(fmt: str = "WEBP", size: tuple[int, int] = (96, 64)) -> bytes:
    """A real picture: a night-blue field with a pale moon."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, (20, 30, 70))
    ImageDraw.Draw(image).ellipse((60, 8, 84, 32), fill=(240, 230, 190))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def painted(size: tuple[int, int] = (768, 512), fmt: str = "WEBP", quality: int = 80,
            seed: int = 1) -> bytes:
    """A picture as busy as a painted one: a night sky's gradient, soft hills and a moon,
    and grain all over (what makes a real illustration weigh what it does)."""
    import random

    from PIL import Image, ImageDraw, ImageFilter

    width, height = size
    rng = random.Random(seed)
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    image = Image.merge("RGB", [band.point(lambda v, k=k: int(20 + v * k))
                                for band, k in zip(image.split(), (0.2, 0.3, 0.5), strict=True)])
    draw = ImageDraw.Draw(image)
    for _ in range(40):  # stars
        x, y = rng.randrange(width), rng.randrange(height // 2)
        draw.ellipse((x, y, x + 3, y + 3), fill=(250, 240, 200))
    draw.ellipse((width * 0.7, height * 0.1, width * 0.8, height * 0.1 + width * 0.1),
                 fill=(240, 230, 190))
    for k in range(3):  # hills
        top = height * (0.55 + 0.12 * k)
        draw.ellipse((-width * 0.2 + k * width * 0.3, top, width * (0.6 + 0.3 * k),
                      height * 1.6), fill=(30 + 20 * k, 60 + 15 * k, 50 + 10 * k))
    image = image.filter(ImageFilter.GaussianBlur(2))
    grain = Image.effect_noise(size, 24).convert("RGB")
    image = Image.blend(image, grain, 0.3)
    out = io.BytesIO()
    image.save(out, fmt, **({"quality": quality} if fmt in ("WEBP", "JPEG") else {}))
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
        self.picture: bytes | None = None  # the bytes to answer with (default: small_image)
        self.usage: object = None  # the usage block to answer with (default: as OpenAI's)
        self.huge_sent_mb = 0  # mode "huge": how many of its megabytes were sent
        self._released = threading.Event()
        self._released.set()

    async def _huge(self) -> AsyncIterator[bytes]:
        yield b'{"created": 1, "data": [{"b64_json": "'
        for _ in range(HUGE_MB):
            self.huge_sent_mb += 1
            yield b"A" * 2**20
            await asyncio.sleep(0.02)  # paced, so a client that hangs up is seen doing so
        yield b'"}]}'

    def hold(self) -> None:
        """Answers wait from now on until release(): a test sees the page while it is drawn."""
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
                    raise AssertionError(f"no images call for job {job_id}")
                self._arrived.wait(remaining)

    async def generate(self, request: Request) -> Response:
        if self.mode == "no_route":  # a server without the Images API, as OpenAI answers it
            return JSONResponse({"error": {
                "message": "Invalid URL (POST /v1/images/generations)",
                "type": "invalid_request_error", "param": None, "code": None}}, 404)
        body = await request.json()
        if "prompt" not in body:  # refused before any drawing: not a call, billed nothing
            return JSONResponse({"error": {
                "message": "Missing required parameter: 'prompt'.",
                "type": "invalid_request_error", "param": "prompt",
                "code": "missing_required_parameter"}}, 400)
        job_id = request.headers.get("x-story-job-id", "none")
        with self._arrived:
            self.calls[job_id] += 1
            self.requests.append({"job_id": job_id, "body": body,
                                  "headers": dict(request.headers)})
            self._arrived.notify_all()
        if self.mode == "hang":
            await asyncio.sleep(3600)
        while not self._released.is_set():
            await asyncio.sleep(0.01)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.mode == "refuse":
            return JSONResponse({"error": {
                "message": "Your request was rejected by the safety system.",
                "type": "image_generation_user_error", "param": None,
                "code": "moderation_blocked"}}, status_code=400)
        if self.mode == "model_not_found":
            return JSONResponse({"error": {
                "message": f"The model '{body.get('model')}' does not exist.",
                "type": "invalid_request_error", "param": None, "code": "model_not_found"}}, 404)
        if self.mode == "huge":  # 50 MB, sent as it is read: how much was sent is counted
            return StreamingResponse(self._huge(), media_type="application/json")
        if self.mode == "500":
            return JSONResponse({"error": {"message": "server error", "type": "server_error",
                                           "param": None, "code": None}}, status_code=500)
        data = (b"not a picture" if self.mode == "garbage" else self.picture or
                small_image("PNG" if body.get("output_format") == "png" else "WEBP"))
        return JSONResponse({
            "created": int(time.time()),
            "data": [{"b64_json": base64.b64encode(data).decode()}],
            "usage": self.usage if self.usage is not None else {
                "input_tokens": 60, "output_tokens": 272, "total_tokens": 332,
                "input_tokens_details": {"text_tokens": 60, "image_tokens": 0}},
        })
