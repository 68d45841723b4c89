-- Household sessions live on the server too: the signed cookie carries only an id, and
-- signing out ends that id here, so a copied cookie stops working at once. (Changing the
-- password still ends every session: the cookies are signed with it.)
CREATE TABLE IF NOT EXISTS sessions (
    sid        text PRIMARY KEY CHECK (length(sid) BETWEEN 16 AND 64),
    created_at timestamptz NOT NULL DEFAULT now(),
    ended_at   timestamptz
);
