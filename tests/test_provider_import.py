"""A story asked for while the provider's library is still being imported (app/storytelling/
provider.py warms it up in a thread once the app serves) waits for it off the event loop:
an `import openai` on the loop waited there for the thread's import, holding every request
and heartbeat meanwhile (2.6 s on a busy machine, long enough for a job's heartbeat to go
stale and its own process's sweeper to end it 'interrupted').

In a fresh interpreter, where the library is not imported yet; its import made slow by a
finder that sleeps (the sleep lets the GIL go, as a slow disk would), and the loop's
longest stall measured by a task that ticks beside the story's call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPORT_S = 3.0  # the import held this long: on the loop, the loop stalled as long or more

SCRIPT = """
import asyncio, importlib.abc, sys, time

class SlowOpenAI(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "openai":
            time.sleep(IMPORT_S)
        return None

sys.meta_path.insert(0, SlowOpenAI())

from app.stories import StoryRequest
from app.storytelling.openai import OpenAIStoryteller
from app.storytelling.provider import ProviderClient, warm_up

async def main():
    storyteller = OpenAIStoryteller(ProviderClient(api_key="sk-test", base_url=sys.argv[1],
                                                   max_retries=0, timeout_s=30),
                                    model="fake-model")
    longest, last, done = 0.0, time.monotonic(), False

    async def tick():
        nonlocal longest, last
        while not done:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            longest, last = max(longest, now - last), now

    ticking = asyncio.create_task(tick())
    warming = asyncio.create_task(warm_up())
    await asyncio.sleep(0.1)  # the thread's import has begun
    story = await storyteller.write(StoryRequest(prompt="a lantern fox"), job_id=1)
    done = True
    await ticking
    await warming
    await storyteller.aclose()
    print(f"{longest:.3f}", bool(story.body))

asyncio.run(main())
""".replace("IMPORT_S", repr(IMPORT_S))


def test_a_story_asked_during_the_library_s_import_leaves_the_loop_free(fake_llm, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-c", SCRIPT, fake_llm.url], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    longest, wrote = result.stdout.split()
    assert wrote == "True"
    # A busy machine (load average 15) stalls the loop for a second or so anyway.
    assert float(longest) < IMPORT_S * 0.8, f"the loop stalled {longest} s"
