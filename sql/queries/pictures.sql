-- A story's picture: its jobs (kind 'picture', claimed, swept and failed by jobs.sql's
-- statements) and the picture stored (story_pictures). The function that makes a picture
-- job: sql/functions/insert_picture_job.sql.

-- name: insert_picture_job
-- (new) -> pending: the picture job of a story just stored, in the transaction that
-- stores it, or a redraw's (:idempotency_key is 'picture:<story id>[:<client key>]').
-- NULL id: the key made one already (replayed), or the story is deleted. With a budget
-- (:budget_micros), made skipped (failed 'over_budget') when one picture has no room.
SELECT (i.job).*, i.over_budget
  FROM insert_picture_job(:story_id, :idempotency_key, CAST(:columns AS text[]),
                          CAST(:set_aside AS bigint), CAST(:budget_micros AS bigint),
                          CAST(:month_start AS timestamptz), :lock_key) AS i

-- name: complete_picture_job
-- running -> completed, or failed ('interrupted') -> completed by the worker that still
-- owned it (alive, cut off from the database: the picture was paid for), storing its
-- picture in the same statement: a completed picture job always has its picture, which
-- replaces the story's earlier one, and its call in the ledger (`spend`), once. No row: not
-- ours any more (nothing stored).
WITH done AS (
    UPDATE story_jobs
       SET status = 'completed', error_text = NULL, completed_at = now()
     WHERE id = :job_id AND kind = 'picture' AND claimed_by = :boot_id
       AND (status = 'running' OR (status = 'failed' AND error_text = 'interrupted'))
    RETURNING id, picture_of
), charged AS (
    INSERT INTO spend (job_id, kind, child_name, model, input_tokens, cached_tokens,
                       output_tokens, images, price, cost_micros, estimated)
    SELECT id, CAST(:spend_kind AS text), :spend_child, :spend_model, :input_tokens,
           :cached_tokens, :output_tokens, :images, CAST(:price AS jsonb), :cost_micros,
           :estimated
      FROM done WHERE CAST(:cost_micros AS bigint) IS NOT NULL
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
)
INSERT INTO story_pictures (story_id, job_id, content_type, image, small_type, small, model)
SELECT picture_of, id, :content_type, :image, :small_type, :small, :model FROM done
ON CONFLICT (story_id) DO UPDATE
   SET job_id = EXCLUDED.job_id, content_type = EXCLUDED.content_type,
       image = EXCLUDED.image, small_type = EXCLUDED.small_type, small = EXCLUDED.small,
       model = EXCLUDED.model, created_at = now()
RETURNING story_id AS id

-- name: picture_states
-- Where each story's picture stands (migration 024's view); stories deleted are left out.
SELECT ps.*
  FROM story_picture_states ps JOIN stories s ON s.id = ps.story_id
 WHERE ps.story_id = ANY (CAST(:story_ids AS bigint[])) AND s.deleted_at IS NULL

-- name: picture_image
-- A story's picture to serve, whole or small.
SELECT CASE WHEN :small THEN p.small_type ELSE p.content_type END AS content_type,
       CASE WHEN :small THEN p.small ELSE p.image END AS image,
       CASE WHEN :small THEN p.small_etag ELSE p.etag END AS etag
  FROM story_pictures p JOIN stories s ON s.id = p.story_id
 WHERE p.story_id = :story_id AND s.deleted_at IS NULL

-- name: picture_for_drawing
-- What a picture job draws from: its story's title and text.
SELECT s.title, s.body FROM stories s WHERE s.id = :story_id
