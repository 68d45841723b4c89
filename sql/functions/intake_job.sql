-- The intake: one statement for a new job (sql/queries/jobs.sql, intake_job), defined here
-- once. app/db.py applies this file after the migrations whenever its content changes, so a
-- change is made here, not copied into a new migration (migrations 009 to 016 each had a
-- copy). A new parameter makes a new signature beside the old one, which stays: the release
-- still serving while a deploy's new one starts calls it, and it goes on taking stories
-- (without what the new parameter says). Drop a signature once no release calls it.
--
-- Under the intake lock: the job the key made already (replayed), else, for a finish, the
-- job that finishes that story already, whatever its key (replayed too: a story cut short
-- is finished once, migration 018), else the counts (the queue bound, the day's limit;
-- imported stories count for neither), else the new job and the NOTIFY that wakes a
-- worker at commit.
CREATE OR REPLACE FUNCTION intake_job(
    p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text,
    p_age integer, p_length text, p_sequel_of bigint, p_previously text,
    p_finish_of bigint, p_carried_text text, p_language text, p_likes text,
    p_sibling_name text, p_sibling_age integer,
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
    IF p_finish_of IS NOT NULL THEN
        SELECT * INTO job FROM story_jobs WHERE finish_of = p_finish_of;
        replayed := FOUND;
        IF replayed THEN
            RETURN;
        END IF;
    END IF;
    SELECT count(*) INTO pending
      FROM (SELECT FROM story_jobs WHERE status = 'pending' LIMIT p_queue_max) AS bounded;
    SELECT count(*) INTO used_today
      FROM (SELECT FROM story_jobs
             WHERE created_at >= p_since AND NOT (status = 'failed' AND started_at IS NULL)
               AND NOT imported
             LIMIT p_daily_limit) AS bounded;
    IF pending >= p_queue_max OR used_today >= p_daily_limit THEN
        job := NULL;
        RETURN;
    END IF;
    INSERT INTO story_jobs (idempotency_key, request_hash, prompt, child_name, age, length,
                            sequel_of, previously, finish_of, carried_text, language, likes,
                            sibling_name, sibling_age)
    VALUES (p_idempotency_key, p_request_hash, p_prompt, p_child_name, p_age, p_length,
            p_sequel_of, p_previously, p_finish_of, p_carried_text, p_language, p_likes,
            p_sibling_name, p_sibling_age)
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job, and the caller asks for a retry, which replays.
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;

