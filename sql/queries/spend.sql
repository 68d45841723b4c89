-- The month's spending (app/money/ledger.py): the ledger (`spend`, migration 025) summed,
-- and what live jobs set aside (sql/functions/month_spend.sql). :month_start is the month's
-- first midnight in TZ; :tz names TZ, so that a day is the family's own.

-- name: month_totals
SELECT m.spent, m.set_aside,
       (SELECT count(*) FROM spend WHERE created_at >= :month_start) AS calls
  FROM month_spend(:month_start) AS m

-- name: month_by
-- The month's cost by kind of call (story, picture, moderation) and by child.
SELECT 'kind' AS part, kind AS name, sum(cost_micros)::bigint AS micros, count(*) AS calls
  FROM spend WHERE created_at >= :month_start GROUP BY kind
UNION ALL
SELECT 'child', child_name, sum(cost_micros)::bigint, count(*)
  FROM spend WHERE created_at >= :month_start AND kind <> 'moderation'
 GROUP BY child_name
 ORDER BY part, micros DESC, name NULLS LAST

-- name: spend_by_day
-- Each of the last :day_count days (in TZ; a whole number), oldest first, with what was
-- spent on it (0 too).
SELECT day::date AS day, coalesce(sum(s.cost_micros), 0)::bigint AS micros
  FROM generate_series((now() AT TIME ZONE :tz)::date - (:day_count - 1),
                       (now() AT TIME ZONE :tz)::date, interval '1 day') AS day
  LEFT JOIN spend s ON (s.created_at AT TIME ZONE :tz)::date = day::date
 GROUP BY day ORDER BY day

-- name: unpriced_models
-- The models this month's calls were made with that had no price (costed at 0).
SELECT DISTINCT model FROM spend
 WHERE created_at >= :month_start AND price IS NULL AND kind <> 'moderation'
 ORDER BY model
