-- Every stored moment is one the app can read back: from year 1 to year 9999, UTC.
-- PostgreSQL takes more (up to year 294276, and 'infinity'), but the driver cannot hand
-- those to Python, so one such row would break every page, feed and backup that lists it.
-- A moment already out of range (only hand-written SQL could have put it there) is
-- clamped to the nearest one in range first.
UPDATE stories SET created_at = least(greatest(created_at, '0001-01-01 00:00:00+00'),
                                      '9999-12-31 23:59:59.999999+00')
 WHERE created_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';
UPDATE stories SET deleted_at = least(greatest(deleted_at, '0001-01-01 00:00:00+00'),
                                      '9999-12-31 23:59:59.999999+00')
 WHERE deleted_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';
ALTER TABLE stories
    ADD CONSTRAINT stories_created_at_readable
        CHECK (created_at BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'),
    ADD CONSTRAINT stories_deleted_at_readable
        CHECK (deleted_at BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00');

-- A job's moments: made, claimed, last heard of, finished, asked to stop.
UPDATE story_jobs
   SET created_at = least(greatest(created_at, '0001-01-01 00:00:00+00'),
                          '9999-12-31 23:59:59.999999+00'),
       started_at = least(greatest(started_at, '0001-01-01 00:00:00+00'),
                          '9999-12-31 23:59:59.999999+00'),
       heartbeat_at = least(greatest(heartbeat_at, '0001-01-01 00:00:00+00'),
                            '9999-12-31 23:59:59.999999+00'),
       completed_at = least(greatest(completed_at, '0001-01-01 00:00:00+00'),
                            '9999-12-31 23:59:59.999999+00')
 WHERE created_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    OR started_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    OR heartbeat_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
    OR completed_at NOT BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00';
ALTER TABLE story_jobs
    ADD CONSTRAINT story_jobs_dates_readable CHECK (
        created_at BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
        AND (started_at IS NULL OR started_at
             BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
        AND (heartbeat_at IS NULL OR heartbeat_at
             BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00')
        AND (completed_at IS NULL OR completed_at
             BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'));
