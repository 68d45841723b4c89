-- The processes that share this database: each web or worker process registers at start-up
-- and beats while it lives. The sweeper reads it to tell "no worker is alive" (so a waiting
-- job may expire) from "a worker is busy" (so a queue of any depth drains).
CREATE TABLE IF NOT EXISTS workers (
    boot_id      uuid PRIMARY KEY,
    host         text NOT NULL,
    pid          integer NOT NULL,
    concurrency  integer NOT NULL CHECK (concurrency >= 0),  -- 0: serves, runs no jobs
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stopped_at   timestamptz  -- a clean shutdown; a crash leaves it NULL and the beat stale
);

-- Claiming takes the oldest pending job; the queue bound and positions count them.
CREATE INDEX IF NOT EXISTS story_jobs_pending ON story_jobs (created_at, id)
    WHERE status = 'pending';
