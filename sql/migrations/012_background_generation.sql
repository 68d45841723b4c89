-- Background generation (LLM_API=responses), stopping, and finishing a story cut short.
--
-- response_id: the provider's id for the one billed request (a background response),
-- saved before anything else once the provider answers. From then on the story can be
-- followed by any process, by id, from the last event seen (response_sequence), for free.
-- A running job with an id and no live owner is adopted, never swept.
--
-- Handing over: on SIGTERM an owner clears claimed_by on its running jobs, so a running
-- job may now be unowned (it was claimed once: started_at and heartbeat_at stay set).
--
-- cancel_requested_at: the family asked to stop it; its owner closes the stream or
-- cancels the response at the provider, then fails the job 'cancelled'.
--
-- finish_of / carried_text: a job that finishes a story cut short (another job's kept
-- words): carried_text is those words, cut at their last whole sentence, which the one
-- call sends and the story begins with.
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS response_id text
    CONSTRAINT story_jobs_response_id_short CHECK (length(response_id) BETWEEN 1 AND 200);
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS response_sequence bigint;
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS cancel_requested_at timestamptz;
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS finish_of bigint
    REFERENCES story_jobs (id) ON DELETE SET NULL;
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS carried_text text
    CONSTRAINT story_jobs_carried_text_short CHECK (length(carried_text) <= 20000);

ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS started_was_claimed;
ALTER TABLE story_jobs ADD CONSTRAINT started_was_claimed
    CHECK ((started_at IS NULL) = (heartbeat_at IS NULL)
           AND (started_at IS NOT NULL OR claimed_by IS NULL));
ALTER TABLE story_jobs ADD CONSTRAINT handed_over_had_response
    CHECK (claimed_by IS NOT NULL OR started_at IS NULL OR status <> 'running'
           OR response_id IS NOT NULL);

-- Adoption looks only at running jobs with a response id.
CREATE INDEX IF NOT EXISTS story_jobs_adoptable ON story_jobs (heartbeat_at)
    WHERE status = 'running' AND response_id IS NOT NULL;

-- Intake, as migration 009's, with the finish columns. The old signature goes.
DROP FUNCTION IF EXISTS intake_job(text, text, text, text, integer, text, bigint, text,
                                   timestamptz, integer, integer, bigint);
CREATE OR REPLACE FUNCTION intake_job(
    p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text,
    p_age integer, p_length text, p_sequel_of bigint, p_previously text,
    p_finish_of bigint, p_carried_text text,
    p_since timestamptz, p_queue_max integer, p_daily_limit integer, p_lock_key bigint,
    OUT job story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint
) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    SELECT * INTO job FROM story_jobs WHERE idempotency_key = p_idempotency_key;
    replayed := FOUND;
    IF replayed THEN
        RETURN;
    END IF;
    SELECT count(*) INTO pending
      FROM (SELECT FROM story_jobs WHERE status = 'pending' LIMIT p_queue_max) AS bounded;
    SELECT count(*) INTO used_today
      FROM (SELECT FROM story_jobs
             WHERE created_at >= p_since AND NOT (status = 'failed' AND started_at IS NULL)
             LIMIT p_daily_limit) AS bounded;
    IF pending >= p_queue_max OR used_today >= p_daily_limit THEN
        job := NULL;
        RETURN;
    END IF;
    INSERT INTO story_jobs (idempotency_key, request_hash, prompt, child_name, age, length,
                            sequel_of, previously, finish_of, carried_text)
    VALUES (p_idempotency_key, p_request_hash, p_prompt, p_child_name, p_age, p_length,
            p_sequel_of, p_previously, p_finish_of, p_carried_text)
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job, and the caller asks for a retry, which replays.
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;
