"""A story's picture from the provider's Images API: one `images.generate` per picture job.

    illustrator = ImagesIllustrator(client, model="gpt-image-2.5-flare")
    picture = await illustrator.draw(scene, job_id=17)

One image, small (IMAGE_SIZE, the page's 3:2), at low quality, as WebP: a picture above a
bedtime story needs no more, and each of those choices lowers the price. The call carries
`X-Story-Job-Id` (the picture job's own id) and the client makes no retries
(max_retries=0), so one job is one billed call. What the provider refuses becomes a
PictureError with its Failure (app/failures.py); the story is never touched.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Final

from app.failures import (
    ILLUSTRATOR_EMPTY,
    ILLUSTRATOR_FAILED,
    PICTURE_DECLINED,
    PICTURE_UNSHOWABLE,
    PICTURES_UNSUPPORTED,
)
from app.illustrating import Picture, PictureError, Scene
from app.illustrating.prompt import picture_prompt
from app.illustrating.small import NotAPicture, checked
from app.money import Usage
from app.storytelling.capped import BodyTooLarge
from app.storytelling.endpoints import IMAGES, Endpoints, is_missing_route, no_endpoint_message
from app.storytelling.provider import FAILURES, ProviderClient, loaded, trouble_of

if TYPE_CHECKING:
    from openai.types import ImagesResponse

IMAGE_SIZE = "768x512"  # 3:2, each side a multiple of 16, as the current GPT image models take
IMAGE_QUALITY: Final = "low"
IMAGE_FORMAT: Final = "webp"
IMAGE_COMPRESSION = 80
# OpenAI's code for a prompt or an image its safety system would not draw.
MODERATION_BLOCKED = "moderation_blocked"


class ImagesIllustrator:
    name = "openai"

    def __init__(self, client: ProviderClient, *, model: str,
                 endpoints: Endpoints | None = None) -> None:
        self.client = client
        self.model = model
        self.endpoints = endpoints or Endpoints()

    async def aclose(self) -> None:
        await self.client.aclose()

    async def draw(self, scene: Scene, *, job_id: int) -> Picture:
        await loaded()  # off the event loop (app/storytelling/provider.py)
        import openai

        try:
            answer = await self.client().images.generate(
                model=self.model, prompt=picture_prompt(scene), n=1, size=IMAGE_SIZE,
                quality=IMAGE_QUALITY, output_format=IMAGE_FORMAT,
                output_compression=IMAGE_COMPRESSION,
                extra_headers={"X-Story-Job-Id": str(job_id)},
            )
        except openai.BadRequestError as error:
            if _code(error) == MODERATION_BLOCKED:
                raise PictureError(PICTURE_DECLINED, MODERATION_BLOCKED) from None
            raise PictureError(ILLUSTRATOR_FAILED, "HTTP 400") from None
        except openai.NotFoundError as error:
            if is_missing_route(error, self.model):  # the route, not the model
                self.endpoints.mark_missing(IMAGES, seen_by=f"job {job_id}")
                raise PictureError(PICTURES_UNSUPPORTED, no_endpoint_message(IMAGES)) from None
            raise _provider_error(error) from None
        except (openai.APIError, BodyTooLarge) as error:
            raise _provider_error(error) from None
        data = _image_of(answer)
        try:
            content_type = checked(data)
        except NotAPicture:
            raise PictureError(PICTURE_UNSHOWABLE) from None
        return Picture(data, content_type, self.model, _usage_of(answer))


def _image_of(answer: ImagesResponse) -> bytes:
    try:
        encoded = (answer.data or [])[0].b64_json
        data = base64.b64decode(encoded, validate=True) if encoded else b""
    except (AttributeError, IndexError, binascii.Error):
        data = b""
    if not data:
        raise PictureError(ILLUSTRATOR_EMPTY)
    return data


def _usage_of(answer: ImagesResponse) -> Usage | None:
    """The tokens a GPT image model reports (its price is by token; PRICES may give one a
    price per picture instead), as reported, whatever they are: the meter reads them
    (app/money/meter.py)."""
    usage = answer.usage
    if usage is None:
        return None
    cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", None) or 0
    return Usage(input_tokens=getattr(usage, "input_tokens", None),  # type: ignore[arg-type]
                 cached_tokens=cached, output_tokens=getattr(usage, "output_tokens", None),  # type: ignore[arg-type]
                 images=len(answer.data or []) or 1)


def _code(error: Exception) -> str | None:
    code, body = getattr(error, "code", None), getattr(error, "body", None)
    if code is None and isinstance(body, dict):
        code = body.get("code")
    return code if isinstance(code, str) else None


def _provider_error(error: Exception) -> PictureError:
    trouble, detail = trouble_of(error)
    return PictureError(FAILURES[trouble].picture, detail)

