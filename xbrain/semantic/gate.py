"""The semantic leg's gate, derived from the model itself (SPEC §14).

A cosine means different things to different models: one spreads unrelated texts around
0.1, another packs everything between 0.7 and 0.9. So the gate is not a number chosen by
hand: it stands ``SPREAD`` standard deviations above the mean of the model's cosines
between prompts and passages that are about different things by construction —
``PROMPTS`` and ``PASSAGES`` below share no topic, in English and Chinese, technical and
everyday. A score within the model's usual range for unrelated text says nothing. It is
computed once per model when its vectors are built (a few dozen short texts) and kept in
the vectors' header; a ``--floor`` the user chose still wins. A model that gives all of
those texts nearly one vector cannot be calibrated, nor can the hashing provider (no
model): their provider's floor stands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Provider

__all__ = ["PASSAGES", "PROMPTS", "SPREAD", "TERSE_SPREAD", "calibrate", "queries", "threshold"]

SPREAD = 2.0  # chosen on the dev halves of bench/semantic_quality.py (see the README)
TERSE_SPREAD = 5.0  # a prompt of one content word ("收到", "nice job"): far less to go on
FLAT = 1e-3  # a spread below this: the model does not tell these texts apart

PROMPTS = (
    "what should I cook for dinner tonight with chicken and rice",
    "will it rain this weekend in the mountains",
    "who won the football match yesterday",
    "how often should I water tomato plants",
    "recommend a good jazz album for a long drive",
    "do I need a visa to visit Japan as a tourist",
    "my cat keeps scratching the sofa, what can I do",
    "how do I cast on stitches when knitting a scarf",
    "when is the next full moon",
    "which red wine goes well with lamb",
    "ok thanks",
    "sounds good, go ahead",
    "今晚做什么菜好吃",
    "这个周末会下雨吗",
    "昨天的足球比赛谁赢了",
    "怎么给多肉植物浇水",
    "推荐一首适合开车听的歌",
    "去日本旅游需要签证吗",
    "我家的狗不爱吃饭怎么办",
    "下一次月全食是什么时候",
    "好的",
    "谢谢你",
)
PASSAGES = (
    "Deploy the service with the blue-green strategy: start the new release beside the "
    "old one, switch the load balancer, and keep the old release for a quick rollback.",
    "Rebase the feature branch on main before opening a pull request and squash fixups.",
    "The replica is promoted when the primary database stops answering health checks.",
    "Install the project's dependencies with the package manager and pin their versions.",
    "File the quarterly tax return before the deadline and keep receipts for five years.",
    "Change the engine oil every ten thousand kilometres and check the tyre pressure.",
    "The Roman Republic was governed by two consuls elected every year by the assemblies.",
    "In the Sicilian Defence black answers e4 with c5 and fights for the centre at once.",
    "Brush twice a day and floss once; see a dentist for a cleaning every six months.",
    "A wider aperture lets more light reach the sensor and makes the background blur.",
    "用容器编排平台滚动发布新版本，出问题时回滚到上一个版本。",
    "提交代码前先运行单元测试和静态检查，确保持续集成通过。",
    "每季度按时申报个人所得税，保留好发票和收据。",
    "汽车每行驶一万公里需要更换机油并检查刹车片。",
    "唐朝的都城长安是当时世界上人口最多的城市之一。",
    "围棋的开局通常先占角，再守边，最后向中腹发展。",
    "登山前要准备好防水外套、头灯和足够的饮用水。",
    "摄影时光圈越大，进光量越多，背景越模糊。",
)


def calibrate(provider: Provider) -> tuple[float, float]:
    """The mean and standard deviation of ``provider``'s cosines between ``PROMPTS`` and
    ``PASSAGES`` (every pair unrelated); ``(its floor, 0)`` when it cannot be
    calibrated."""
    import numpy as np

    if not getattr(provider, "calibrated", True):
        return float(provider.floor), 0.0
    prompts = queries(provider, list(PROMPTS))
    passages = provider.embed(list(PASSAGES))
    scores = np.asarray(prompts @ passages.T, dtype=np.float64).ravel()
    if float(scores.std()) < FLAT:
        return float(provider.floor), 0.0
    return round(float(scores.mean()), 6), round(float(scores.std()), 6)


def threshold(stats: tuple[float, float], spread: float = SPREAD) -> float:
    """The gate ``spread`` standard deviations above the unrelated cosines' mean."""
    mean, deviation = stats
    return round(min(1.0, mean + spread * deviation), 4)


def queries(provider: Provider, texts: list[str]) -> np.ndarray:
    """``texts`` embedded as queries: by the provider's ``embed_query`` when it has one
    (a model trained with a query prefix), else as any text."""
    embed = getattr(provider, "embed_query", None)
    return embed(texts) if callable(embed) else provider.embed(texts)
