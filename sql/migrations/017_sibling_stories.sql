-- A sibling story: one story for two of the household's children (issue 21).
--
-- sibling_name, sibling_age: the second child, copied from their profile when the story
-- was asked for (like likes), so a profile edited later changes no story.
-- likes: a sibling story weaves in both children's favourite things, each profile's (at
-- most 200 characters) joined by "; ", so the bound is theirs together.
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS sibling_name text
    CONSTRAINT story_jobs_sibling_name_short CHECK (length(sibling_name) BETWEEN 1 AND 40);
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS sibling_age integer
    CONSTRAINT story_jobs_sibling_age_range CHECK (sibling_age BETWEEN 1 AND 12);
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_sibling_age_has_name
    CHECK (sibling_age IS NULL OR sibling_name IS NOT NULL);
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_likes_short;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_likes_short
    CHECK (length(likes) BETWEEN 1 AND 402);

-- Intake, as migration 016's, with the sibling. The old signature goes.
DROP FUNCTION IF EXISTS intake_job(text, text, text, text, integer, text, bigint, text,
                                   bigint, text, text, text, timestamptz, integer, integer,
                                   bigint);
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

-- A library row says whom the story was for: both children of a sibling story.
CREATE OR REPLACE VIEW library_rows AS
    SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, s.series_id,
           j.child_name, j.prompt, j.age, j.length, j.sequel_of,
           earlier.title AS sequel_of_title,
           coalesce(array_length(regexp_split_to_array(btrim(s.body), '\s+'), 1), 0) AS words,
           j.sibling_name
      FROM stories s
      JOIN story_jobs j ON j.id = s.job_id
      LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of;

-- The library finds a sibling story by either child's name (as migration 007's, with it).
CREATE OR REPLACE FUNCTION stories_copy_request() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- The job's request, and the series of the story it continues (else a series of its own).
    SELECT j.prompt, nullif(concat_ws(' ', j.child_name, j.sibling_name), ''),
           coalesce(earlier.series_id, NEW.id)
      INTO NEW.search_prompt, NEW.search_name, NEW.series_id
      FROM story_jobs j
      LEFT JOIN stories earlier ON earlier.id = j.sequel_of
     WHERE j.id = NEW.job_id;
    NEW.series_id := coalesce(NEW.series_id, NEW.id);
    RETURN NEW;
END
$$;
