"""Where a request's time goes: py-spy flame graphs of the app under wrk.

    .venv/bin/python bench/profile.py [poll|card|done|post|busy ...]     # make profile
    .venv/bin/python bench/profile.py floor-poll floor-done  # the baselines' own, to compare

Starts the app as bench/perf.py does (uvicorn, the Procfile's flags, a running job), loads
it with wrk (`poll`: the running job as JSON; `card`: its card; `done`: a finished job's
card, perf.py's card measure; or, for the POSTs, one request at a time; `busy`: POSTs while
the worker writes stories, as perf.py's busy measure) and records it with py-spy (pip install
py-spy; it needs ptrace, which root in a container has). Writes
test-artifacts/profile-<measure>.svg, and prints each profile's heaviest frames, so a
change can be judged by the profile before the bench.
"""

from __future__ import annotations

import asyncio
import collections
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.perf import (  # noqa: E402
    BUSY_CHUNK_S,
    BUSY_JOBS,
    HELD_CHUNKS,
    ROOT,
    STORY,
    KeepAlive,
    Server,
    app_env,
    compile_ahead,
    embedded_postgres_url,
    fresh_database,
    submit,
    wait_for,
    wrk,
)
from tests.helpers.fake_llm import FakeLLM  # noqa: E402

SECONDS = 6
TOP_FRAMES = 15
OUT = ROOT / "test-artifacts"
POST_BODY = b'{"prompt": "a lantern fox who lights the way home", "length": "short"}'


def record(pid: int, name: str, collapsed: bool) -> subprocess.Popen[bytes]:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    suffix, fmt = (".txt", "raw") if collapsed else (".svg", "flamegraph")
    out = OUT / f"profile-{name}{suffix}"
    return subprocess.Popen([spy, "record", "-p", str(pid), "-d", str(SECONDS), "-r", "250",
                             "--nonblocking", "-f", fmt, "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def heaviest(path: Path) -> list[str]:
    """From py-spy's collapsed stacks: the app's own frames in the most samples (inclusive),
    then the frames that were running themselves most often (self), wherever they are."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    # Lines end at "\n" only: a frame's name may hold another of str.splitlines' breaks.
    for line in filter(None, path.read_text(errors="replace").split("\n")):
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            if "(app/" in frame or "(bench/" in frame:
                inclusive[frame] += int(count)
    return ([f"{100 * n / total:5.1f}%  {frame[:110]}"
             for frame, n in inclusive.most_common(TOP_FRAMES)] + ["  self:"] +
            [f"{100 * n / total:5.1f}%  {frame[:110]}" for frame, n in own.most_common(10)])


async def load(kind: str, app: Server, poll: str, done: str) -> None:
    if kind in ("post", "busy"):
        async with KeepAlive(app.url) as client:
            for _ in range(SECONDS * 400):
                await client.post_json("/stories/generate", POST_BODY,
                                       {"Idempotency-Key": uuid.uuid4().hex})
        return
    kind = kind.removeprefix("floor-")
    headers = ({"Accept": "application/json"} if kind == "poll" else
               {"HX-Request": "true", "Accept": "*/*", "Accept-Encoding": "gzip, br"})
    url = app.url + (done if kind == "done" else poll)
    await asyncio.to_thread(wrk, url, headers=headers, seconds=SECONDS)


async def main(kinds: list[str]) -> None:
    OUT.mkdir(exist_ok=True)
    compile_ahead()
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        database_url = await fresh_database(embedded_postgres_url(Path(tmp) / "pg",
                                                                  stop_at_exit=True))
        env = app_env(database_url, fake.url)
        app = Server("app.main:app", env, Path(tmp) / "app.log")
        floor = Server("bench.baselines:floor", env, Path(tmp) / "floor.log")
        app.start()
        conn = await asyncpg.connect(database_url)
        try:
            fake.story = STORY
            async with httpx.AsyncClient(base_url=app.url) as client:
                finished, = await submit(client, 1)
                await wait_for(conn, "SELECT status = 'completed' FROM story_jobs"
                               " WHERE id = $1", finished)
                fake.hold_after_chunks = HELD_CHUNKS
                fake.hold()
                running, = await submit(client, 1)
            await wait_for(conn, "SELECT length(text_so_far) > 1000 FROM story_jobs"
                           " WHERE id = $1", running)
            if any(kind.startswith("floor-") for kind in kinds):
                floor.start()
            for kind in kinds:
                server = floor if kind.startswith("floor-") else app
                assert server.process is not None
                if kind == "busy":  # the held job finishes; more stories stream meanwhile
                    fake.hold_after_chunks = None
                    fake.release()
                    fake.chunk_delay_s = BUSY_CHUNK_S
                    async with httpx.AsyncClient(base_url=app.url) as client:
                        await submit(client, BUSY_JOBS * 4)
                for collapsed in (True, False):
                    spy = record(server.process.pid, kind, collapsed)
                    await load(kind, server, f"/stories/jobs/{running}",
                               f"/stories/jobs/{finished}")
                    spy.wait()
                print(f"\n{kind}: test-artifacts/profile-{kind}.svg")
                print("\n".join(heaviest(OUT / f"profile-{kind}.txt")))
        finally:
            fake.release()
            await conn.close()
            app.stop()
            floor.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["poll", "card", "post", "busy"]))
