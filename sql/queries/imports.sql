-- A backup's stories put on the shelf, each with a completed job of its own (app/shelf/
-- imports.py): the two job transitions of an import, (new) -> running -> completed, in the
-- import's one transaction.

-- name: import_job
-- (new) -> running: the job of a story restored from a backup, claimed by the import
-- (:importer) at the story's own time, marked imported. Its key is 'import', the unit
-- separator, and the story's uid: no client's key (printable ASCII) can be it (migration
-- 013). NULL: this story was imported already.
-- The request comes as JSON, its columns by name (app/requests.py's to_params), and the
-- job is made by insert_job (sql/functions/insert_job.sql: ON CONFLICT (idempotency_key)
-- DO NOTHING, so NULL when the key is taken).
SELECT (insert_job(CAST(:request AS jsonb) || jsonb_build_object(
           'idempotency_key', 'import' || chr(31) || CAST(:uid AS uuid),
           'request_hash', CAST(:request_hash AS text),
           'sequel_of', (SELECT id FROM stories WHERE uid = :sequel_of_uid),
           'status', 'running', 'created_at', CAST(:created_at AS timestamptz),
           'started_at', CAST(:created_at AS timestamptz),
           'heartbeat_at', CAST(:created_at AS timestamptz),
           'claimed_by', CAST(:importer AS uuid), 'imported', true))).id

-- name: complete_imported_job
-- running -> completed: an imported job, with its story, finished when the story was made.
UPDATE story_jobs
   SET status = 'completed', story_id = :story_id, completed_at = :created_at
 WHERE id = :job_id AND status = 'running'
RETURNING id

-- name: story_by_uid
-- A story restored earlier (or made here) with this stable id, deleted or not.
SELECT id FROM stories WHERE uid = :uid

-- name: import_picture
-- A story's picture from a backup, as it was (byte for byte), drawn by no job here.
INSERT INTO story_pictures (story_id, content_type, image, small_type, small, model)
VALUES (:story_id, :content_type, :image, :small_type, :small, :model)
RETURNING story_id

-- name: import_story
-- A story from a backup, under its own uid, time and favourite mark.
INSERT INTO stories (uid, job_id, title, body, model, prompt_tokens, completion_tokens,
                     created_at, favourite)
VALUES (:uid, :job_id, :title, :body, :model, :prompt_tokens, :completion_tokens,
        :created_at, :favourite)
RETURNING id
