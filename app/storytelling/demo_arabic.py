"""The demo storyteller in Arabic: a calm bedtime story from a few templates, as the
English one composes its own (app/storytelling/demo.py), so a household that asks for
Arabic sees its pages and its story right to left with no key.

    title, paragraphs = compose_arabic(request, rng)
"""

from __future__ import annotations

import random

from app.lengths import length_of
from app.stories import StoryRequest

NOTE = "(كتب هذه الحكاية راوي العرض، دون اتصال بالإنترنت.)"

_HEROES = ["يوسف", "آدم", "سامي", "عمر"]  # the verbs below are masculine, Arabic's default
_PLACES = ["بيت صغير على طرف غابة تهمس", "منارة قرب بحر نعسان",
           "قرية تضيء فيها الفوانيس بهدوء", "بيت على تلة من البرسيم"]
_FRIENDS = ["بومة صغيرة اسمها نور", "سلحفاة صبورة اسمها زيتونة", "يراعة مرحة",
            "غيمة ناعمة تحب الإصغاء"]
_OPENINGS = [
    "كان يا ما كان، في {place}، عاش {hero}.",
    "في مساء هادئ، حين طلع القمر مستديرًا فضيًا، كان {hero} يستعد للنوم في {place}.",
]
_MIDDLES = [
    "وفي تلك الليلة كان {hero} يفكر في {idea}، وابتسم ابتسامة ناعسة.",
    "خرج {hero} على رؤوس أصابعه، فالتقى {friend}، فقالت بصوت خافت: «أعرف شيئًا عن "
    "{idea}. هل نذهب لنرى معًا؟»",
    "سارا معًا على درب من الطحلب الطري، يعدّان اليراعات: واحدة، اثنتان، ثلاث، أربع، "
    "خمس. وكانت كل واحدة تضيء أهدأ من التي قبلها.",
    "وجدا بركة ساكنة تحمل السماء كلها في مائها. غمس {hero} إصبعًا واحدًا، فحملت "
    "الموجات الصغيرة أمنيته إلى الضفة الأخرى.",
    "وفي أعلى التلة كانت الريح تدندن تهويدة قديمة، فدندن {hero} معها، بصوت أخفض "
    "فأخفض.",
    "مرّا بشجرة عجوز صنعت جذورها غرفًا صغيرة تحت الأرض، وفي إحداها كانت عائلة من "
    "الفئران نائمة، فهمس {hero} همسًا خفيفًا حتى لا يوقظ أحدًا.",
    "قالت {friend}: «يمكننا أن نمشي ببطء. البطء طريقة جميلة للمشي.» فمشيا ببطء، "
    "شهيق، ثم زفير.",
    "جلسا على مقعد خشبي فوق العشب الفضي، ونظرا إلى النجوم. كانت كثيرة جدًا، وعدّها "
    "يحتاج مئة ليلة، وكان ذلك شيئًا جميلًا.",
    "حكى {hero} لصديقته عن يومه كله: الأجزاء الحلوة، والجزء الذي كان صعبًا قليلًا. "
    "فقالت {friend}: «الغد صفحة جديدة»، فصار الجزء الصعب أصغر.",
    "وفكّر {hero} في {idea} مرة أخيرة، فلم يعد سؤالًا كبيرًا، بل صار شيئًا لطيفًا "
    "سيبقى هناك غدًا، ينتظر مغامرة جديدة في ضوء النهار.",
]
_ENDINGS = [
    "ثم عاد {hero} إلى البيت، إلى سرير دافئ ووسادة ناعمة، وتثاءب تثاؤبًا كبيرًا، "
    "ونام نومًا هادئًا. تصبح على خير يا {hero}.",
    "همس {hero}: تصبحين على خير يا {friend}، وتصبح على خير أيها القمر، وتصبح على خير "
    "أيها العالم الهادئ كله. ثم نام {hero} آمنًا مطمئنًا. أحلامًا سعيدة.",
]


def compose_arabic(request: StoryRequest, rng: random.Random) -> tuple[str, list[str]]:
    """The title and paragraphs of an Arabic demo story, about the words the length asks."""
    hero = request.child_name or rng.choice(_HEROES)
    names = {"hero": hero, "idea": request.prompt.strip().rstrip(".!?؟") or "النجوم",
             "place": rng.choice(_PLACES), "friend": rng.choice(_FRIENDS).split(" اسمها ")[-1]}
    paragraphs = [rng.choice(_OPENINGS).format(**names)]
    target, words = length_of(request.length).words, len(paragraphs[0].split())
    for middle in rng.sample(_MIDDLES, k=len(_MIDDLES)):  # each once, as the English demo
        if words >= target:
            break
        paragraphs.append(middle.format(**names))
        words += len(paragraphs[-1].split())
    paragraphs.append(rng.choice(_ENDINGS).format(**names))
    if request.sibling_name:
        return f"{hero} و{request.sibling_name} وحكاية قبل النوم", paragraphs
    return f"{hero} وحكاية قبل النوم", paragraphs
