"""How big the long campaigns run: short in `make test`, full in `make test-all`.

`make test-all` sets FULL_CAMPAIGNS=1: Hypothesis at each test's full count of examples
(and `make chaos`, the 45-run crash campaign). `make test` runs the same properties on
fewer examples, so a change that breaks one is still likely to be caught in minutes.
"""

from __future__ import annotations

import os

FULL = os.environ.get("FULL_CAMPAIGNS") == "1"
SHORT_EXAMPLES = 50


def examples(full: int) -> int:
    """A property's number of examples: `full` in the long campaign, a short run otherwise."""
    return full if FULL else min(full, SHORT_EXAMPLES)
