-- The household's settings (migration 022's one row): the household store's alone
-- (app/shelf/household.py).

-- name: get_bedtime
-- The household's bedtime (a time of day, in its time zone).
SELECT bedtime FROM household

-- name: set_bedtime
-- A new bedtime for the household (within the table's evening hours).
UPDATE household SET bedtime = :bedtime
RETURNING bedtime
