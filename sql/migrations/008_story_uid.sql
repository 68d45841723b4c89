-- A stable id for every story, the same in every installation it is copied to: a backup
-- restores by it, so importing the same backup twice (or into the installation it came
-- from) adds nothing twice. Existing stories get one each now.
ALTER TABLE stories ADD COLUMN IF NOT EXISTS uid uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX IF NOT EXISTS stories_uid ON stories (uid);
