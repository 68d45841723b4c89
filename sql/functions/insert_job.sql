-- A job's one INSERT, from its columns as JSON (each key a story_jobs column, each value as
-- jsonb_populate_record reads it): the intake's (intake_job.sql) and a backup's import's
-- (import_job). A column not named gets its default, so a request's new column needs no
-- change here (app/requests.py names a request's columns). The statement is a static one,
-- planned once per connection (a dynamic INSERT naming only the keys given was planned at
-- every call: 0.65 ms of each POST /stories/generate), so the columns whose default is
-- not NULL are given it here, as the table does; tests/queue/test_insert_job.py fails when
-- a migration adds one this does not know.
-- A job whose key is taken already is not made: NULL (the callers' guard).
CREATE OR REPLACE FUNCTION insert_job(p_columns jsonb) RETURNS story_jobs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    job story_jobs;
BEGIN
    INSERT INTO story_jobs
    SELECT * FROM jsonb_populate_record(NULL::story_jobs, jsonb_build_object(
        'id', nextval('story_jobs_id_seq'), 'status', 'pending', 'created_at', now(),
        'text_so_far', '', 'imported', false, 'language', 'en', 'kind', 'story',
        'set_aside_micros', 0) || p_columns)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    RETURN job;
END
$$;
