"""Pictures for stories: what an illustrator is, what it gives back, how it refuses.

    picture = await illustrator.draw(scene, job_id=17)   # Picture(data, content_type, model)

An illustrator draws one picture per call and is called once per picture job (the worker's
promise, as for stories). `demo` draws the app's own night scene (app/illustrating/demo.py);
`openai` asks the provider's Images API (app/illustrating/openai_images.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.failures import ProviderError
from app.money import Usage


@dataclass(frozen=True)
class Scene:
    """What a picture is drawn from: the story (its title and opening) and, for the demo's
    own drawing only, what the child likes (never sent to a provider)."""

    title: str
    opening: str  # the story's text: a prompt takes its first lines
    likes: str | None = None


@dataclass(frozen=True)
class Picture:
    data: bytes
    content_type: str  # image/png, image/webp, image/jpeg or image/svg+xml
    model: str
    usage: Usage | None = None  # what the provider reported it cost; None: nothing


class PictureError(ProviderError):
    """The picture could not be drawn (its Failure's code is what the job stores,
    app/failures.py)."""


class Illustrator(Protocol):
    name: str

    async def draw(self, scene: Scene, *, job_id: int) -> Picture: ...

    async def aclose(self) -> None: ...
