"""How long the tests wait for something that should happen.

A deadline is reached only when something is wrong (a wait ends as soon as its condition
holds), so it costs nothing when the tests pass: these are generous, so a loaded machine
(four workers on two cores, other work beside them) never fails a test that would pass.
A test that checks how soon something happens says so with its own, shorter, limit.
"""

from __future__ import annotations

WAIT_S = 30.0  # for a condition: a call to arrive, a row to change, a job to finish
HTTP_TIMEOUT_S = 30.0  # for one request to a served app (httpx's own default is 5 s)
