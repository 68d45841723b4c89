-- Every call that may have reached the provider is in the ledger, once. A job's call is
-- marked on its row just before it is sent (mark_call_sent), with the model and price it
-- is sent at; from then on each way the job can end without the call's own ledger row
-- (a failure, a stop, a sweep after a crash) charges it from these columns, in the
-- statement that ends the job: its set-aside, estimated.
ALTER TABLE story_jobs
    ADD COLUMN call_sent_at timestamptz,
    ADD COLUMN call_model text,
    ADD COLUMN call_price jsonb;  -- NULL with a model: unpriced (charged 0, and named)

-- A story whose provider reported no usage (a local server ignoring stream_options) keeps
-- tokens counted from its text and prompt, marked so, as its ledger row is.
ALTER TABLE stories
    ADD COLUMN usage_estimated boolean NOT NULL DEFAULT false;
