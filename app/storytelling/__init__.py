"""Storytelling: whatever turns a StoryRequest into a Story, and kid-safe screening.

`openai.py` makes the provider call (one streamed request per story), `demo.py` writes
offline, `provider.py` builds the provider's client on first use, `moderation.py` asks
the provider's moderation endpoint. `limits.py` sizes a story's token budget and
remembers the parameters a model refused, `availability.py` knows whether the provider
still offers the model, `models.py` reads the openai library's model lists.
`responses.py` writes a story at the provider in background mode and follows it by id;
`final_response.py` reads the story in a finished response. `reader.py` reads either
API's answer to the app's own rules (word cap, cut short, titles, paragraphs, markup).

May use: app.stories, app.languages, app.lengths and app.titles (a story's language, length
and the titles the app makes), app.failures (why a story did not come), app.finishing,
app.errors, app.logs, app.backoff, app.i18n. Never the queue, the shelf or the web: the
worker hands a storyteller the request and gets a story back.
"""
