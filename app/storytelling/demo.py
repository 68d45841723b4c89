"""The offline storyteller: a real, varied story from a few templates, streamed at a
model's pace, so the app is fully usable with no key. It weaves in the child's likes and
brings back their companions, and its title is made from the idea (app/titles.py), so
another idea (the one-tap idea changes every night: app/ideas.py) is another title.

    story = await DemoStoryteller(delay_s=20).write(request, job_id=17, on_text=print)
"""

from __future__ import annotations

import asyncio
import random
import re

from app.finishing import finished_text
from app.languages import ENGLISH
from app.lengths import length_of
from app.stories import Story, StoryRequest, TextSink
from app.storytelling import demo_arabic
from app.titles import title_from_idea, title_subject


class DemoStoryteller:
    """Writes a real, varied story offline from a few templates: the app works with no key.

    It streams the story word by word over `delay_s` seconds, about a real model's pace,
    and writes about as many words as the length asks a model for.
    """

    name = "demo"
    model = "demo"
    note = "(This story was written by the demo storyteller, offline.)"
    english_only = "(The demo storyteller writes in English only.)"

    def __init__(self, *, delay_s: float = 20.0, seed: int | None = None) -> None:
        self.delay_s = delay_s
        self.seed = seed

    async def aclose(self) -> None:
        pass

    async def write(
        self, request: StoryRequest, *, job_id: int, on_text: TextSink | None = None
    ) -> Story:
        if request.carried_text:
            return await self._finish(request, job_id=job_id, on_text=on_text)
        title, paragraphs = self.compose(request, job_id=job_id)
        text = f"{title}\n\n" + "\n\n".join(paragraphs)
        await self._stream(text, on_text)
        return Story(title=title, body="\n\n".join([*paragraphs, *self._notes(request)]),
                     model=self.model)

    async def _finish(
        self, request: StoryRequest, *, job_id: int, on_text: TextSink | None
    ) -> Story:
        """The rest of a story cut short: the part of the story it began as that was not
        written yet (the demo writes the same story for the same job), else an ending."""
        carried = request.carried_text or ""
        title, _, begun = carried.partition("\n\n")
        original = request.finish_of if request.finish_of is not None else job_id
        whole_title, paragraphs = self.compose(request, job_id=original)
        whole = f"{whole_title}\n\n" + "\n\n".join(paragraphs)
        head = f"{title}\n\n{begun}"
        if whole.startswith(head) and len(whole) > len(head):
            rest = whole[len(head):]
        else:
            rest = "\n\n" + paragraphs[-1]
        await self._stream(rest, on_text)
        _, _, body = finished_text(carried, rest).partition("\n\n")
        return Story(title=title, body="\n\n".join([body, *self._notes(request)]),
                     model=self.model)

    def _notes(self, request: StoryRequest) -> list[str]:
        """The notes under its story: that it is the demo's, and, when another language
        was asked for, that it writes English only."""
        if request.language == "ar":
            return [demo_arabic.NOTE]
        if request.language != "en":
            return [self.note, self.english_only]
        return [self.note]

    async def _stream(self, text: str, on_text: TextSink | None) -> None:
        """Hand `text` over word by word, over about `delay_s`, as a model streams."""
        words = re.findall(r"\S+\s*|\s+", text)
        pause_s = self.delay_s / max(len(words), 1)
        written = ""
        for word in words:
            await asyncio.sleep(pause_s)
            written += word
            if on_text is not None:
                on_text(written)

    def compose(self, request: StoryRequest, *, job_id: int) -> tuple[str, list[str]]:
        """The title and paragraphs: an opening, middles until the length's words, an ending."""
        rng = random.Random(f"{self.seed}:{job_id}:{request.prompt}:{request.likes}:"
                            f"{request.companions}")
        if request.language == "ar":
            return demo_arabic.compose_arabic(request, rng)
        hero = request.child_name or rng.choice(["Juniper", "Theo", "Luna", "Rowan", "Ada"])
        idea = request.prompt.strip().rstrip(".!?")
        # The child's companions come back: the first is the friend of the story, by name.
        companions = [part.strip() for part in re.split(r"[;\n]", request.companions or "")
                      if part.strip()]
        friend = companions[0].split(",", 1)[0].strip() if companions else rng.choice(_FRIENDS)
        names = {"hero": hero, "idea": idea, "place": rng.choice(_PLACES), "friend": friend,
                 "Friend": friend[0].upper() + friend[1:], "sky": rng.choice(_SKIES)}
        opening = [p.format(**names) for p in _OPENINGS[rng.randrange(len(_OPENINGS))]]
        if companions:
            friends = "friend" if len(companions) == 1 else "friends"
            opening.insert(1, f"{hero}'s {friends} {_together(companions)} came along, as "
                              "always, because no adventure was quite right without them.")
        likes = [part.strip(" .") for part in re.split(r"[,;\n]|\band\b", request.likes or "")
                 if part.strip(" .")]
        if likes:
            opening.append(f"On the way, {hero} spotted {rng.choice(likes)}, one of {hero}'s "
                           "very favourite things in the whole world, and smiled a sleepy "
                           "smile.")
        ending = rng.choice(_ENDINGS).format(**names)
        target = length_of(request.length).words
        words = sum(len(p.split()) for p in [*opening, ending])
        middles = []
        for middle in rng.sample(_MIDDLES, k=len(_MIDDLES)):
            if words >= target:
                break
            middles.append(middle.format(**names))
            words += len(middles[-1].split())
        subject = title_subject(idea)
        if request.sibling_name:  # a sibling story: both children, from the title on
            title = f"{hero}, {request.sibling_name} and {subject}"
            opening.insert(1, f"{request.sibling_name} was there too, as always, right beside "
                              f"{hero}, and the two of them shared every adventure.")
        elif subject.startswith("the ") and rng.random() < 0.5:
            title = f"{hero}'s {subject[len('the '):]}"
        else:
            title = f"{hero} and {subject}"
        if request.language != ENGLISH.tag:  # an English story, but the family's own title
            title = title_from_idea(request)
        return title[:200], [*opening, *middles, ending]


def _together(companions: list[str]) -> str:
    """ "Pip, a little green dinosaur," or "Pip, a little green dinosaur, and Bun": the
    companions as a sentence names them, each described as the profile describes them."""
    named = [f"{companion}," if "," in companion else companion for companion in companions]
    if len(named) == 1:
        return named[0]
    return ", ".join(named[:-1]).rstrip(",") + f", and {named[-1]}"


_PLACES = ["a cottage at the edge of a whispering wood", "a lighthouse by a sleepy sea",
           "a little house on a hill of clover", "a houseboat on a slow green river",
           "a village where the lamps hummed softly"]
_FRIENDS = ["a small owl named Hoot", "a patient tortoise called Moss", "a cheerful firefly",
            "a fluffy cloud who liked to listen", "a kind old badger"]
_SKIES = ["the first stars blinked awake", "the moon rose round and silver",
          "the sky turned the colour of warm milk", "soft purple dusk settled over everything"]
_OPENINGS = [
    ["Once upon a time, in {place}, there lived {hero}.",
     "One evening, as {sky}, {hero} began to wonder about {idea}."],
    ["Not so long ago, when {sky}, {hero} was getting ready for bed in {place}.",
     "But tonight was different, because tonight was all about {idea}."],
    ["In {place}, where the evenings were always calm, {hero} loved bedtime best of all.",
     "And on this particular night, {hero} was thinking about {idea}."],
]
_MIDDLES = [
    "{hero} tiptoed outside and met {friend}, who blinked slowly and said, "
    "\"I know a little about {idea}. Shall we go and see?\"",
    "Together they followed a path of soft moss, counting fireflies: one, two, three, "
    "four, five. Each one glowed a little more gently than the last.",
    "They found a quiet pond that held the whole sky in it. {hero} dipped one finger in, "
    "and tiny ripples carried a wish all the way to the other side.",
    "When the path grew steep, {friend} said, \"We can go slowly. Slow is a fine way "
    "to go.\" And so they did, breathing in, and breathing out.",
    "At the top of the hill, the wind hummed a lullaby it had learned long ago, and "
    "{hero} hummed along, softer and softer.",
    "{hero} discovered that {idea} was not so strange after all. It was a little bit "
    "brave and a little bit gentle, just like {hero}.",
    "A sleepy hedgehog shared a blanket of leaves, and they all sat together, watching "
    "the night get darker and cosier.",
    "Down by the stream, the water was telling itself a long, slow story. {hero} sat on a "
    "smooth stone to listen, and {friend} sat close by, and neither of them said a word for "
    "a while, because the stream was saying enough for everyone.",
    "A little breeze came by carrying the smell of warm bread from a faraway kitchen. "
    "\"Someone is baking for the morning,\" said {friend}. {hero} smiled, thinking of "
    "breakfast, and of how nice it is that mornings always come.",
    "They passed a tree so old that its roots had made little rooms underground. In one of "
    "them a family of mice was already asleep, tails curled like question marks, and {hero} "
    "whispered so quietly that not one of them stirred.",
    "{Friend} knew a song about {idea}. It had only four notes, and they went up, and "
    "they came down again, like someone climbing a small hill and deciding the bottom was "
    "the best place after all. {hero} learned it at once.",
    "The path led to a meadow where the grass was soft and silver in the moonlight. {hero} "
    "lay down and looked up. The stars were so many that counting them would take a hundred "
    "nights, and that was a lovely thing to know.",
    "An owl on a low branch asked, \"Who goes there?\" in the politest voice. \"Only "
    "{hero},\" said {hero}, \"and a friend.\" The owl nodded, as if that was exactly who "
    "it had hoped would come by tonight.",
    "{hero} found a pebble that was warm from the day's sun and held it in one hand. It "
    "felt like holding a little piece of the afternoon, kept safe for later, and {hero} "
    "decided to keep it under the pillow.",
    "Fireflies drew slow circles in the air. {Friend} said they were writing goodnight "
    "letters to everyone in {place}, one glowing word at a time, and that tonight one of "
    "the letters was for {hero}.",
    "They stopped at a wooden bridge and listened. Under it, the frogs were practising "
    "their evening chorus: a low croak, a high croak, and then a long pause while everyone "
    "decided it had been very well done.",
    "The moon came out from behind a cloud, as if it had been waiting for them. It lit "
    "the way with a pale, kind light, so that every step was easy and every shadow was only "
    "a shadow, and nothing more.",
    "{hero} told {friend} all about the day: the good parts, and the one part that had "
    "been a little hard. {Friend} listened to every word and then said, \"Tomorrow is a "
    "new page,\" which made the hard part feel smaller.",
    "A rabbit hopped out to see who was awake so late, twitched its nose twice, and hopped "
    "home again to tell the others that all was well. Somewhere a door closed softly, and "
    "a lamp in a window went out.",
    "They came to a gate covered in sleeping roses. {Friend} showed {hero} how to open it "
    "without a single creak, by lifting it just a little, gently, the way you would pick up "
    "a cat who is nearly asleep.",
    "The wind changed its tune to something slower. The leaves stopped rustling and only "
    "sighed now and then, and {hero} noticed that breathing in and breathing out had become "
    "slow and easy too, just like the wind.",
    "On a hill of soft clover they found a bench that seemed to have been built for "
    "resting. {hero} sat down, and {friend} sat down, and the whole of {place} lay below "
    "them, small and quiet and safe.",
    "{hero} thought about {idea} one more time, and it did not seem like a big question "
    "any more. It seemed like a friendly thing that would still be there tomorrow, ready "
    "for another adventure in the daylight.",
]
_ENDINGS = [
    "Then {friend} walked {hero} home, where the bed was warm and the pillow was soft. "
    "{hero} yawned a great big yawn, and as {sky}, fell fast asleep. Goodnight, {hero}.",
    "Back home, {hero} snuggled under the covers, remembering every gentle thing. "
    "Outside, {sky}, and everything was peaceful. Sweet dreams, {hero}.",
    "{hero} whispered goodnight to {friend}, and goodnight to the moon, and goodnight to "
    "the whole quiet world. And then {hero} was asleep, safe and sound.",
]

