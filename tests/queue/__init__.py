"""The queue: every transition and its guard, intake and idempotency, the worker, the
spend guard, streaming, the storyteller's failures, moderation, several processes."""
