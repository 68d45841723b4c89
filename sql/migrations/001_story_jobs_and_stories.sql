-- The job table is the queue's source of truth: one row per requested story, whose
-- status only ever moves pending -> running -> completed, or to failed from either.
CREATE TABLE story_jobs (
    id              bigserial PRIMARY KEY,
    idempotency_key text NOT NULL UNIQUE
                    CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    request_hash    text NOT NULL,
    prompt          text NOT NULL CHECK (length(prompt) BETWEEN 1 AND 500),
    child_name      text CHECK (length(child_name) BETWEEN 1 AND 40),
    age             integer CHECK (age BETWEEN 1 AND 12),
    length          text NOT NULL CHECK (length IN ('short', 'medium', 'long')),
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    story_id        bigint,
    error_text      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    heartbeat_at    timestamptz,
    claimed_by      uuid,
    completed_at    timestamptz,
    -- A row cannot lie about its state.
    CONSTRAINT completed_has_story CHECK ((status = 'completed') = (story_id IS NOT NULL)),
    CONSTRAINT failed_has_error CHECK ((status = 'failed') = (error_text IS NOT NULL)),
    CONSTRAINT finished_has_time
        CHECK ((status IN ('completed', 'failed')) = (completed_at IS NOT NULL)),
    CONSTRAINT started_was_claimed
        CHECK ((started_at IS NULL) = (claimed_by IS NULL) AND (started_at IS NULL) = (heartbeat_at IS NULL)),
    CONSTRAINT running_was_claimed CHECK (status <> 'running' OR started_at IS NOT NULL),
    CONSTRAINT pending_not_claimed CHECK (status <> 'pending' OR started_at IS NULL)
);

-- One story per job at most: a retried insert after a database hiccup finds the first.
CREATE TABLE stories (
    id                bigserial PRIMARY KEY,
    job_id            bigint NOT NULL UNIQUE REFERENCES story_jobs (id),
    title             text NOT NULL,
    body              text NOT NULL,
    model             text NOT NULL,
    prompt_tokens     integer,
    completion_tokens integer,
    created_at        timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE story_jobs
    ADD CONSTRAINT story_jobs_story_fk FOREIGN KEY (story_id) REFERENCES stories (id);

-- The sweeper and start-up only ever look at unfinished rows; keep that scan small.
CREATE INDEX story_jobs_unfinished ON story_jobs (status, created_at)
    WHERE status IN ('pending', 'running');
-- The daily limit counts the jobs created since midnight.
CREATE INDEX story_jobs_created_at ON story_jobs (created_at);
CREATE INDEX stories_created_at ON stories (created_at DESC);
