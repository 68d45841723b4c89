"""What the intake statement (sql/functions/intake_job.sql) is given for one request: its
columns as JSON, the limits it is checked against, and the intake lock's key, which the
making of a picture job takes too when a budget is set (both read the month's money).

    params = intake_params(key, digest, request, since=midnight, queue_max=8,
                           daily_limit=20, budget=meter.budget(), set_aside=4_670)
"""

from __future__ import annotations

import json
from datetime import datetime

from app.money import MonthBudget
from app.requests import to_params
from app.stories import StoryRequest

INTAKE_LOCK_KEY = 0x5707_10B  # the intake's pg_advisory_xact_lock: a constant of this app


def intake_params(
    idempotency_key: str, request_hash: str, request: StoryRequest, *, since: datetime,
    queue_max: int, daily_limit: int, budget: MonthBudget | None = None, set_aside: int = 0,
) -> dict[str, object]:
    """The `intake_job` statement's parameters for one request (its columns as JSON, with
    the most it can cost: `set_aside`, micro-dollars, checked against `budget`)."""
    return {
        "request": json.dumps(to_params(request) | {"set_aside_micros": set_aside}),
        "idempotency_key": idempotency_key, "request_hash": request_hash, "since": since,
        "queue_max": queue_max, "daily_limit": daily_limit, "lock_key": INTAKE_LOCK_KEY,
        "budget_micros": budget.limit_micros if budget else None,
        "month_start": budget.month_start if budget else None}
