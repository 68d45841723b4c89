-- The month's money (micro-dollars): what the ledger holds since `p_month_start` (the month's
-- first midnight in TZ), and what the live jobs (pending, running) have set aside. Read under
-- the intake lock by the intake and by a picture's making, so their sum never passes the
-- budget; read by GET /spend as it is.
CREATE OR REPLACE FUNCTION month_spend(
    p_month_start timestamptz, OUT spent bigint, OUT set_aside bigint
) LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(cost_micros), 0)::bigint FROM spend
             WHERE created_at >= p_month_start),
           (SELECT coalesce(sum(set_aside_micros), 0)::bigint FROM story_jobs
             WHERE status IN ('pending', 'running') AND set_aside_micros > 0)
$$;
