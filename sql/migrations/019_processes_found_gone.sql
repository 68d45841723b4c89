-- A process found gone: a process starting on the same host saw that its pid is no longer
-- alive there (a kill -9, a crash, an out-of-memory kill). Its running jobs need not wait
-- for their heartbeats to go stale: a story paid for already is adopted at once, any other
-- is swept at once. Set only while the process had neither stopped nor been found gone;
-- cleared when a process wrongly found gone beats again (it registers anew).
ALTER TABLE workers ADD COLUMN IF NOT EXISTS gone_at timestamptz;
