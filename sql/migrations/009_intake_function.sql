-- Job intake in one round trip. Called as one autocommitted statement (`intake_job` in
-- queries.sql), it takes the intake lock, then, one intake at a time in every process,
-- answers a replay with the key's job, or checks the queue bound and the day's limit and
-- inserts the new job, with a NOTIFY for idle workers that goes out at commit. The lock is
-- transaction-scoped: it is let go only after the commit, once the new row is visible.
-- In a VOLATILE function under READ COMMITTED each statement takes a fresh snapshot, so
-- the statements after the lock see every intake committed before it.
-- The counts stop at the bound and the limit: the work stays small however many rows.
-- The day's jobs leave out those that failed without ever being claimed (expired in line).
CREATE OR REPLACE FUNCTION intake_job(
    p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text,
    p_age integer, p_length text, p_sequel_of bigint, p_previously text,
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
                            sequel_of, previously)
    VALUES (p_idempotency_key, p_request_hash, p_prompt, p_child_name, p_age, p_length,
            p_sequel_of, p_previously)
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job, and the caller asks for a retry, which replays.
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;
