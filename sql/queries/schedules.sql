-- Scheduled work (app/shelf/schedule.py): one row per schedule, each turn claimed once.

-- name: ensure_schedule
-- A process that runs this schedule starts: the row is made, due at once, if it is not
-- there yet. When it is, and this process asks for another interval, the newest setting
-- wins (a deploy that changes BACKUP_EVERY_H starts the new release last): the interval
-- becomes this one and the next turn is one such interval after the last turn (at once if
-- that is past). Asked with the same interval, a restart changes nothing.
INSERT INTO schedules AS s (name, every_s, next_at)
VALUES (:name, :every_s, now())
ON CONFLICT (name) DO UPDATE
   SET every_s = EXCLUDED.every_s,
       next_at = coalesce(s.claimed_at + make_interval(secs => EXCLUDED.every_s), now())
 WHERE s.every_s IS DISTINCT FROM EXCLUDED.every_s
RETURNING name

-- name: claim_schedule
-- due -> claimed: the process that moves next_at on takes this turn; every other process
-- finds next_at in the future and gets no row. The row's interval is used (not the
-- claimer's own: processes that disagree follow the row, which ensure_schedule sets), and
-- next_at keeps to its grid (the first of next_at + k intervals after now), so a turn
-- taken late does not shift the schedule and a long outage does not bring a burst of turns.
-- A turn claimed more than :lease_s ago that neither succeeded nor failed was left by a
-- process that died doing it: it is taken again (next_at, ahead, stays where it is), not
-- lost until the next interval.
UPDATE schedules
   SET claimed_at = now(),
       next_at = next_at + make_interval(
           secs => every_s * greatest(
               floor(extract(epoch FROM now() - next_at) / every_s) + 1, 0))
 WHERE name = :name
   AND (next_at <= now()
        OR (claimed_at < now() - make_interval(secs => :lease_s)
            AND claimed_at > coalesce(last_ok_at, '-infinity')
            AND claimed_at > coalesce(last_error_at, '-infinity')))
RETURNING claimed_at, extract(epoch FROM next_at - now())::float8 AS due_in_s

-- name: schedule_due_in
-- How many seconds until the schedule's next turn (negative: due now); no row: none.
SELECT extract(epoch FROM next_at - now())::float8 FROM schedules WHERE name = :name

-- name: schedule_succeeded
-- claimed -> done: the turn claimed at :claimed_at wrote :file; any earlier failure is
-- cleared. A turn older than the last success (two slow turns overlapping) does not move
-- last_ok_at back.
UPDATE schedules
   SET last_ok_at = greatest(last_ok_at, :claimed_at),
       last_file = CASE WHEN last_ok_at > :claimed_at THEN last_file ELSE :file END,
       last_error = CASE WHEN last_error_at > :claimed_at THEN last_error END,
       last_error_at = CASE WHEN last_error_at > :claimed_at THEN last_error_at END
 WHERE name = :name
RETURNING name

-- name: schedule_failed
-- claimed -> failed: the turn claimed at :claimed_at failed for :reason, unless a later
-- turn succeeded meanwhile.
UPDATE schedules
   SET last_error = :reason, last_error_at = now()
 WHERE name = :name AND (last_ok_at IS NULL OR last_ok_at < :claimed_at)
RETURNING name

-- name: schedule_state
-- What the home page says of a schedule: its last success and its last failure, while the
-- schedule is kept (a turn due within the last interval or ahead; a schedule nobody runs
-- any more, BACKUP_DIR unset everywhere, says nothing after an interval).
SELECT last_ok_at, last_file, last_error, last_error_at
  FROM schedules
 WHERE name = :name AND next_at >= now() - make_interval(secs => every_s)
