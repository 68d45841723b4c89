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
-- One job by id; while pending, also its place in line (1 = next to be claimed).
SELECT j.*,
       CASE WHEN j.status = 'pending' THEN
           (SELECT count(*) FROM story_jobs ahead
             WHERE ahead.status = 'pending'
               AND (ahead.created_at, ahead.id) <= (j.created_at, j.id))
       END AS position
  FROM story_jobs j
 WHERE j.id = :job_id

-- name: get_job_by_key
-- The job an idempotency key made, if any.
SELECT * FROM story_jobs WHERE idempotency_key = :idempotency_key

-- name: count_jobs_since
-- Jobs created since a moment (the household's midnight), for the daily limit.
SELECT count(*) FROM story_jobs WHERE created_at >= :since

-- name: count_pending
-- Jobs waiting in the whole database (every process's), for QUEUE_MAX and /healthz.
SELECT count(*) FROM story_jobs WHERE status = 'pending'

-- name: notify_job_created
-- Inside the intake transaction: wakes an idle worker in any process when it commits.
SELECT pg_notify('story_jobs', :job_id)::text

-- name: claim_next_job
-- pending -> running: an idle worker takes the oldest waiting job, stamping its boot id.
-- SKIP LOCKED lets workers in any number of processes claim side by side; the outer
-- status guard makes a claim that lost a race a no-op (no row back: nothing to run).
UPDATE story_jobs
   SET status = 'running', started_at = now(), heartbeat_at = now(), claimed_by = :boot_id
 WHERE id = (SELECT id FROM story_jobs
              WHERE status = 'pending'
              ORDER BY created_at, id
              FOR UPDATE SKIP LOCKED
              LIMIT 1)
   AND status = 'pending'
RETURNING *

-- name: beat_heartbeat
-- running (no change): the worker is alive and still waiting for the storyteller.
UPDATE story_jobs
   SET heartbeat_at = now()
 WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
RETURNING id

-- name: insert_story
-- Stores a written story, once per job: a retry returns the id of the first insert. It
-- beats the job's heartbeat in the same statement, taking the job's row lock first, so a
-- sweep can never judge the job dead between the story landing and the job completing.
-- :screening is NULL (shown) or 'pending' (hidden until screened, with MODERATION=on).
WITH beat AS (
    UPDATE story_jobs SET heartbeat_at = now()
     WHERE id = :job_id AND status = 'running'
    RETURNING id
), inserted AS (
    INSERT INTO stories (job_id, title, body, model, prompt_tokens, completion_tokens,
                         screening)
    VALUES (:job_id, :title, :body, :model, :prompt_tokens, :completion_tokens, :screening)
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
-- Never once its story is stored: that job is completed (by its worker, or by recovery).
UPDATE story_jobs
   SET status = 'failed', error_text = :error_text, completed_at = now()
 WHERE id = :job_id AND status = 'running'
   AND NOT EXISTS (SELECT 1 FROM stories WHERE job_id = :job_id)
RETURNING id

-- name: sweep_dead_running
-- running -> completed, or running -> failed ('interrupted'): the job's heartbeat stopped,
-- so its process died. A story it had already stored was paid for: the job completes
-- with it. Otherwise the story never came and the job fails.
UPDATE story_jobs
   SET status = CASE WHEN stored.id IS NULL THEN 'failed' ELSE 'completed' END,
       story_id = stored.id,
       error_text = CASE WHEN stored.id IS NULL THEN 'interrupted' END,
       completed_at = now()
  FROM story_jobs dead
  LEFT JOIN stories stored ON stored.job_id = dead.id
 WHERE story_jobs.id = dead.id
   AND story_jobs.status = 'running'
   AND story_jobs.heartbeat_at < now() - make_interval(secs => :stale_s)
RETURNING story_jobs.id, story_jobs.status

-- name: sweep_expired_pending
-- pending -> failed ('expired'): waited past the threshold while no worker was alive to
-- run it (no process that runs jobs has beaten within the threshold). With a live
-- worker, a queue of any depth drains instead.
UPDATE story_jobs
   SET status = 'failed', error_text = 'expired', completed_at = now()
 WHERE status = 'pending'
   AND created_at < now() - make_interval(secs => :threshold_s)
   AND NOT EXISTS (SELECT 1 FROM workers
                    WHERE concurrency > 0
                      AND heartbeat_at >= now() - make_interval(secs => :threshold_s))
RETURNING id

-- name: seconds_until_next_stale
-- When the oldest heartbeat of another process's running job goes stale, in seconds.
SELECT extract(epoch FROM min(heartbeat_at) + make_interval(secs => :stale_s) - now())::float8
  FROM story_jobs
 WHERE status = 'running' AND claimed_by IS DISTINCT FROM :boot_id

-- name: register_process
-- A process starts: it is alive from now on (and runs `concurrency` jobs at once).
INSERT INTO workers (boot_id, host, pid, concurrency)
VALUES (:boot_id, :host, :pid, :concurrency)
ON CONFLICT (boot_id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL
RETURNING boot_id

-- name: beat_process
-- A process is still alive. No row back: it was pruned as dead, so it registers again.
UPDATE workers SET heartbeat_at = now()
 WHERE boot_id = :boot_id AND stopped_at IS NULL
RETURNING boot_id

-- name: stop_process
-- A process shut down cleanly: its last sign of life is now.
UPDATE workers SET heartbeat_at = now(), stopped_at = now()
 WHERE boot_id = :boot_id
RETURNING boot_id

-- name: prune_processes
-- Forget processes silent for a week (longer than any expiry threshold).
DELETE FROM workers WHERE heartbeat_at < now() - interval '7 days'
RETURNING boot_id

-- name: recent_jobs
-- Unfinished jobs and those finished in the last few minutes, newest first; while
-- pending, each with its place in line.
-- (Every pending job is in the selection, so counting along it gives the place in line.)
SELECT j.*,
       CASE WHEN j.status = 'pending' THEN
           count(*) FILTER (WHERE j.status = 'pending')
               OVER (ORDER BY j.created_at, j.id ROWS UNBOUNDED PRECEDING)
       END AS position
  FROM story_jobs j
 WHERE j.status IN ('pending', 'running')
    OR j.completed_at > now() - make_interval(secs => :recent_s)
 ORDER BY j.id DESC
 LIMIT :limit

-- name: get_story
-- One story still on the shelf (not deleted, not hidden by screening), with the request
-- that made it.
SELECT s.*, j.prompt, j.child_name, j.age, j.length
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.id = :story_id AND s.deleted_at IS NULL AND s.screening IS NULL

-- name: list_stories
-- The stories on the shelf, newest first (the JSON library and the home page).
SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, j.child_name
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.deleted_at IS NULL AND s.screening IS NULL
 ORDER BY s.created_at DESC, s.id DESC
 LIMIT :limit

-- name: search_library
-- The household library: favourites first, then newest; :search ('' for all) is matched,
-- case-insensitively and literally (no wildcards), against the title or the child's name.
SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, j.child_name
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.deleted_at IS NULL AND s.screening IS NULL
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
 WHERE id = :story_id AND deleted_at IS NULL AND screening IS NULL
RETURNING id

-- name: story_title
-- The title of a story still on the shelf (not deleted, not hidden by screening).
SELECT title FROM stories WHERE id = :story_id AND deleted_at IS NULL AND screening IS NULL

-- name: story_for_card
-- A finished job's story as its status card shows it: the title and where its screening
-- stands (NULL: shown; 'pending': being checked; 'flagged': cannot be shown). No row: the
-- story was deleted from the shelf.
SELECT title, screening FROM stories WHERE id = :story_id AND deleted_at IS NULL

-- name: stories_awaiting_screening
-- Stories stored while the moderation endpoint could not answer, oldest first: the
-- periodic re-screening asks about them again.
SELECT id, job_id, title, body FROM stories
 WHERE screening = 'pending' AND deleted_at IS NULL
 ORDER BY created_at, id
 LIMIT :limit

-- name: finish_screening
-- A story's screening ends: 'pending' -> NULL (passed: shown) or 'flagged' (hidden for
-- good). Zero rows: it was not waiting (another process screened it first).
UPDATE stories SET screening = :screening
 WHERE id = :story_id AND screening = 'pending'
RETURNING id

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

-- name: check_unreachable_stories
-- Invariant: every story is reachable from its job (the job completed with it). A story
-- whose job did not was paid for and is not where the family looks for it.
SELECT s.id FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE j.status <> 'completed' OR j.story_id IS DISTINCT FROM s.id
 ORDER BY s.id

-- name: check_dead_running
-- Invariant: a running job has a live heartbeat (else the sweeper should have failed it).
SELECT id FROM story_jobs
 WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => :stale_s)
 ORDER BY id

-- name: check_stranded_pending
-- Invariant: a job waiting past the threshold with no worker alive has been expired
-- (allowing one sweep interval for the sweeper to get there).
SELECT id FROM story_jobs
 WHERE status = 'pending'
   AND created_at < now() - make_interval(secs => :threshold_s) - make_interval(secs => :interval_s)
   AND NOT EXISTS (SELECT 1 FROM workers
                    WHERE concurrency > 0
                      AND heartbeat_at >= now() - make_interval(secs => :threshold_s))
 ORDER BY id

-- name: check_expired_while_alive
-- Invariant: no job was expired while a worker was alive to run it (a process that runs
-- jobs had started before, and beat within the threshold of, the moment it expired).
SELECT j.id FROM story_jobs j
 WHERE j.status = 'failed' AND j.error_text = 'expired'
   AND EXISTS (SELECT 1 FROM workers w
                WHERE w.concurrency > 0
                  AND w.started_at <= j.completed_at
                  AND w.heartbeat_at >= j.completed_at - make_interval(secs => :threshold_s))
 ORDER BY j.id

-- name: create_session
-- A household member signed in on a device.
INSERT INTO sessions (sid) VALUES (:sid)
RETURNING sid

-- name: session_alive
-- Is this signed-in session still open? (Signing out ends it on the server.)
SELECT sid FROM sessions WHERE sid = :sid AND ended_at IS NULL

-- name: end_session
-- Sign out: this session's cookie, wherever it was copied, no longer signs anyone in.
UPDATE sessions SET ended_at = now() WHERE sid = :sid AND ended_at IS NULL
RETURNING sid

-- name: prune_sessions
-- Forget sessions past the cookie's own lifetime.
DELETE FROM sessions WHERE created_at < now() - make_interval(secs => :max_age_s)
RETURNING sid
