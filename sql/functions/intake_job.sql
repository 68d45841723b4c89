-- The intake: one statement for a new job (sql/queries/jobs.sql, intake_job), defined here
-- once. app/db.py applies this file after the migrations whenever its content changes, so a
-- change is made here, not copied into a new migration (migrations 009 to 016 each had a
-- copy). The request comes as one JSON object, its columns by name (app/requests.py,
-- to_params), so a request's new field changes no signature. A changed signature makes a
-- new one beside the old, which stays: the release still serving while a deploy's new one
-- starts calls it, and it goes on taking stories. Drop a signature once no release calls it.
--
-- Under the intake lock: the job the key made already (replayed), else, for a finish, the
-- job that finishes that story already, whatever its key (replayed too: a story cut short
-- is finished once, migration 018), else the counts (the queue bound, the day's limit;
-- imported stories count for neither, nor do pictures), else the month's budget (when
-- p_budget_micros is set: spent + set aside + this job's set-aside, `set_aside_micros` in
-- the request, must stay within it), else the new job and the NOTIFY that wakes a worker
-- at commit.
CREATE OR REPLACE FUNCTION intake_job(
    p_request jsonb, p_idempotency_key text, p_request_hash text,
    p_since timestamptz, p_queue_max integer, p_daily_limit integer, p_lock_key bigint,
    p_budget_micros bigint, p_month_start timestamptz,
    OUT job story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint,
    OUT spent_micros bigint, OUT set_aside_micros bigint
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_finish_of bigint := (p_request ->> 'finish_of')::bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    SELECT * INTO job FROM story_jobs WHERE idempotency_key = p_idempotency_key;
    replayed := FOUND;
    IF replayed THEN
        RETURN;
    END IF;
    IF v_finish_of IS NOT NULL THEN
        SELECT * INTO job FROM story_jobs WHERE finish_of = v_finish_of;
        replayed := FOUND;
        IF replayed THEN
            RETURN;
        END IF;
    END IF;
    SELECT count(*) INTO pending
      FROM (SELECT FROM story_jobs WHERE status = 'pending' AND kind = 'story'
             LIMIT p_queue_max) AS bounded;
    SELECT count(*) INTO used_today
      FROM (SELECT FROM story_jobs
             WHERE created_at >= p_since AND NOT (status = 'failed' AND started_at IS NULL)
               AND NOT imported AND kind = 'story'
             LIMIT p_daily_limit) AS bounded;
    IF pending >= p_queue_max OR used_today >= p_daily_limit THEN
        job := NULL;
        RETURN;
    END IF;
    -- The month's budget: what was spent, what live jobs set aside, and this job's most.
    IF p_budget_micros IS NOT NULL THEN
        SELECT m.spent, m.set_aside INTO spent_micros, set_aside_micros
          FROM month_spend(p_month_start) AS m;
        IF spent_micros + set_aside_micros
           + coalesce((p_request ->> 'set_aside_micros')::bigint, 0) > p_budget_micros THEN
            job := NULL;
            RETURN;
        END IF;
    END IF;
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job (insert_job's NULL), and the caller asks for a retry, which replays.
    job := insert_job(p_request || jsonb_build_object('idempotency_key', p_idempotency_key,
                                                      'request_hash', p_request_hash));
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;

-- The previous release's call (before the budget), until no release makes it: no budget.
CREATE OR REPLACE FUNCTION intake_job(
    p_request jsonb, p_idempotency_key text, p_request_hash text,
    p_since timestamptz, p_queue_max integer, p_daily_limit integer, p_lock_key bigint,
    OUT job story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint
) LANGUAGE sql VOLATILE AS $$
    SELECT i.job, i.replayed, i.pending, i.used_today
      FROM intake_job(p_request, p_idempotency_key, p_request_hash, p_since, p_queue_max,
                      p_daily_limit, p_lock_key, NULL, NULL) AS i
$$;

-- The release before that's call (a request's fields one by one), until no release makes it.
CREATE OR REPLACE FUNCTION intake_job(
    p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text,
    p_age integer, p_length text, p_sequel_of bigint, p_previously text,
    p_finish_of bigint, p_carried_text text, p_language text, p_likes text,
    p_sibling_name text, p_sibling_age integer,
    p_since timestamptz, p_queue_max integer, p_daily_limit integer, p_lock_key bigint,
    OUT job story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint
) LANGUAGE sql VOLATILE AS $$
    SELECT i.job, i.replayed, i.pending, i.used_today
      FROM intake_job(jsonb_build_object(
               'prompt', p_prompt, 'child_name', p_child_name, 'age', p_age,
               'length', p_length, 'sequel_of', p_sequel_of, 'previously', p_previously,
               'finish_of', p_finish_of, 'carried_text', p_carried_text,
               'language', p_language, 'likes', p_likes, 'sibling_name', p_sibling_name,
               'sibling_age', p_sibling_age),
           p_idempotency_key, p_request_hash, p_since, p_queue_max, p_daily_limit,
           p_lock_key) AS i
$$;
