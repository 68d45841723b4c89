-- A story's picture job (kind 'picture', pending): the one made with a stored story
-- (app/queue/storing.py, in the transaction that stores it) and a redraw's
-- (sql/queries/pictures.sql, insert_picture_job). Its request columns (`p_columns`,
-- app/requests.py's PICTURE_REQUEST_COLUMNS) are copied from the story's own job: who it
-- was for and what they like. Through insert_job, so a key taken already makes nothing
-- (NULL); a second picture while one waits or is drawn fails on migration 024's index.
-- A deleted story gets none. The NOTIFY wakes a worker in any process at commit.
--
-- With a budget (p_budget_micros), under the intake lock (p_lock_key, the intake's own):
-- the job sets aside p_set_aside against the month (sql/functions/month_spend.sql), or,
-- when spent + set aside + one picture would pass the budget, it is made skipped: failed
-- 'over_budget', drawn by nobody, setting nothing aside (over_budget true).
CREATE OR REPLACE FUNCTION insert_picture_job(
    p_story_id bigint, p_idempotency_key text, p_columns text[],
    p_set_aside bigint, p_budget_micros bigint, p_month_start timestamptz, p_lock_key bigint,
    OUT job story_jobs, OUT over_budget boolean
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_spent bigint;
    v_set_aside bigint;
BEGIN
    over_budget := false;
    IF p_budget_micros IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock_key);
        SELECT m.spent, m.set_aside INTO v_spent, v_set_aside FROM month_spend(p_month_start) AS m;
        over_budget := v_spent + v_set_aside + p_set_aside > p_budget_micros;
    END IF;
    -- In FROM, so insert_job runs once (`(f()).*` would call it once per column).
    SELECT made.* INTO job
      FROM stories s JOIN story_jobs j ON j.id = s.job_id,
           LATERAL insert_job(
               (SELECT jsonb_object_agg(key, value) FROM jsonb_each(to_jsonb(j))
                 WHERE key = ANY (p_columns))
               || jsonb_build_object('kind', 'picture', 'picture_of', s.id,
                                     'idempotency_key', p_idempotency_key,
                                     'request_hash', j.request_hash,
                                     'set_aside_micros', coalesce(p_set_aside, 0))
               || CASE WHEN over_budget THEN jsonb_build_object(
                      'status', 'failed', 'error_text', 'over_budget',
                      'completed_at', now(), 'set_aside_micros', 0)
                  ELSE '{}'::jsonb END) AS made
     WHERE s.id = p_story_id AND s.deleted_at IS NULL;
    IF job.id IS NOT NULL AND NOT over_budget THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;

-- The previous release's call (before the budget), until no release makes it.
CREATE OR REPLACE FUNCTION insert_picture_job(
    p_story_id bigint, p_idempotency_key text, p_columns text[]
) RETURNS story_jobs LANGUAGE sql VOLATILE AS $$
    SELECT (i.job).* FROM insert_picture_job(p_story_id, p_idempotency_key, p_columns,
                                            0, NULL, NULL, NULL) AS i
$$;
