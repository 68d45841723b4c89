-- Scheduled work, done once by whichever process is free (the nightly backup): a row per
-- schedule. A process takes a turn by moving next_at on, in one guarded UPDATE
-- (claim_schedule); the loser of a race gets no row back. No lock is held while the work
-- is done. The outcome of the last turn is kept here too, so every process's home page
-- can say when the last good backup was, and that the last one failed.
CREATE TABLE IF NOT EXISTS schedules (
    name          text PRIMARY KEY CHECK (length(name) <= 100),
    every_s       double precision NOT NULL CHECK (every_s > 0),
    next_at       timestamptz NOT NULL,
    claimed_at    timestamptz,           -- the last turn taken (a backup file is named by it)
    last_ok_at    timestamptz,           -- the last turn that succeeded
    last_file     text,                  -- what it wrote
    last_error    text,                  -- why the last turn failed, in a short phrase;
    last_error_at timestamptz            --   NULL since the last success
);
