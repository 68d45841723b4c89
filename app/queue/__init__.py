"""The queue: the `story_jobs` table and everything that moves a job along it.

`store.py` holds every job transition and job read (the only code that knows the job
queries' names), and the process registry; `intake.py` turns a request into a job once
per key; `worker.py` claims a job and makes the one call; `sweeper.py` ends jobs nobody
will finish; `liveness.py` is this process's heartbeat; `wakeup.py` the LISTEN/NOTIFY
signal; `screener.py` screens stored stories; `estimates.py` says how long; `check.py`
reports broken invariants.

May use: app.stories, app.db, app.queries, app.errors, app.logs, app.config, and the
storyteller and moderator it is handed (app.storytelling). Never app.web, app.shelf or
app.security.
"""
