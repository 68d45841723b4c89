-- A story's narration: one job (kind 'narration', pending) for each part of its words not
-- read aloud already (sql/queries/narrations.sql, insert_narration_jobs, run by
-- app/queue/narrations.py's make_parts, called only from app/queue/intake.py). `p_texts` are
-- the parts in order, `p_set_asides` what each may cost at most; each part's key is
-- `p_key || ':' || its number`. Its request columns (`p_columns`, app/requests.py's
-- PICTURE_REQUEST_COLUMNS) are copied from the story's own job, as a picture's are.
--
-- Always under the intake lock (p_lock_key, the intake's own), and in this order:
--   'gone'         the story is deleted, or never was: nothing made
--   'replayed'     the key made its jobs before: those (job_ids), nothing made
--   'in_progress'  a part of this story waits or is being read: nothing made
--   'complete'     every part is read aloud already (with these words): the jobs that
--                  read them (job_ids; none for an imported narration), nothing made
--   'over_budget'  with a budget (p_budget_micros), spent + set aside + these parts would
--                  pass it: nothing made (spent and set_aside say the month's money)
--   'made'         the missing parts' jobs (job_ids, in part order), each setting aside
--                  its part's most; the NOTIFY wakes a worker in any process at commit.
CREATE OR REPLACE FUNCTION insert_narration_jobs(
    p_story_id bigint, p_key text, p_texts text[], p_set_asides bigint[], p_columns text[],
    p_budget_micros bigint, p_month_start timestamptz, p_lock_key bigint,
    OUT outcome text, OUT job_ids bigint[], OUT spent bigint, OUT set_aside bigint
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_parts integer := cardinality(p_texts);
    v_missing integer[];
    v_needed bigint;
    v_job story_jobs;
    v_part integer;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    IF NOT EXISTS (SELECT 1 FROM stories WHERE id = p_story_id AND deleted_at IS NULL) THEN
        outcome := 'gone';
        RETURN;
    END IF;
    SELECT array_agg(id ORDER BY narration_part) INTO job_ids FROM story_jobs
     WHERE narration_of = p_story_id AND kind = 'narration'
       AND idempotency_key LIKE p_key || ':%';
    IF job_ids IS NOT NULL THEN
        outcome := 'replayed';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM story_jobs WHERE narration_of = p_story_id
                AND kind = 'narration' AND status IN ('pending', 'running')) THEN
        outcome := 'in_progress';
        RETURN;
    END IF;
    SELECT array_agg(n - 1 ORDER BY n) INTO v_missing
      FROM generate_subscripts(p_texts, 1) AS n
     WHERE NOT EXISTS (SELECT 1 FROM story_narration_parts p
                        WHERE p.story_id = p_story_id AND p.part = n - 1
                          AND p.parts = v_parts AND p.text_md5 = md5(p_texts[n]));
    IF v_missing IS NULL THEN
        outcome := 'complete';
        SELECT array_agg(job_id ORDER BY part) INTO job_ids FROM story_narration_parts
         WHERE story_id = p_story_id AND job_id IS NOT NULL;
        RETURN;
    END IF;
    SELECT coalesce(sum(p_set_asides[m + 1]), 0) INTO v_needed FROM unnest(v_missing) AS m;
    IF p_budget_micros IS NOT NULL THEN
        SELECT m.spent, m.set_aside INTO spent, set_aside FROM month_spend(p_month_start) AS m;
        IF spent + set_aside + v_needed > p_budget_micros THEN
            outcome := 'over_budget';
            RETURN;
        END IF;
    END IF;
    job_ids := ARRAY[]::bigint[];
    FOREACH v_part IN ARRAY v_missing LOOP
        -- In FROM, so insert_job runs once (`(f()).*` would call it once per column).
        SELECT made.* INTO v_job
          FROM stories s JOIN story_jobs j ON j.id = s.job_id,
               LATERAL insert_job(
                   (SELECT jsonb_object_agg(key, value) FROM jsonb_each(to_jsonb(j))
                     WHERE key = ANY (p_columns))
                   || jsonb_build_object('kind', 'narration', 'narration_of', s.id,
                                         'narration_part', v_part, 'narration_parts', v_parts,
                                         'narration_text', p_texts[v_part + 1],
                                         'idempotency_key', p_key || ':' || v_part,
                                         'request_hash', j.request_hash,
                                         'set_aside_micros',
                                         coalesce(p_set_asides[v_part + 1], 0))) AS made
         WHERE s.id = p_story_id;
        job_ids := job_ids || v_job.id;
    END LOOP;
    outcome := 'made';
    PERFORM pg_notify('story_jobs', job_ids[1]::text);
END
$$;
