-- The household's settings, one row: its bedtime for now (issue 29). With the automatic
-- theme, Night comes on 30 minutes before it and lasts until morning (app/web/preferences.py
-- and static/shelf.js). Between 16:00 and 23:59, so Night starts after the morning and
-- before midnight; 18:30 until the family sets its own on the Children page.
CREATE TABLE IF NOT EXISTS household (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),  -- there is one household
    bedtime time(0) NOT NULL DEFAULT '18:30'
        CONSTRAINT household_bedtime_in_the_evening CHECK (bedtime BETWEEN '16:00' AND '23:59')
);
INSERT INTO household DEFAULT VALUES ON CONFLICT DO NOTHING;
