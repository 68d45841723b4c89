-- A story read aloud in a backup: its parts out (every story on the shelf) and in (a
-- restored story's, byte for byte, read by no job here).

-- name: export_narrations
-- Every part kept of the shelf's stories, by story uid and part.
SELECT s.uid, p.part, p.parts, p.text_md5, p.seconds, p.model, p.voice, p.audio
  FROM story_narration_parts p JOIN shelf_stories s ON s.id = p.story_id
 ORDER BY s.created_at, s.id, p.part

-- name: import_narration_part
-- A part of a restored story's narration, as the backup holds it.
INSERT INTO story_narration_parts (story_id, part, parts, text_md5, content_type, audio,
                                   seconds, model, voice)
VALUES (:story_id, :part, :parts, :text_md5, 'audio/mpeg', :audio, :seconds, :model, :voice)
RETURNING story_id
