"""The story form as a browser posts it: the key the home page minted, htmx or not.
"""

from __future__ import annotations

import re

import httpx

from tests.helpers.app import wait_for_job


def form_key(html: str) -> str:
    match = KEY.search(html)
    assert match, "the form has no hidden idempotency_key"
    return match.group(1)


async def submit(
    client: httpx.AsyncClient, *, key: str | None = None, htmx: bool = False, **fields: str
) -> httpx.Response:
    """Post the story form as a browser would, with the key the home page minted."""
    if key is None:
        key = form_key((await client.get("/")).text)
    data = {"prompt": "a brave little dragon", "child_name": "", "age": "", "length": "medium"}
    return await client.post(
        "/stories/generate", data={**data, **fields, "idempotency_key": key},
        headers=HX if htmx else {},
    )


def job_id_of(response: httpx.Response) -> int:
    if response.status_code == 303:
        return int(response.headers["location"].rsplit("/", 1)[1])
    match = re.search(r'id="job-(\d+)"', response.text)
    assert match, response.text
    return int(match.group(1))


async def finished_story(client: httpx.AsyncClient, **fields: str) -> int:
    response = await submit(client, **fields)
    job = await wait_for_job(client, job_id_of(response))
    assert job["status"] == "completed", job
    return job["story_id"]


HX = {"HX-Request": "true"}


KEY = re.compile(r'name="idempotency_key" value="([^"]+)"')
