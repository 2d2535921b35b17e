"""The words conversation is made of (recall's and the semantic leg's chatter rule): a
leaf module, so the semantic leg can ask without importing recall's candidates."""

from __future__ import annotations

__all__ = ["CHATTER"]

# What conversation is made of — pronouns, greetings, acknowledgements, question and
# discourse words, auxiliaries, Chinese particles — which a note may well contain but
# which say nothing about what the prompt needs. Only recall ignores them — in the gate
# for skills and resources and in an entry's "content" match; they are still searched
# and scored everywhere else.
_CHATTER_WORDS = (
    "i me my mine we us our you your yours he she they them their it's that's there "
    "here this these those what which who whom whose why how when where do does did "
    "done doing be been being am are was were have has had having can could shall "
    "should will would may might must let let's lets ok okay yes yeah yep no nope not "
    "thanks thank please sorry hello hi hey bye sure fine good great nice cool perfect "
    "right well just so then now also too very really much more some any all think "
    "know see say said tell told want need like go going get got make made move on "
    "continue next sounds looks seems "
    "你 我 他 她 它 我们 你们 他们 这 那 这个 那个 这些 那些 什么 怎么 怎么样 为什么 "
    "哪 哪个 吗 呢 吧 啊 呀 嗯 嗯嗯 哦 哈 哈哈 好 好的 行 对 是 不 没 没有 问题 可以 "
    "谢谢 感谢 请 继续 下 一步 下一步 然后 现在 觉得 认为 知道 想 要 太 了 很 非常 "
    "还 也 都 就 再 这样 那样 一样"
)
CHATTER = frozenset(_CHATTER_WORDS.split())
