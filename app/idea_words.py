"""Tonight's ideas as each story language says them (app/ideas.py picks one and fills it in).

    WORDS["es"].ideas[0].format(company=" con Pip", season=Word("invierno"), like=Word("zorros"))
    # "un paseo con Pip en una noche de invierno para encontrar zorros"

Each language has seven ideas of its own, not translated word for word, so the family's own
words (a like, a companion's name) sit where they read well: after "with", or after a colon
in Polish, whose prepositions would change a word's ending. Our own words come in the forms
an idea asks for by name (`{thing:dat}`: German's dative after "unter"), else as they are.
No two ideas of a language begin alike, so two nights running never read the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SEASON_NAMES = ("winter", "spring", "summer", "autumn")


@dataclass(frozen=True)
class Word:
    """A word or phrase, with the other forms an idea may ask for (`{like:dat}`)."""

    plain: str
    forms: Mapping[str, str] = field(default_factory=dict)

    def __format__(self, form: str) -> str:
        return self.forms.get(form, self.plain) if form else self.plain


@dataclass(frozen=True)
class IdeaWords:
    """One language's ideas (`{company}`, `{season}`, `{thing}`, `{like}` in each), how it
    says "with Pip" (`company`), and its seasons, things of the season and gentle things
    (what a story looks for when the profile names no likes)."""

    ideas: tuple[str, ...]
    company: str
    seasons: Mapping[str, Word]
    things: Mapping[str, tuple[Word, ...]]
    gentle: tuple[Word, ...]


def _plain(*words: str) -> tuple[Word, ...]:
    return tuple(Word(word) for word in words)


def _seasons(*words: str | Word) -> dict[str, Word]:
    return {name: word if isinstance(word, Word) else Word(word)
            for name, word in zip(SEASON_NAMES, words, strict=True)}


def _things(*rows: tuple[Word, ...]) -> dict[str, tuple[Word, ...]]:
    return dict(zip(SEASON_NAMES, rows, strict=True))


WORDS: dict[str, IdeaWords] = {
    "en": IdeaWords(
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
        seasons=_seasons(*SEASON_NAMES),
        things=_things(
            _plain("the first snowflakes", "frosty sparkling trees", "a quiet snowy garden"),
            _plain("new blossom", "a garden of sleepy tulips", "soft spring rain"),
            _plain("a sky full of summer stars", "a meadow of fireflies", "warm sand dunes"),
            _plain("falling golden leaves", "a big round harvest moon", "an orchard of apples"),
        ),
        gentle=_plain("the moon", "a sleepy owl", "a friendly little star", "a lost cloud"),
    ),
    "es": IdeaWords(
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
        seasons=_seasons("invierno", "primavera", "verano", "otoño"),
        things=_things(
            _plain("los primeros copos de nieve", "árboles que brillan de escarcha",
                   "un jardín nevado y callado"),
            _plain("flores nuevas", "un jardín de tulipanes dormidos",
                   "una lluvia suave de primavera"),
            _plain("un cielo lleno de estrellas de verano", "un prado de luciérnagas",
                   "dunas de arena tibia"),
            _plain("hojas doradas que caen", "una luna de otoño grande y redonda",
                   "un huerto de manzanos"),
        ),
        gentle=_plain("la luna", "un búho dormilón", "una estrellita amiga",
                      "una nube perdida"),
    ),
    "fr": IdeaWords(
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
        seasons=_seasons("d’hiver", "de printemps", "d’été", "d’automne"),
        things=_things(
            _plain("les premiers flocons", "des arbres scintillants de givre",
                   "un jardin tranquille sous la neige"),
            _plain("des fleurs nouvelles", "un jardin de tulipes endormies",
                   "une douce pluie de printemps"),
            _plain("un ciel plein d’étoiles d’été", "une prairie de lucioles",
                   "des dunes de sable tiède"),
            _plain("des feuilles dorées qui tombent", "une grosse lune des moissons",
                   "un verger de pommiers"),
        ),
        gentle=_plain("la lune", "une chouette endormie", "une gentille petite étoile",
                      "un petit nuage perdu"),
    ),
    # Winter + nacht: one word, as German makes it. After "unter", a thing is in the
    # dative; after "durch" and "über", and every like, in the accusative.
    "de": IdeaWords(
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
        seasons=_seasons("Winter", "Frühlings", "Sommer", "Herbst"),
        things=_things(
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
        gentle=_plain("den Mond", "eine schläfrige Eule", "einen freundlichen kleinen Stern",
                      "eine verirrte Wolke"),
    ),
    "it": IdeaWords(
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
        seasons=_seasons("d’inverno", "di primavera", "d’estate", "d’autunno"),
        things=_things(
            _plain("i primi fiocchi di neve", "alberi che brillano di brina",
                   "un giardino silenzioso e innevato"),
            _plain("fiori nuovi", "un giardino di tulipani addormentati",
                   "una pioggerella di primavera"),
            _plain("un cielo pieno di stelle d’estate", "un prato di lucciole",
                   "dune di sabbia tiepida"),
            _plain("foglie dorate che cadono", "una grande luna d’autunno",
                   "un frutteto di mele"),
        ),
        gentle=_plain("la luna", "un gufo assonnato", "una stellina amica",
                      "una nuvola smarrita"),
    ),
    "pt": IdeaWords(
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
        seasons=_seasons("inverno", "primavera", "verão", "outono"),
        things=_things(
            _plain("os primeiros flocos de neve", "árvores cintilantes de geada",
                   "um jardim calmo coberto de neve"),
            _plain("flores novas", "um jardim de tulipas sonolentas",
                   "uma chuva suave de primavera"),
            _plain("um céu cheio de estrelas de verão", "um prado de pirilampos",
                   "dunas de areia morna"),
            _plain("folhas douradas que caem", "uma grande lua cheia de outono",
                   "um pomar de macieiras"),
        ),
        gentle=_plain("a lua", "uma coruja sonolenta", "uma estrelinha amiga",
                      "uma nuvem perdida"),
    ),
    # Winter + nacht, one word, as Dutch makes it too.
    "nl": IdeaWords(
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
        seasons=_seasons("winter", "lente", "zomer", "herfst"),
        things=_things(
            _plain("de eerste sneeuwvlokjes", "fonkelende bomen vol rijp",
                   "een stille besneeuwde tuin"),
            _plain("nieuwe bloesem", "een tuin vol slaperige tulpen", "zachte lenteregen"),
            _plain("een hemel vol zomersterren", "een wei vol vuurvliegjes",
                   "warme zandduinen"),
            _plain("vallende gouden blaadjes", "een grote ronde oogstmaan",
                   "een boomgaard vol appels"),
        ),
        gentle=_plain("de maan", "een slaperige uil", "een lief klein sterretje",
                      "een verdwaald wolkje"),
    ),
    # Polish changes a word's ending after most prepositions, so the family's words come
    # after a colon, as they typed them; a season is an adjective that agrees with its noun
    # (`{season:ins}` "zimową nocą", `{season:gen}` "zimowego wieczoru", plain: "zimowa").
    "pl": IdeaWords(
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
        seasons=_seasons(
            Word("zimowa", {"ins": "zimową", "gen": "zimowego"}),
            Word("wiosenna", {"ins": "wiosenną", "gen": "wiosennego"}),
            Word("letnia", {"ins": "letnią", "gen": "letniego"}),
            Word("jesienna", {"ins": "jesienną", "gen": "jesiennego"})),
        things=_things(
            (Word("pierwsze płatki śniegu", {"ins": "pierwszymi płatkami śniegu"}),
             Word("drzewa lśniące od szronu", {"ins": "drzewami lśniącymi od szronu"}),
             Word("cichy, ośnieżony ogród", {"ins": "cichym, ośnieżonym ogrodem"})),
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
        gentle=_plain("księżyc", "senna sówka", "przyjazna mała gwiazdka", "zagubiona chmurka"),
    ),
    "ar": IdeaWords(
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
        seasons=_seasons("الشتاء", "الربيع", "الصيف", "الخريف"),
        things=_things(
            _plain("أولى ندف الثلج", "أشجار يلمع عليها الصقيع", "حديقة هادئة يغطيها الثلج"),
            _plain("أزهار جديدة", "حديقة من زهور التوليب النائمة", "مطر ربيعي لطيف"),
            _plain("سماء مليئة بنجوم الصيف", "مرج من اليراعات", "كثبان رملية دافئة"),
            _plain("أوراق ذهبية تتساقط", "قمر حصاد كبير مستدير", "بستان تفاح"),
        ),
        gentle=_plain("القمر", "بومة نعسانة", "نجمة صغيرة لطيفة", "غيمة تائهة"),
    ),
}
