-- A story's picture job (kind 'picture', pending): the one made with a stored story
-- (app/queue/storing.py, in the transaction that stores it) and a redraw's
-- (sql/queries/pictures.sql, insert_picture_job). Its request columns (`p_columns`,
-- app/requests.py's PICTURE_REQUEST_COLUMNS) are copied from the story's own job: who it
-- was for and what they like. Through insert_job, so a key taken already makes nothing
-- (NULL); a second picture while one waits or is drawn fails on migration 024's index.
-- A deleted story gets none. The NOTIFY wakes a worker in any process at commit.
CREATE OR REPLACE FUNCTION insert_picture_job(
    p_story_id bigint, p_idempotency_key text, p_columns text[]
) RETURNS story_jobs LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    job story_jobs;
BEGIN
    -- In FROM, so insert_job runs once (`(f()).*` would call it once per column).
    SELECT made.* INTO job
      FROM stories s JOIN story_jobs j ON j.id = s.job_id,
           LATERAL insert_job(
               (SELECT jsonb_object_agg(key, value) FROM jsonb_each(to_jsonb(j))
                 WHERE key = ANY (p_columns))
               || jsonb_build_object('kind', 'picture', 'picture_of', s.id,
                                     'idempotency_key', p_idempotency_key,
                                     'request_hash', j.request_hash)) AS made
     WHERE s.id = p_story_id AND s.deleted_at IS NULL;
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
    RETURN job;
END
$$;
