"""The story languages, one record each: the one home of what the app knows of a language.
Every other list of languages derives from these records or is tested against them: the
form's choices, the page languages (every story language is one, with its catalogue,
app/locale/<tag>/), `make messages` (`python -m app languages`), the storyteller's prompt,
the titles the app makes, the one-tap ideas, and the SQL CHECKs on every column that names
a language (tests/test_vocabulary.py reads them in sql/schema.sql).

    language_of("es").name           # "Español", the form's choice
    language_of("es").english        # "Spanish", as the storyteller is told
    language_of("ar").direction      # "rtl"
    language_of("ja").spaced         # False: lengths and caps count its characters
    LANGUAGES                        # {"en": ENGLISH, "es": SPANISH, ...}, the form's order

Plural rules are Babel's (CLDR's), as each catalogue's `Plural-Forms` says: nothing to keep
here. Adding a language is its record below (appended to LANGUAGES), a migration widening
the CHECKs, and its catalogue: docs/languages.md, "Adding a language".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.idea_words import SEASON_NAMES, IdeaWords, Word, plain, seasons, things

# A spaced language's lengths are words, read aloud slowly at about this many a minute.
READ_ALOUD_WORDS_PER_MIN = 120
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Language:
    """A story language (and page language): how it is named, written and told."""

    tag: str  # BCP 47, as a page's `lang` says it and the columns store it
    name: str  # in itself: the form's choice
    english: str  # in English: what the storyteller is told
    ideas: IdeaWords  # tonight's one-tap ideas as it says them (app/ideas.py)
    # A sequel's first prompt ("What happens next?"), quoting the earlier title its way.
    next_prompt: str
    # The word a model labels its title line with in this language ("Título:"), lower case.
    title_labels: tuple[str, ...]
    # How a title the app makes names the children before its subject: the last joined by
    # `title_and` ("Mia and the Owl"), any before by `title_comma` ("Mia, Leo and ...");
    # `title_and_before`: another way to say "and" before a word that matches.
    title_and: str = " and "
    title_comma: str = ", "
    title_and_before: tuple[tuple[str, str], ...] = ()
    # Where an idea's first part, a title's subject, ends besides a comma or a colon (a
    # regular expression: English's "to find", Spanish's "para encontrar"); and the small
    # words (articles, prepositions: "entre", "los") before which a subject cut at its most
    # words ends, so that it ends on what it names.
    title_ends: str = ""
    title_small_words: frozenset[str] = frozenset()
    # English capitalises a title's words; every other language writes it as a sentence
    # (its first letter capital, the rest as typed: German's nouns are capital already).
    title_case: bool = False
    right_to_left: bool = False
    # Whether words are separated by spaces. A language that does not (Japanese) has no
    # words to count: a story's length and its caps are its characters, read aloud in the
    # same time as the words of a spaced one (`read_aloud_per_minute` of them a minute).
    spaced: bool = True
    read_aloud_per_minute: int = READ_ALOUD_WORDS_PER_MIN
    # What the storyteller is told besides the language's name (the prompt's wording).
    instruction: str = ""
    # PostgreSQL's text search configuration for its words' stems (the library's search,
    # story_search_config in sql/); None: it has none, and 'simple' is used.
    search_config: str | None = None
    # Babel's format of a day on a page (a day without its year, and a month, follow
    # CLDR's skeletons in every language: app/i18n/formats.py).
    day_format: str = "medium"

    @property
    def direction(self) -> str:
        """`dir` of a page or text in it."""
        return "rtl" if self.right_to_left else "ltr"

    @property
    def prompt(self) -> str:
        """What the storyteller is told of the language when it is not English."""
        told = f"Write the story in {self.english}."
        return f"{told} {self.instruction}" if self.instruction else told

    @property
    def unit(self) -> str:
        """What a length counts in it, as the storyteller is told: words or characters."""
        return "words" if self.spaced else "characters"

    def count(self, text: str) -> int:
        """A text's length in this language's unit: its words, or its characters (spaces
        apart) where words are not spaced."""
        return len(text.split()) if self.spaced else len(_SPACE.sub("", text))


ENGLISH = Language(
    tag="en", name="English", english="English",
    next_prompt="what happens next in “{title}”",
    title_labels=("title",),
    title_case=True,
    title_ends=r"\s(?:to (?:find|meet|say|see)|looking for|following)\s",
    search_config="english",
    ideas=IdeaWords(
        ideas=(
            "a walk{company} on a {season} night to find {like}",
            "a little boat ride{company} down a moonlit river, looking for {like}",
            "a secret picnic under {thing}{company}, to meet {like}",
            "a treasure map{company}, one {season} evening, leading to {like}",
            "a lantern walk{company} through {thing}, following {like}",
            "a cosy {season} den{company}, built just right for {like}",
            "a sleepy balloon ride{company} over {thing}, to say goodnight to {like}",
        ),
        company=" with {name}",
        seasons=seasons(*SEASON_NAMES),
        things=things(
            plain("the first snowflakes", "frosty sparkling trees", "a quiet snowy garden"),
            plain("new blossom", "a garden of sleepy tulips", "soft spring rain"),
            plain("a sky full of summer stars", "a meadow of fireflies", "warm sand dunes"),
            plain("falling golden leaves", "a big round harvest moon", "an orchard of apples"),
        ),
        gentle=plain("the moon", "a sleepy owl", "a friendly little star", "a lost cloud"),
    ),
)
SPANISH = Language(
    tag="es", name="Español", english="Spanish",
    next_prompt="qué pasa después en «{title}»",
    title_labels=("título", "titulo"),
    title_and=" y ",
    # "y" is said "e" before the sound of i: "Sofía e Inés".
    title_and_before=((r"h?[iíIÍ](?![aeoáéóuú])", " e "),),
    title_ends=r"\s+para\s+encontrar\b",
    title_small_words=frozenset(
        "a al de del el la las los lo un una unos unas y e o en con por para sin sobre bajo "
        "entre hasta desde que su sus".split()),
    search_config="spanish",
    ideas=IdeaWords(
        ideas=(
            "un paseo{company} en una noche de {season} para encontrar {like}",
            "una barquita{company} por un río bajo la luna, buscando {like}",
            "un pícnic secreto bajo {thing}{company}, para encontrarse con {like}",
            "un mapa del tesoro{company}, una tarde de {season}, que lleva hasta {like}",
            "una ruta de farolillos{company} entre {thing}, siguiendo a {like}",
            "una guarida acogedora de {season}{company}, hecha a la medida de {like}",
            "un globo dormilón{company} que flota sobre {thing}, para dar las buenas noches "
            "a {like}",
        ),
        company=" con {name}",
        seasons=seasons("invierno", "primavera", "verano", "otoño"),
        things=things(
            plain("los primeros copos de nieve", "árboles que brillan de escarcha",
                  "un jardín nevado y callado"),
            plain("flores nuevas", "un jardín de tulipanes dormidos",
                  "una lluvia suave de primavera"),
            plain("un cielo lleno de estrellas de verano", "un prado de luciérnagas",
                  "dunas de arena tibia"),
            plain("hojas doradas que caen", "una luna de otoño grande y redonda",
                  "un huerto de manzanos"),
        ),
        gentle=plain("la luna", "un búho dormilón", "una estrellita amiga",
                     "una nube perdida"),
    ),
)
FRENCH = Language(
    tag="fr", name="Français", english="French",
    next_prompt="la suite de « {title} »",
    title_labels=("titre",),
    title_and=" et ",
    title_ends=r"\s+pour\s+(?:trouver|chercher)\b",
    title_small_words=frozenset(
        "à au aux de du des d’ le la les l’ un une et ou en avec par pour sans sur sous entre "
        "vers dans travers qui que sa son ses".split()),
    search_config="french",
    ideas=IdeaWords(
        ideas=(
            "une promenade{company} par une nuit {season} pour trouver {like}",
            "une petite balade en barque{company} sur une rivière au clair de lune, pour "
            "chercher {like}",
            "un pique-nique secret sous {thing}{company}, pour rencontrer {like}",
            "une carte au trésor{company}, un soir {season}, qui mène vers {like}",
            "une marche aux lanternes{company} à travers {thing}, en suivant {like}",
            "une cabane douillette {season}{company}, faite tout exprès pour {like}",
            "une montgolfière endormie{company} qui survole {thing}, pour saluer {like} "
            "avant de dormir",
        ),
        company=" avec {name}",
        seasons=seasons("d’hiver", "de printemps", "d’été", "d’automne"),
        things=things(
            plain("les premiers flocons", "des arbres scintillants de givre",
                  "un jardin tranquille sous la neige"),
            plain("des fleurs nouvelles", "un jardin de tulipes endormies",
                  "une douce pluie de printemps"),
            plain("un ciel plein d’étoiles d’été", "une prairie de lucioles",
                  "des dunes de sable tiède"),
            plain("des feuilles dorées qui tombent", "une grosse lune des moissons",
                  "un verger de pommiers"),
        ),
        gentle=plain("la lune", "une chouette endormie", "une gentille petite étoile",
                     "un petit nuage perdu"),
    ),
)
# Winter + nacht: one word, as German makes it. After "unter", a thing is in the
# dative; after "durch" and "über", and every like, in the accusative.
GERMAN = Language(
    tag="de", name="Deutsch", english="German",
    next_prompt="wie es weitergeht in „{title}“",
    title_labels=("titel",),
    title_and=" und ",
    title_small_words=frozenset(
        "der die das den dem des ein eine einen einem einer und oder in im an am auf aus bei "
        "mit nach über unter durch für um zu vom zum zur".split()),
    search_config="german",
    ideas=IdeaWords(
        ideas=(
            "ein Spaziergang{company} in einer {season}nacht, um {like} zu finden",
            "eine kleine Bootsfahrt{company} auf einem Fluss im Mondschein, um {like} zu "
            "suchen",
            "ein heimliches Picknick unter {thing:dat}{company}, um {like} zu treffen",
            "eine Schatzkarte{company} an einem {season}abend, um {like} zu entdecken",
            "ein Laternenumzug{company} durch {thing}, um {like} zu begleiten",
            "eine gemütliche {season}höhle{company}, genau richtig für {like}",
            "eine schläfrige Ballonfahrt{company} über {thing}, um {like} schlafen zu legen",
        ),
        company=" mit {name}",
        seasons=seasons("Winter", "Frühlings", "Sommer", "Herbst"),
        things=things(
            (Word("die ersten Schneeflocken", {"dat": "den ersten Schneeflocken"}),
             Word("glitzernde Bäume voller Raureif",
                  {"dat": "glitzernden Bäumen voller Raureif"}),
             Word("einen stillen verschneiten Garten",
                  {"dat": "einem stillen verschneiten Garten"})),
            (Word("neue Blüten", {"dat": "neuen Blüten"}),
             Word("einen Garten voller schläfriger Tulpen",
                  {"dat": "einem Garten voller schläfriger Tulpen"}),
             Word("sanften Frühlingsregen", {"dat": "sanftem Frühlingsregen"})),
            (Word("einen Himmel voller Sommersterne", {"dat": "einem Himmel voller Sommersterne"}),
             Word("eine Wiese voller Glühwürmchen", {"dat": "einer Wiese voller Glühwürmchen"}),
             Word("warme Sanddünen", {"dat": "warmen Sanddünen"})),
            (Word("fallende goldene Blätter", {"dat": "fallenden goldenen Blättern"}),
             Word("einen großen runden Erntemond", {"dat": "einem großen runden Erntemond"}),
             Word("einen Apfelgarten", {"dat": "einem Apfelgarten"})),
        ),
        gentle=plain("den Mond", "eine schläfrige Eule", "einen freundlichen kleinen Stern",
                     "eine verirrte Wolke"),
    ),
)
ITALIAN = Language(
    tag="it", name="Italiano", english="Italian",
    next_prompt="cosa succede dopo in «{title}»",
    title_labels=("titolo",),
    title_and=" e ",
    title_ends=r"\s+per\s+trovare\b",
    title_small_words=frozenset(
        "a al allo alla ai agli alle di d’ del dello della dei degli delle il lo la i gli le "
        "un uno una e o in nel nello nella con su sul sulla per tra fra sopra sotto lungo "
        "attraverso che".split()),
    search_config="italian",
    ideas=IdeaWords(
        ideas=(
            "una passeggiata{company} in una notte {season} per trovare {like}",
            "un giro in barchetta{company} lungo un fiume di luna, per cercare {like}",
            "un picnic segreto sotto {thing}{company}, per incontrare {like}",
            "una mappa del tesoro{company}, una sera {season}, che porta verso {like}",
            "un corteo di lanterne{company} attraverso {thing}, seguendo {like}",
            "una tana accogliente {season}{company}, fatta apposta per {like}",
            "un giro in mongolfiera tutto assonnato{company} sopra {thing}, per salutare "
            "{like} prima della nanna",
        ),
        company=" con {name}",
        seasons=seasons("d’inverno", "di primavera", "d’estate", "d’autunno"),
        things=things(
            plain("i primi fiocchi di neve", "alberi che brillano di brina",
                  "un giardino silenzioso e innevato"),
            plain("fiori nuovi", "un giardino di tulipani addormentati",
                  "una pioggerella di primavera"),
            plain("un cielo pieno di stelle d’estate", "un prato di lucciole",
                  "dune di sabbia tiepida"),
            plain("foglie dorate che cadono", "una grande luna d’autunno",
                  "un frutteto di mele"),
        ),
        gentle=plain("la luna", "un gufo assonnato", "una stellina amica",
                     "una nuvola smarrita"),
    ),
)
PORTUGUESE = Language(
    tag="pt", name="Português", english="Portuguese",
    next_prompt="o que acontece a seguir em «{title}»",
    title_labels=("título", "titulo"),
    title_and=" e ",
    title_ends=r"\s+para\s+encontrar\b",
    title_small_words=frozenset(
        "a à ao aos as às o os de do da dos das um uma uns umas e ou em no na nos nas num numa "
        "com por pelo pela para sem sobre sob entre até que".split()),
    search_config="portuguese",
    ideas=IdeaWords(
        ideas=(
            "um passeio{company} numa noite de {season} para encontrar {like}",
            "uma voltinha de barco{company} por um rio ao luar, para procurar {like}",
            "um piquenique secreto sob {thing}{company}, para conhecer {like}",
            "um mapa do tesouro{company}, numa tarde de {season}, que leva até {like}",
            "uma caminhada de lanternas{company} por entre {thing}, seguindo {like}",
            "um refúgio aconchegante de {season}{company}, feito à medida para {like}",
            "uma viagem de balão sonolenta{company} sobre {thing}, para embalar {like} até "
            "adormecer",
        ),
        company=" com {name}",
        seasons=seasons("inverno", "primavera", "verão", "outono"),
        things=things(
            plain("os primeiros flocos de neve", "árvores cintilantes de geada",
                  "um jardim calmo coberto de neve"),
            plain("flores novas", "um jardim de tulipas sonolentas",
                  "uma chuva suave de primavera"),
            plain("um céu cheio de estrelas de verão", "um prado de pirilampos",
                  "dunas de areia morna"),
            plain("folhas douradas que caem", "uma grande lua cheia de outono",
                  "um pomar de macieiras"),
        ),
        gentle=plain("a lua", "uma coruja sonolenta", "uma estrelinha amiga",
                     "uma nuvem perdida"),
    ),
)
# Winter + nacht, one word, as Dutch makes it too.
DUTCH = Language(
    tag="nl", name="Nederlands", english="Dutch",
    next_prompt="wat er daarna gebeurt in ‘{title}’",
    title_labels=("titel",),
    title_and=" en ",
    title_ends=r"\s+om\s+(?=.*\bte\s+vinden\b)",
    title_small_words=frozenset(
        "de het een en of in op aan met naar over onder door voor om te van bij tot die "
        "dat".split()),
    search_config="dutch",
    ideas=IdeaWords(
        ideas=(
            "een wandeling{company} in een {season}nacht om {like} te vinden",
            "een boottochtje{company} over een rivier in het maanlicht, op zoek naar {like}",
            "een geheime picknick onder {thing}{company}, om {like} te ontmoeten",
            "een schatkaart{company}, op een {season}avond, die leidt naar {like}",
            "een lampionnentocht{company} door {thing}, achter {like} aan",
            "een knus {season}holletje{company}, precies goed voor {like}",
            "een slaperige ballonvaart{company} over {thing}, om {like} welterusten te zeggen",
        ),
        company=" met {name}",
        seasons=seasons("winter", "lente", "zomer", "herfst"),
        things=things(
            plain("de eerste sneeuwvlokjes", "fonkelende bomen vol rijp",
                  "een stille besneeuwde tuin"),
            plain("nieuwe bloesem", "een tuin vol slaperige tulpen", "zachte lenteregen"),
            plain("een hemel vol zomersterren", "een wei vol vuurvliegjes",
                  "warme zandduinen"),
            plain("vallende gouden blaadjes", "een grote ronde oogstmaan",
                  "een boomgaard vol appels"),
        ),
        gentle=plain("de maan", "een slaperige uil", "een lief klein sterretje",
                     "een verdwaald wolkje"),
    ),
)
# Polish changes a word's ending after most prepositions, so the family's words come
# after a colon, as they typed them; a season is an adjective that agrees with its noun
# (`{season:ins}` "zimową nocą", `{season:gen}` "zimowego wieczoru", plain: "zimowa").
POLISH = Language(
    tag="pl", name="Polski", english="Polish",
    next_prompt="co dzieje się dalej w „{title}”",
    title_labels=("tytuł", "tytul"),
    title_and=" i ",
    title_small_words=frozenset(
        "i a w we z ze na po do od pod nad przez dla o u za przy".split()),
    search_config="polish",
    ideas=IdeaWords(
        ideas=(
            "spacer{company} {season:ins} nocą, a w roli głównej: {like}",
            "przejażdżka łódką{company} po rzece w blasku księżyca, a po drodze: {like}",
            "sekretny piknik pod {thing:ins}{company}, a na nim: {like}",
            "mapa skarbów{company} pewnego {season:gen} wieczoru, a na jej końcu: {like}",
            "wędrówka z lampionami{company} przez {thing}, a przed nami: {like}",
            "przytulna {season} kryjówka{company}, a w niej: {like}",
            "senny lot balonem{company} nad {thing:ins}, a na dobranoc: {like}",
        ),
        company=" z {name}",
        seasons=seasons(
            Word("zimowa", {"ins": "zimową", "gen": "zimowego"}),
            Word("wiosenna", {"ins": "wiosenną", "gen": "wiosennego"}),
            Word("letnia", {"ins": "letnią", "gen": "letniego"}),
            Word("jesienna", {"ins": "jesienną", "gen": "jesiennego"})),
        things=things(
            (Word("pierwsze płatki śniegu", {"ins": "pierwszymi płatkami śniegu"}),
             Word("drzewa lśniące od szronu", {"ins": "drzewami lśniącymi od szronu"}),
             Word("cichy ośnieżony ogród", {"ins": "cichym ośnieżonym ogrodem"})),
            (Word("nowe kwiaty", {"ins": "nowymi kwiatami"}),
             Word("ogród pełen sennych tulipanów", {"ins": "ogrodem pełnym sennych tulipanów"}),
             Word("ciepły wiosenny deszczyk", {"ins": "ciepłym wiosennym deszczykiem"})),
            (Word("niebo pełne letnich gwiazd", {"ins": "niebem pełnym letnich gwiazd"}),
             Word("łąkę pełną świetlików", {"ins": "łąką pełną świetlików"}),
             Word("ciepłe piaszczyste wydmy", {"ins": "ciepłymi piaszczystymi wydmami"})),
            (Word("spadające złote liście", {"ins": "spadającymi złotymi liśćmi"}),
             Word("wielki okrągły księżyc żniw", {"ins": "wielkim okrągłym księżycem żniw"}),
             Word("sad pełen jabłek", {"ins": "sadem pełnym jabłek"})),
        ),
        gentle=plain("księżyc", "senna sówka", "przyjazna mała gwiazdka", "zagubiona chmurka"),
    ),
)
ARABIC = Language(
    tag="ar", name="العربية", english="Arabic",
    next_prompt="ماذا يحدث بعد ذلك في «{title}»",
    title_labels=("العنوان",),
    title_and=" و",
    # "و" (and) is written joined to the word after it: "سارة وليلى والقطة".
    title_comma=" و",
    title_ends=r"\s+للبحث\s",
    right_to_left=True,
    day_format="long",  # "4 ديسمبر 2026" reads better than its slashed medium form
    title_small_words=frozenset(
        "في من إلى على عن مع تحت فوق عبر أو".split()),
    search_config="arabic",
    ideas=IdeaWords(
        ideas=(
            "مشوار{company} في ليلة من ليالي {season} للبحث عن {like}",
            "رحلة صغيرة بالقارب{company} في نهر يضيئه القمر، بحثًا عن {like}",
            "نزهة سرية تحت {thing}{company}، للقاء {like}",
            "خريطة كنز{company} في مساء من أمسيات {season}، تقود إلى {like}",
            "مسيرة بالفوانيس{company} عبر {thing}، نتبع فيها {like}",
            "مخبأ دافئ في {season}{company}، مصنوع على مقاس {like}",
            "رحلة هادئة بالمنطاد{company} فوق {thing}، لنودّع {like} قبل النوم",
        ),
        company=" مع {name}",
        seasons=seasons("الشتاء", "الربيع", "الصيف", "الخريف"),
        things=things(
            plain("أولى ندف الثلج", "أشجار يلمع عليها الصقيع", "حديقة هادئة يغطيها الثلج"),
            plain("أزهار جديدة", "حديقة من زهور التوليب النائمة", "مطر ربيعي لطيف"),
            plain("سماء مليئة بنجوم الصيف", "مرج من اليراعات", "كثبان رملية دافئة"),
            plain("أوراق ذهبية تتساقط", "قمر حصاد كبير مستدير", "بستان تفاح"),
        ),
        gentle=plain("القمر", "بومة نعسانة", "نجمة صغيرة لطيفة", "غيمة تائهة"),
    ),
)
# Ukrainian changes a word's ending after most prepositions, as Polish does, so the family's
# words come after a colon, as they typed them; a season is an adjective that agrees with
# its noun (`{season:ins}` "зимовою ніччю", `{season:gen}` "зимового вечора"), and a thing
# after "під" and "над" is in the instrumental (`{thing:ins}`), after "крізь" as it is.
UKRAINIAN = Language(
    tag="uk", name="Українська", english="Ukrainian",
    next_prompt="що було далі в «{title}»",
    title_labels=("назва", "заголовок"),
    title_and=" та ",
    title_small_words=frozenset(
        "і й та а в у з із зі на по до від під над крізь через для о про за при".split()),
    ideas=IdeaWords(
        ideas=(
            "прогулянка{company} {season:ins} ніччю, а в головній ролі: {like}",
            "подорож човником{company} місячною річкою, а по дорозі: {like}",
            "таємний пікнік під {thing:ins}{company}, а на ньому: {like}",
            "карта скарбів{company} одного {season:gen} вечора, а в кінці шляху: {like}",
            "мандрівка з ліхтариками{company} крізь {thing}, а попереду: {like}",
            "затишна {season} схованка{company}, а в ній: {like}",
            "сонний політ на повітряній кулі{company} над {thing:ins}, а на добраніч: {like}",
        ),
        company=" з {name}",
        seasons=seasons(
            Word("зимова", {"ins": "зимовою", "gen": "зимового"}),
            Word("весняна", {"ins": "весняною", "gen": "весняного"}),
            Word("літня", {"ins": "літньою", "gen": "літнього"}),
            Word("осіння", {"ins": "осінньою", "gen": "осіннього"})),
        things=things(
            (Word("перші сніжинки", {"ins": "першими сніжинками"}),
             Word("дерева в іскристому інеї", {"ins": "деревами в іскристому інеї"}),
             Word("тихий засніжений сад", {"ins": "тихим засніженим садом"})),
            (Word("нові квіти", {"ins": "новими квітами"}),
             Word("сад сонних тюльпанів", {"ins": "садом сонних тюльпанів"}),
             Word("теплий весняний дощик", {"ins": "теплим весняним дощиком"})),
            (Word("небо літніх зірок", {"ins": "небом літніх зірок"}),
             Word("луку зі світлячками", {"ins": "лукою зі світлячками"}),
             Word("теплі піщані дюни", {"ins": "теплими піщаними дюнами"})),
            (Word("золотий листопад", {"ins": "золотим листопадом"}),
             Word("великий круглий осінній місяць", {"ins": "великим круглим осіннім місяцем"}),
             Word("яблуневий сад", {"ins": "яблуневим садом"})),
        ),
        gentle=plain("місяць", "сонна сова", "привітна маленька зірочка",
                     "загублена хмаринка"),
    ),
)
# Japanese puts no spaces between its words: a story's length and caps are its characters
# (about 250 read aloud slowly a minute, a picture book's pace). Each idea opens with what
# it is ("月夜のおさんぽ") and says the rest after a colon, where the family's words sit
# before the particle that ties them in ("{like}をさがしに"): the opening is a title's subject.
JAPANESE = Language(
    tag="ja", name="日本語", english="Japanese",
    next_prompt="「{title}」のつづき",
    title_labels=("タイトル", "題名", "表題"),
    title_and="と", title_comma="と",
    spaced=False, read_aloud_per_minute=250,
    instruction="Write it as a Japanese picture book is written: mostly hiragana, with only "
                "the kanji a young child learns first.",
    day_format="long",
    ideas=IdeaWords(
        ideas=(
            "月夜のおさんぽ：{season}の夜に、{company}{like}をさがしに",
            "小舟のたび：{company}月あかりの川をくだって、{like}をさがす",
            "ひみつのピクニック：{thing}に見守られて、{company}{like}に会いに",
            "宝の地図：{season}の夕ぐれ、{company}{like}のところまで",
            "ちょうちん行列：{company}{thing}をながめながら、{like}についていく",
            "ぽかぽかのかくれ家：{season}にぴったりのおうちで、{company}{like}とすごす",
            "ねむたい気球のたび：{company}{thing}のほうへ、{like}におやすみを言いに",
        ),
        company="{name}といっしょに",
        seasons=seasons("冬", "春", "夏", "秋"),
        things=things(
            plain("はじめての雪", "霜できらきら光る木々", "しずかな雪の庭"),
            plain("咲いたばかりの花", "ねむそうなチューリップの庭", "やさしい春の雨"),
            plain("夏の星でいっぱいの空", "ほたるの舞う野原", "あたたかい砂丘"),
            plain("舞い落ちる金色の葉", "大きくてまるい秋の月", "りんごの果樹園"),
        ),
        gentle=plain("お月さま", "ねむたいフクロウ", "やさしい小さな星", "まいごの雲"),
    ),
)

# Every story language, by its tag, in the order the form offers them.
LANGUAGES: dict[str, Language] = {language.tag: language for language in (
    ENGLISH, SPANISH, FRENCH, GERMAN, ITALIAN, PORTUGUESE, DUTCH, POLISH, ARABIC, UKRAINIAN,
    JAPANESE)}
DEFAULT_LANGUAGE = ENGLISH.tag  # a story's unless asked otherwise, and the source's
# The languages with a catalogue of their own (English is the source's): `make messages`.
TRANSLATED = tuple(tag for tag in LANGUAGES if tag != DEFAULT_LANGUAGE)


def language_of(tag: str | None) -> Language:
    """A tag's record ("es", "es-MX": Spanish); English for one the app does not know."""
    return LANGUAGES.get((tag or "").split("-")[0].lower(), ENGLISH)


def direction(tag: str | None) -> str:
    """A text's direction (`dir`) from its language, never guessed from its first letter."""
    return language_of(tag).direction
