"""The Images API prompt for a story's picture: the story's own title and opening, in a
style fit for bedtime. Nothing of the family's own text goes in (not the request, not the
child's likes): only what the story says.

    prompt = picture_prompt(scene)
"""

from __future__ import annotations

from app.illustrating import Scene

OPENING_CHARS = 600  # the first lines set the scene; the rest adds cost, not a better picture
STYLE = (
    "A gentle, soft children's picture-book illustration for a bedtime story, calm and"
    " cosy, in muted night-time colours with a warm glow; rounded friendly shapes; nothing"
    " frightening, sad or violent. No text, letters, numbers or words anywhere in the"
    " picture."
)


def picture_prompt(scene: Scene) -> str:
    opening = " ".join(scene.opening.split())
    if len(opening) > OPENING_CHARS:
        opening = opening[:OPENING_CHARS].rsplit(" ", 1)[0] + "…"
    return f"{STYLE}\n\nThe story is called “{scene.title}”. It begins: {opening}"
