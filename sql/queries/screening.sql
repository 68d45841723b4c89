-- A stored story's kid-safe screening (MODERATION=on, app/queue/screener.py): no job's
-- status changes, only whether its story is shown.

-- name: stories_awaiting_screening
-- Stories stored while the moderation endpoint could not answer, oldest first: the
-- periodic re-screening asks about them again.
SELECT id, job_id, title, body FROM stories
 WHERE screening = 'pending' AND deleted_at IS NULL
 ORDER BY created_at, id
 LIMIT :limit

-- name: finish_screening
-- A story's screening ends: 'pending' -> NULL (passed: shown) or 'flagged' (hidden for
-- good). Zero rows: it was not waiting (another process screened it first). The moderation
-- call goes in the ledger at 0 (free at OpenAI), once per job, so the count of calls is
-- honest.
WITH screened AS (
    UPDATE stories SET screening = :screening
     WHERE id = :story_id AND screening = 'pending'
    RETURNING id, job_id
), charged AS (
    INSERT INTO spend (job_id, kind, model, cost_micros, price)
    SELECT job_id, 'moderation', :moderation_model, 0, '{"per_call": "0"}'::jsonb
      FROM screened WHERE job_id IS NOT NULL
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
)
SELECT id FROM screened
