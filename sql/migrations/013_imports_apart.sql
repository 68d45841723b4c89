-- Restored is not requested (issue 20).
--
-- imported: the job of a story restored from a backup (`python -m app import`). Nobody
-- asked for it here: it counts toward no day's limit and is no "latest request" on the
-- home page; only the library shows its story.
--
-- Its idempotency key is 'import' || chr(31) || the story's uid. The unit separator is no
-- printable ASCII, and a client's Idempotency-Key is nothing else, so no client can claim
-- a story's import (making it "already here") or replay an imported job.
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS imported boolean NOT NULL DEFAULT false;

-- The imports made before: jobs claimed by the importer (app.shelf.backup.IMPORTER) under
-- the key 'import-<uid>', which a client could send too.
UPDATE story_jobs j
   SET imported = true, idempotency_key = 'import' || chr(31) || s.uid
  FROM stories s
 WHERE s.job_id = j.id AND j.status = 'completed'
   AND j.claimed_by = '5f1c8489-2b93-5bbb-8e07-79e7e97ee280'
   AND j.idempotency_key = 'import-' || s.uid
RETURNING j.id;

-- Intake, as migration 012's, with imported jobs left out of the day's count.
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
               AND NOT imported
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
