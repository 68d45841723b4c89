-- A story's language, and the household's child profiles (issue 21).
--
-- language: the tag of the language the story is written in (en by default, so every
-- story written before is English, as it was).
-- likes: a child's favourite things and characters, copied from its profile when a story
-- is asked for by child_id, so a profile edited later changes no story.
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS language text NOT NULL DEFAULT 'en'
    CONSTRAINT story_jobs_language_known
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl'));
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS likes text
    CONSTRAINT story_jobs_likes_short CHECK (length(likes) BETWEEN 1 AND 200);

CREATE TABLE IF NOT EXISTS children (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 40),
    age        integer CHECK (age BETWEEN 1 AND 12),
    length     text CHECK (length IN ('short', 'medium', 'long')),
    language   text CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl')),
    likes      text CHECK (length(likes) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Intake, as migration 013's, with the language and the likes. The old signature goes.
DROP FUNCTION IF EXISTS intake_job(text, text, text, text, integer, text, bigint, text,
                                   bigint, text, timestamptz, integer, integer, bigint);
CREATE OR REPLACE FUNCTION intake_job(
    p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text,
    p_age integer, p_length text, p_sequel_of bigint, p_previously text,
    p_finish_of bigint, p_carried_text text, p_language text, p_likes text,
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
                            sequel_of, previously, finish_of, carried_text, language, likes)
    VALUES (p_idempotency_key, p_request_hash, p_prompt, p_child_name, p_age, p_length,
            p_sequel_of, p_previously, p_finish_of, p_carried_text, p_language, p_likes)
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job, and the caller asks for a retry, which replays.
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;
