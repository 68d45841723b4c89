-- The processes sharing the database (the `workers` table): each registers at start, beats
-- while alive and stops at shutdown; a process starting on a host finds those of its host
-- whose pids are gone. Their jobs' statements are in jobs.sql.

-- name: register_process
-- A process starts: it is alive from now on (and runs `concurrency` jobs at once). Again
-- (the same boot id): it was pruned, or wrongly found gone, while alive.
INSERT INTO workers (boot_id, host, pid, concurrency)
VALUES (:boot_id, :host, :pid, :concurrency)
ON CONFLICT (boot_id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL, gone_at = NULL
RETURNING boot_id

-- name: beat_process
-- A process is still alive. No row back: it was pruned as dead, or found gone by a
-- process on its host that could not see its pid, so it registers again.
UPDATE workers SET heartbeat_at = now()
 WHERE boot_id = :boot_id AND stopped_at IS NULL AND gone_at IS NULL
RETURNING boot_id

-- name: processes_on_host
-- The processes registered on this host that neither stopped nor were found gone, this
-- one aside: a process checks whether their pids are still alive (at start, and at each beat).
SELECT boot_id, pid FROM workers
 WHERE host = :host AND boot_id <> :boot_id AND stopped_at IS NULL AND gone_at IS NULL
 ORDER BY started_at

-- name: mark_process_gone
-- A process found gone: its pid is no longer alive on its host. A process that stopped
-- cleanly, or was found gone already, is left as it is. Its running jobs are then adopted
-- (a response id) or swept (none) at once, without waiting for stale heartbeats.
UPDATE workers SET gone_at = now()
 WHERE boot_id = :boot_id AND host = :host AND stopped_at IS NULL AND gone_at IS NULL
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
