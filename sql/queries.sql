-- Every statement that reads or writes a job or a story. The status transitions are all
-- here: each is an UPDATE guarded by the status it expects, ending in RETURNING id, so no
-- row back means another writer got there first and this one changed nothing.

-- name: lock_job_intake
-- Serialises job creation (transaction-scoped), so the replay check, the daily count and
-- the insert see one consistent picture even when 50 copies of a request race.
SELECT pg_advisory_xact_lock(:lock_key)::text

-- name: create_job
-- (new) -> pending. Zero rows: the key exists already, so this request is a replay.
INSERT INTO story_jobs (idempotency_key, request_hash, prompt, child_name, age, length)
VALUES (:idempotency_key, :request_hash, :prompt, :child_name, :age, :length)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING *

-- name: get_job
-- One job by id.
SELECT * FROM story_jobs WHERE id = :job_id

-- name: get_job_by_key
-- The job an idempotency key made, if any.
SELECT * FROM story_jobs WHERE idempotency_key = :idempotency_key

-- name: count_jobs_since
-- Jobs created since a moment (the household's midnight), for the daily limit.
SELECT count(*) FROM story_jobs WHERE created_at >= :since

-- name: claim_job
-- pending -> running: the worker takes the job it was handed, stamping its boot id.
UPDATE story_jobs
   SET status = 'running', started_at = now(), heartbeat_at = now(), claimed_by = :boot_id
 WHERE id = :job_id AND status = 'pending'
RETURNING *

-- name: beat_heartbeat
-- running (no change): the worker is alive and still waiting for the storyteller.
UPDATE story_jobs
   SET heartbeat_at = now()
 WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
RETURNING id

-- name: insert_story
-- Stores a written story, once per job: a retry returns the id of the first insert.
WITH inserted AS (
    INSERT INTO stories (job_id, title, body, model, prompt_tokens, completion_tokens)
    VALUES (:job_id, :title, :body, :model, :prompt_tokens, :completion_tokens)
    ON CONFLICT (job_id) DO NOTHING
    RETURNING id
)
SELECT id FROM inserted
UNION ALL
SELECT id FROM stories WHERE job_id = :job_id
LIMIT 1

-- name: complete_job
-- running -> completed, pointing at its story.
UPDATE story_jobs
   SET status = 'completed', story_id = :story_id, completed_at = now()
 WHERE id = :job_id AND status = 'running'
RETURNING id

-- name: fail_job
-- running -> failed, with a short reason for the family (the full error goes to the log).
UPDATE story_jobs
   SET status = 'failed', error_text = :error_text, completed_at = now()
 WHERE id = :job_id AND status = 'running'
RETURNING id

-- name: sweep_dead_running
-- running -> failed ('interrupted'): the worker's heartbeat stopped, so its process died.
UPDATE story_jobs
   SET status = 'failed', error_text = 'interrupted', completed_at = now()
 WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => :stale_s)
RETURNING id

-- name: sweep_expired_pending
-- pending -> failed ('expired'): waited too long and no live queue holds it.
UPDATE story_jobs
   SET status = 'failed', error_text = 'expired', completed_at = now()
 WHERE status = 'pending'
   AND created_at < now() - make_interval(secs => :threshold_s)
   AND NOT (id = ANY(:held_ids))
RETURNING id

-- name: seconds_until_next_stale
-- When the oldest heartbeat of another process's running job goes stale, in seconds.
SELECT extract(epoch FROM min(heartbeat_at) + make_interval(secs => :stale_s) - now())::float8
  FROM story_jobs
 WHERE status = 'running' AND claimed_by IS DISTINCT FROM :boot_id

-- name: pending_job_ids
-- Jobs still waiting, oldest first: re-enqueued at start-up.
SELECT id FROM story_jobs WHERE status = 'pending' ORDER BY created_at, id

-- name: recent_jobs
-- Unfinished jobs and those finished in the last few minutes, newest first.
SELECT * FROM story_jobs
 WHERE status IN ('pending', 'running')
    OR completed_at > now() - make_interval(secs => :recent_s)
 ORDER BY id DESC
 LIMIT :limit

-- name: get_story
-- One story still on the shelf, with the request that made it.
SELECT s.*, j.prompt, j.child_name, j.age, j.length
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.id = :story_id AND s.deleted_at IS NULL

-- name: list_stories
-- The stories on the shelf, newest first (the JSON library and the home page).
SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, j.child_name
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.deleted_at IS NULL
 ORDER BY s.created_at DESC, s.id DESC
 LIMIT :limit

-- name: search_library
-- The household library: favourites first, then newest; :search ('' for all) is matched,
-- case-insensitively and literally (no wildcards), against the title or the child's name.
SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, j.child_name
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.deleted_at IS NULL
   AND (:search = ''
        OR strpos(lower(s.title), lower(:search)) > 0
        OR strpos(lower(coalesce(j.child_name, '')), lower(:search)) > 0)
 ORDER BY s.favourite DESC, s.created_at DESC, s.id DESC
 LIMIT :limit

-- name: delete_story
-- Takes a story off the shelf (soft: its job still points at it). Zero rows: not there.
UPDATE stories SET deleted_at = now()
 WHERE id = :story_id AND deleted_at IS NULL
RETURNING id

-- name: set_favourite
-- Marks or unmarks a story on the shelf as a favourite. Zero rows: not there.
UPDATE stories SET favourite = :favourite
 WHERE id = :story_id AND deleted_at IS NULL
RETURNING id

-- name: story_title
-- The title of a story still on the shelf, for a finished job's status card.
SELECT title FROM stories WHERE id = :story_id AND deleted_at IS NULL

-- name: last_request
-- The newest job's request: the form's defaults, so a parent can tap once.
SELECT prompt, child_name, age, length FROM story_jobs ORDER BY id DESC LIMIT 1

-- name: median_duration_s
-- How long the last 20 completed stories took to write (start to finish), in seconds.
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds)::float8
  FROM (SELECT extract(epoch FROM completed_at - started_at) AS seconds
          FROM story_jobs
         WHERE status = 'completed'
         ORDER BY completed_at DESC
         LIMIT 20) AS recent

-- name: check_completed_without_story
-- Invariant: a completed job points at a story that exists.
SELECT j.id FROM story_jobs j LEFT JOIN stories s ON s.id = j.story_id
 WHERE j.status = 'completed' AND s.id IS NULL
 ORDER BY j.id

-- name: check_orphaned_stories
-- Stories whose job did not complete with them: written, paid for, then the sweeper won.
SELECT s.id FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE j.status <> 'completed' OR j.story_id IS DISTINCT FROM s.id
 ORDER BY s.id

-- name: check_dead_running
-- Invariant: a running job has a live heartbeat (else the sweeper should have failed it).
SELECT id FROM story_jobs
 WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => :stale_s)
 ORDER BY id

-- name: check_stranded_pending
-- Invariant: an old pending job is held by a live queue, i.e. some worker is alive and busy.
SELECT id FROM story_jobs
 WHERE status = 'pending'
   AND created_at < now() - make_interval(secs => :threshold_s)
   AND NOT EXISTS (SELECT 1 FROM story_jobs busy
                    WHERE busy.status = 'running'
                      AND busy.heartbeat_at >= now() - make_interval(secs => :stale_s))
 ORDER BY id
