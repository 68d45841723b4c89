-- Money (app/money/): a ledger of every billed call, and each live job's set-aside.
--
-- spend: one row per billed call, written in the statement that stores what it paid for
-- (the story, with insert_story; the picture, with complete_picture_job), so a call is
-- counted once and never lost; a story's screening is recorded at 0 (free at OpenAI). The
-- price is kept as it was used: a later price change rewrites no history.
CREATE TABLE spend (
    id bigserial PRIMARY KEY,
    job_id bigint REFERENCES story_jobs (id) ON DELETE SET NULL,
    kind text NOT NULL CONSTRAINT spend_kind_known
        CHECK (kind IN ('story', 'picture', 'moderation')),
    child_name text,
    model text NOT NULL,
    input_tokens bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    cached_tokens bigint NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0),
    output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    images integer NOT NULL DEFAULT 0 CHECK (images >= 0),
    price jsonb,  -- NULL: the model had no price (it cost 0, and the page names it)
    cost_micros bigint NOT NULL CHECK (cost_micros >= 0),
    estimated boolean NOT NULL DEFAULT false,  -- no usage reported: costed by its set-aside
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX spend_one_call_per_job ON spend (job_id, kind) WHERE job_id IS NOT NULL;
CREATE INDEX spend_by_time ON spend (created_at);

-- The most a job can still cost, set aside against the month when it is accepted. It is
-- counted while the job is pending or running, so every transition out of them releases it
-- (a completion, a failure, a sweep after a crash) with no statement of its own.
ALTER TABLE story_jobs
    ADD COLUMN set_aside_micros bigint NOT NULL DEFAULT 0
        CONSTRAINT story_jobs_set_aside_not_negative CHECK (set_aside_micros >= 0);
