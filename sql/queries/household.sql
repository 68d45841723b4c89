-- The household's settings (migration 022's one row): the household store's alone
-- (app/shelf/household.py).

-- name: get_household
-- The household's bedtime (a time of day, in its time zone) and its pages' language
-- (NULL: each browser's).
SELECT bedtime, language FROM household

-- name: set_bedtime
-- A new bedtime for the household (within the table's evening hours).
UPDATE household SET bedtime = :bedtime
RETURNING bedtime

-- name: set_language
-- The language of the household's pages (NULL: each browser's own).
UPDATE household SET language = :language
RETURNING language
