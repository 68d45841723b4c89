-- Kid-safe screening of a finished story (MODERATION=on) is a property of the story, not
-- of its job. The story is stored first (it was paid for), so its job completes as usual
-- and points at it; until the story has passed the screening it is hidden, like a
-- deleted one: not on its page, in the library, or in the JSON.
--   NULL       shown: it passed the screening, or needed none (MODERATION=off)
--   'pending'  written and stored, not screened yet (the moderation endpoint could not
--              answer): hidden, and screened again periodically until it can say
--   'flagged'  the provider flagged it: hidden for good, but kept
ALTER TABLE stories ADD COLUMN IF NOT EXISTS screening text
    CONSTRAINT stories_screening_known CHECK (screening IN ('pending', 'flagged'));

-- The periodic re-screening looks only at the stories still waiting for it.
CREATE INDEX IF NOT EXISTS stories_awaiting_screening ON stories (created_at, id)
    WHERE screening = 'pending';
