"""Absolute relevance and "the same text" for auto-recall (pure functions, no I/O).

Ranking scores are relative: each side is normalised by the best hit of the query, so the best
passage for "thanks!" scores as high as the best one for a real question. Auto-recall needs an
absolute floor instead: a passage is recalled only when there is evidence that it is about what the
message asks — most of the message's terms, or a similarity (:func:`floor_similarity`: each model's
cosine measured from the message's own cosine to unrelated text) of at least
:data:`~neotask_tui.tuning.MEMORY_RECALL_MIN_COSINE`. A message that finds nothing above the floor
recalls nothing and spends no tokens on recall.

A passage is covered by another when its words (lower-cased, punctuation dropped, stopwords kept so
"not" counts) appear, in order and contiguous, in the other: the same line in ``MEMORY.md`` and in an
archived transcript, or a message quoted inside a longer memory entry, is one item (the one kept is
the one recall ranks first: consented memory before transcripts).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

import regex

from neotask_tui.text import lexical
from neotask_tui.text.remember import remembered
from neotask_tui.tuning import MEMORY_RECALL_MIN_COSINE

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_C = TypeVar("_C")


def calibrated(cos: _C, offset: float) -> _C:
    """Cosine(s) on the scale every floor is set on: ``(cos - offset) / (1 - offset)``, where
    ``offset`` is the embedding model's cosine of unrelated text (``ModelSpec.cos_offset``; 0 for the
    MiniLM the floors were set on, so its cosines are unchanged). Works on floats and numpy arrays."""
    if not offset:
        return cos
    return (cos - offset) / (1.0 - offset)  # type: ignore[operator, return-value]


def similarity(mat: npt.NDArray[np.float32], q: npt.NDArray[np.float32],
               offsets: Sequence[float] = (0.0,)) -> npt.NDArray[np.float64]:
    """Calibrated cosine of every row of ``mat`` (passages) to ``q`` (one vector, or a matrix of
    vectors: the result is then ``(len(q), len(mat))``).

    ``offsets`` holds one :func:`calibrated` offset per model of the embedding (one for a single
    model). An embedding of several models (:attr:`ModelSpec.parts`) is the concatenation of equal
    parts: a passage's parts are unit vectors divided by ``sqrt(n)``; a query's part ``i`` is
    ``sqrt(n) * w_i`` times a unit vector, its weights ``w_i`` summing to 1. The result is then
    ``sum_i w_i * calibrated(cos_i, offset_i)``: each model's cosine on the common scale, weighted
    as the query asks. A passage used as the query (two passages compared) has ``w_i = 1 / n``.
    """
    import numpy as np

    n = len(offsets)
    if n == 1:
        dot = q @ mat.T if q.ndim == 2 else mat @ q
        return calibrated(dot.astype(np.float64, copy=False), offsets[0])
    d = mat.shape[1] // n
    total: npt.NDArray[np.float64] | None = None
    for i, off in enumerate(offsets):
        qi = q[..., i * d:(i + 1) * d]
        mi = mat[:, i * d:(i + 1) * d]
        dot = (qi @ mi.T if q.ndim == 2 else mi @ qi).astype(np.float64)
        w = np.linalg.norm(qi, axis=-1, keepdims=q.ndim == 2) / math.sqrt(n)
        part = (dot - w * off) / (1.0 - off)
        total = part if total is None else total + part
    assert total is not None
    return total


def unit_parts(arr: npt.NDArray[np.float32], n: int = 1) -> npt.NDArray[np.float32]:
    """Rows of ``arr`` as stored passage vectors (in place): each of the ``n`` equal parts a unit
    vector divided by ``sqrt(n)`` (the whole row a unit vector; plain normalisation when ``n`` is 1)."""
    import numpy as np

    d = arr.shape[-1] // n
    for i in range(n):
        part = arr[..., i * d:(i + 1) * d]
        part /= np.maximum(np.linalg.norm(part, axis=-1, keepdims=True), 1e-12) * math.sqrt(n)
    return arr


def like_query(v: npt.NDArray[np.float32], query: npt.NDArray[np.float32], n: int = 1) -> npt.NDArray[np.float32]:
    """``v`` (a mix of a query and passages, e.g. pseudo-relevance feedback) rescaled part by part to
    the norms of ``query``'s parts, so it keeps the query's weights (see :func:`similarity`)."""
    import numpy as np

    out = v.astype(np.float32, copy=True)
    d = out.shape[-1] // n
    for i in range(n):
        sl = slice(i * d, (i + 1) * d)
        out[sl] *= float(np.linalg.norm(query[sl])) / max(float(np.linalg.norm(out[sl])), 1e-12)
    return out


UNRELATED: Final = (
    "The weather was cold and windy all week.", "She plays the violin in a small orchestra.",
    "We painted the kitchen walls light blue.", "The football match ended in a draw.",
    "He bought a used bicycle from a neighbour.", "The museum is closed on public holidays.",
    "Our flight was delayed by two hours.", "The recipe needs three eggs and a cup of flour.",
    "The printer on the second floor is out of paper.", "I watched a documentary about whales.",
    "The train station is a short walk from the hotel.", "They planted tomatoes in the garden.",
    "The meeting was moved to Tuesday afternoon.", "The laptop battery lasts about six hours.",
    "My grandmother tells stories about her village.", "The river flooded the fields last spring.",
    "Погода всю неделю была холодной и ветреной.", "Она играет на скрипке в небольшом оркестре.",
    "Мы покрасили стены на кухне в голубой цвет.", "Футбольный матч закончился вничью.",
    "Он купил подержанный велосипед у соседа.", "Музей закрыт в праздничные дни.",
    "Наш рейс задержали на два часа.", "Для рецепта нужны три яйца и стакан муки.",
    "В принтере на втором этаже закончилась бумага.", "Я посмотрел документальный фильм о китах.",
    "Вокзал находится недалеко от гостиницы.", "Они посадили помидоры в огороде.",
    "Das Wetter war die ganze Woche kalt.", "El museo está cerrado los días festivos.",
    "Ми пофарбували стіни на кухні.", "Le train est arrivé en retard ce matin.",
)
"""Reference passages about everyday things, in the users' languages (English, Russian, a few
others), embedded as passages by every model: a message's mean cosine to them is how close that
message is to text about something else, on that model (:func:`floor_similarity`). Written by hand,
not fitted; they only need to be about many different things. A passage in a script of
:data:`UNRELATED_BY_SCRIPT` is measured against that script's references instead."""

UNRELATED_BY_SCRIPT: Final[dict[str, tuple[str, ...]]] = {
    "cyrillic": tuple(t for t in UNRELATED if regex.search(r"\p{Cyrillic}", t)),
    "han": ("这周天气一直又冷又有风。", "她在一个小乐团里拉小提琴。", "我们把厨房的墙刷成了浅蓝色。",
            "足球比赛最后打成了平局。", "他从邻居那里买了一辆旧自行车。", "博物馆在节假日不开放。",
            "我们的航班晚点了两个小时。", "二楼的打印机没纸了。"),
    "kana": ("今週はずっと寒くて風が強かった。", "彼女は小さなオーケストラでバイオリンを弾いている。",
             "台所の壁を水色に塗った。", "サッカーの試合は引き分けに終わった。",
             "彼は近所の人から中古の自転車を買った。",
             "美術館は祝日は休館です。", "飛行機が二時間遅れた。", "二階のプリンターの紙が切れている。"),
    "hangul": ("이번 주 내내 춥고 바람이 많이 불었다.", "그녀는 작은 오케스트라에서 바이올린을 연주한다.",
               "우리는 부엌 벽을 하늘색으로 칠했다.", "축구 경기는 무승부로 끝났다.",
               "그는 이웃에게서 중고 자전거를 샀다.",
               "박물관은 공휴일에 문을 닫는다.", "우리 비행기가 두 시간 지연되었다.", "2층 프린터에 종이가 떨어졌다."),
    "greek": ("Ο καιρός ήταν κρύος και με αέρα όλη την εβδομάδα.", "Παίζει βιολί σε μια μικρή ορχήστρα.",
              "Βάψαμε τους τοίχους της κουζίνας γαλάζιους.", "Ο αγώνας ποδοσφαίρου έληξε ισόπαλος.",
              "Αγόρασε ένα μεταχειρισμένο ποδήλατο από έναν γείτονα.", "Το μουσείο είναι κλειστό τις αργίες.",
              "Η πτήση μας καθυστέρησε δύο ώρες.", "Ο εκτυπωτής στον δεύτερο όροφο δεν έχει χαρτί."),
    "arabic": ("كان الطقس باردا وعاصفا طوال الأسبوع.", "تعزف على الكمان في أوركسترا صغيرة.",
               "دهنّا جدران المطبخ باللون الأزرق الفاتح.", "انتهت مباراة كرة القدم بالتعادل.",
               "اشترى دراجة مستعملة من أحد الجيران.", "المتحف مغلق في أيام العطل الرسمية.",
               "تأخرت رحلتنا ساعتين.", "نفد الورق من الطابعة في الطابق الثاني."),
    "hebrew": ("מזג האוויר היה קר וסוער כל השבוע.", "היא מנגנת בכינור בתזמורת קטנה.", "צבענו את קירות המטבח בתכלת.",
               "משחק הכדורגל הסתיים בתיקו.", "הוא קנה אופניים משומשים משכן.", "המוזיאון סגור בחגים.",
               "הטיסה שלנו התעכבה בשעתיים.", "למדפסת בקומה השנייה נגמר הנייר."),
    "devanagari": ("पूरे हफ़्ते मौसम ठंडा और तेज़ हवा वाला रहा।", "वह एक छोटे ऑर्केस्ट्रा में वायलिन बजाती है।",
                   "हमने रसोई की दीवारों को हल्का नीला रंग दिया।", "फ़ुटबॉल मैच बराबरी पर खत्म हुआ।",
                   "उसने एक पड़ोसी से पुरानी साइकिल खरीदी।", "संग्रहालय सरकारी छुट्टियों पर बंद रहता है।",
                   "हमारी उड़ान दो घंटे देर से चली।", "दूसरी मंज़िल के प्रिंटर में कागज़ खत्म हो गया है।"),
    "thai": ("อากาศหนาวและลมแรงตลอดทั้งสัปดาห์", "เธอเล่นไวโอลินในวงออร์เคสตราเล็กๆ", "เราทาสีผนังห้องครัวเป็นสีฟ้าอ่อน",
             "การแข่งขันฟุตบอลจบลงด้วยผลเสมอ", "เขาซื้อจักรยานมือสองจากเพื่อนบ้าน", "พิพิธภัณฑ์ปิดในวันหยุดนักขัตฤกษ์",
             "เที่ยวบินของเราล่าช้าสองชั่วโมง", "เครื่องพิมพ์ที่ชั้นสองกระดาษหมด"),
}
"""The same kind of everyday references (weather, music, a kitchen, football, a bicycle, a museum, a
flight, a printer) in scripts other than Latin (Cyrillic: the Russian and Ukrainian lines of
:data:`UNRELATED`). A message is much closer to any text in
its own language than to text in another on e5 ("澳大利亚的首都是哪里？" sits 0.29 above the mean of
:data:`UNRELATED` for "昨天下雨了，我们下了一下午的棋。", about a rainy afternoon of chess, but 0.00
above Chinese references about other things), so a passage in one of these scripts is measured
against references in its script (:func:`script`). Latin passages keep the mixed set
:data:`UNRELATED`. Cyrillic ones were measured against it too (an English message is about as close to
its Russian sentences as to its English ones on e5: 0.738 against 0.730 for "Am I allergic to
anything?"), but a Russian message is not: "Напиши стихотворение про осень." scored 0.39 to the line
"Мы деплоим по четвергам." from the mixed set's baseline, 0.30 from the Cyrillic lines'."""

_SCRIPTS: Final = tuple((name, regex.compile(pattern)) for name, pattern in (
    ("kana", r"[\p{Hiragana}\p{Katakana}]"), ("han", r"\p{Han}"), ("hangul", r"\p{Hangul}"),
    ("greek", r"\p{Greek}"), ("arabic", r"\p{Arabic}"), ("hebrew", r"\p{Hebrew}"),
    ("devanagari", r"\p{Devanagari}"), ("thai", r"\p{Thai}"), ("cyrillic", r"\p{Cyrillic}")))
_LETTER: Final = regex.compile(r"\p{L}")


def script(text: str) -> str | None:
    """The key of :data:`UNRELATED_BY_SCRIPT` whose references ``text`` is measured against: the
    script of at least half of its letters (Japanese: Han and kana together, once any kana is
    there), or ``None`` (Latin, mixed, no letters: :data:`UNRELATED`)."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return None
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS}
    if counts["kana"]:
        counts["kana"] += counts["han"]
    name, n = max(counts.items(), key=lambda kv: kv[1])
    return name if 2 * n >= letters else None


def references() -> tuple[tuple[str | None, tuple[str, ...]], ...]:
    """Every reference set with its script key (``None``: :data:`UNRELATED`), in a fixed order."""
    return ((None, UNRELATED), *UNRELATED_BY_SCRIPT.items())


class PassageEmbedder(Protocol):
    """What :func:`unrelated_vectors` needs of an embedding model (the index's ``Embedder``; this
    layer does not import it)."""

    model_id: str

    def embed(self, texts: Sequence[str], *, urgent: bool = False) -> npt.NDArray[np.float32]: ...


_UNRELATED_VECTORS: dict[str, dict[str | None, npt.NDArray[np.float32]]] = {}
_UNRELATED_LOCK = threading.Lock()


def unrelated_vectors(embedder: PassageEmbedder) -> dict[str | None, npt.NDArray[np.float32]]:
    """The stored vectors of each reference set of :func:`references` (by script key) for
    ``embedder``'s model, embedded once a process (a pair takes about a second; the vectors depend on
    the model alone): what :func:`floor_similarity` measures a message's own baseline against."""
    key = embedder.model_id
    with _UNRELATED_LOCK:
        got = _UNRELATED_VECTORS.get(key)
        if got is None:
            sets = references()
            vecs = embedder.embed([t for _, texts in sets for t in texts], urgent=True)
            got, start = {}, 0
            for name, texts in sets:
                got[name] = vecs[start:start + len(texts)]
                start += len(texts)
            _UNRELATED_VECTORS[key] = got
    return got


def floor_similarity(mat: npt.NDArray[np.float32], q: npt.NDArray[np.float32],
                     unrelated: Mapping[str | None, npt.NDArray[np.float32]], weights: npt.NDArray[np.float64],
                     scripts: Sequence[str | None] | None = None) -> npt.NDArray[np.float64]:
    """Similarity of every row of ``mat`` (stored passages) to the query vector ``q`` on the scale
    of auto-recall's floor (:data:`~neotask_tui.tuning.MEMORY_RECALL_MIN_COSINE`).

    A fixed offset per model (:func:`calibrated`) says how close unrelated text is *on average*; a
    message's own closeness to everything varies with the message far more than that on e5 ("Напиши
    рецепт борща." has a raw cosine of 0.81-0.84 to any short English sentence, "Какая столица
    Австралии?" 0.69-0.73). So each model's cosine is measured from this message's own baseline: its
    mean cosine ``b`` to :data:`UNRELATED` (``unrelated``: their stored vectors), as
    ``(cos - b) / (1 - b)``; for a passage in a script of :data:`UNRELATED_BY_SCRIPT`, to the
    references in its script. Unrelated text then scores about 0 on every model and for every message,
    which is what the floor assumes, and no per-model constant is needed (a configured fastembed
    model gets the same treatment).

    Args:
        mat: Passage vectors as stored (:func:`unit_parts`).
        q: The query vector as embedded (a pair's parts weighted, see :func:`similarity`).
        unrelated: The stored vectors of each reference set of :func:`references`, by script key
            (``None``: :data:`UNRELATED`, required).
        weights: ``(len(mat), n_models)``: each model's weight for each passage (rows sum to 1; for a
            pair ``models.pair_weights``). A model whose part of ``q`` is zero (no weight for this
            query) is left out.
        scripts: Each passage's :func:`script` (default: all ``None``); a script without references
            in ``unrelated`` falls back to :data:`UNRELATED`.

    Returns:
        The weighted sum of each model's baselined cosine, per passage.
    """
    import numpy as np

    n = weights.shape[1]
    d = mat.shape[1] // n
    keys = list(scripts) if scripts is not None else [None] * len(mat)
    wanted = {None, *(k for k in keys if k in unrelated)}  # only the reference sets these passages use
    out = np.zeros(len(mat), dtype=np.float64)
    for i in range(n):
        part = slice(i * d, (i + 1) * d)
        norm = float(np.linalg.norm(q[part]))
        if norm == 0.0:
            continue
        u = q[part].astype(np.float64) * (math.sqrt(n) / norm)  # stored parts are unit / sqrt(n)
        cos = mat[:, part].astype(np.float64) @ u
        bases = {key: float((unrelated[key][:, part].astype(np.float64) @ u).mean()) for key in wanted}
        base = np.array([bases.get(sc, bases[None]) for sc in keys])
        out += weights[:, i] * (cos - base) / (1.0 - base)
    return out


def relevant(cosine: float | None, matched: int, query_terms: int,
             floor: float = MEMORY_RECALL_MIN_COSINE) -> bool:
    """Whether a passage clears auto-recall's relevance floor.

    Args:
        cosine: Similarity of the passage to the message on the floor's scale (auto-recall passes
            :func:`floor_similarity`; ``None``: no embeddings, lexical only).
        matched: How many of the message's distinct normalised terms the passage's own text holds.
        query_terms: How many distinct normalised terms the message has.
        floor: The cosine floor.

    Returns:
        True when the passage holds more than half of the message's terms, or its cosine reaches
        ``floor``.
    """
    if query_terms > 0 and 2 * matched > query_terms:
        return True
    return cosine is not None and cosine >= floor


def word_seq(text: str) -> tuple[str, ...]:
    """The lower-cased words of ``text`` (see :func:`neotask_tui.text.lexical.words`), in order."""
    return tuple(lexical.words(text))


def repeats(part: Sequence[str], whole: Sequence[str]) -> bool:
    """Whether the words ``part`` appear, contiguous and in order, in ``whole`` (both from
    :func:`word_seq`); an empty ``part`` never does."""
    n = len(part)
    if n == 0 or n > len(whole):
        return False
    first = part[0]
    p = tuple(part)
    return any(whole[i] == first and tuple(whole[i:i + n]) == p for i in range(len(whole) - n + 1))


def covered(text: str, by: str) -> bool:
    """Whether ``text`` says nothing that ``by`` does not: its words repeat in ``by`` (see the
    module docstring). The same passage from two sources is covered both ways. A leading request to
    remember ("Remember: …", "Запомни, что …", :func:`~neotask_tui.text.remember.remembered`) is not
    part of what ``text`` says: the message is covered by the memory made from it."""
    return repeats(word_seq(remembered(text)), word_seq(by))
