"""The queue: the `story_jobs` table and everything that moves a job along it.

`store.py` holds every job transition and job read (the only code that knows the job
queries' names); `processes.py` the process registry; `intake.py` turns a request into a
job once per key (`refusals.py`: what it says when it will not); `worker.py` claims a job
and hands it to its mode's writer (`chat_writer.py`, `background_writer.py`), which makes
the one call; `storing.py` stores the story; `writing.py` is a job being written (its
words, heartbeat and failing); `sweeper.py` ends jobs nobody will finish (`startup.py`
sweeps once, waiting for the database, before a process starts); `liveness.py` is this
process's heartbeat; `wakeup.py` the LISTEN/NOTIFY signal; `screener.py` screens stored
stories; `estimates.py` says how long; `check.py` reports broken invariants.

May use: app.stories, app.languages and app.lengths (their records), app.failures (why a job
failed), app.kinds (the kinds of job), app.requests, app.finishing, app.db, app.queries,
app.errors, app.logs, app.config, app.backoff, app.i18n (the words a card says), app.money
(set-asides and charges), app.illustrating (the illustrator it is handed, a picture's types),
app.narrating (the narrator it is handed, a narration's types and joining its parts)
and app.storytelling (the storyteller and moderator it is handed). Never app.web, app.shelf
or app.security.
"""
