"""The hand-written data of ``bench/everyday.py``: everyday prompts against short memories
and facts stated in conversation (``bench/data/everyday.yaml``, ``conversation.yaml``).

Loading checks the files (ids unique, every prompt's memory there, twins both ways, each
memory file's section titles unique, no prompt copying its memory's words) and raises
``ValueError`` naming what is wrong; ``memory_files`` writes the memories as the memory
files ``xbrain entry import`` reads (one ``## `` section per memory, no frontmatter), so
each becomes an entry named ``<file>#<title>``. Pure: no store, no model.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

DATA = Path(__file__).resolve().parent / "data"
LANGUAGES = ("en", "zh")
HAN = re.compile(r"[\u3400-\u9fff]")
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
EN_RUN, ZH_RUN = 3, 4  # the shortest run of a memory's words a prompt may not repeat


@dataclass(frozen=True)
class Memory:
    """One record: a ``## title`` section of memory file ``file``."""

    id: str
    file: str
    title: str
    text: str
    twin: str | None = None

    @property
    def name(self) -> str:
        """The entry's name once imported."""
        return f"{self.file}#{self.title}"

    @property
    def lang(self) -> str:
        return language(self.text)


@dataclass(frozen=True)
class Prompt:
    """A prompt (or question), its language, and the memories that answer it."""

    text: str
    lang: str
    answers: frozenset[str]
    target: str
    cross: bool = False


@dataclass(frozen=True)
class Everyday:
    memories: list[Memory]
    distractors: list[Memory]
    prompts: list[Prompt]
    chatter: dict[str, list[str]]


@dataclass(frozen=True)
class Conversation:
    turns: list[Memory]  # one record per turn
    questions: list[Prompt]


def language(text: str) -> str:
    """``zh`` when the text holds a Chinese character, else ``en``."""
    return "zh" if HAN.search(text) else "en"


def shared_phrase(prompt: str, text: str) -> str | None:
    """The first run of ``text``'s words the prompt repeats: three English words in a
    row, or four Chinese characters in a row; None when there is none."""
    words = WORD.findall(prompt.lower())
    theirs = " " + " ".join(WORD.findall(text.lower())) + " "
    for i in range(len(words) - EN_RUN + 1):
        run = " ".join(words[i : i + EN_RUN])
        if f" {run} " in theirs:
            return run
    for chunk in re.findall(r"[\u3400-\u9fff]+", prompt):
        for i in range(len(chunk) - ZH_RUN + 1):
            if chunk[i : i + ZH_RUN] in text:
                return chunk[i : i + ZH_RUN]
    return None


def _yaml(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def _memory(raw: dict[str, Any]) -> Memory:
    return Memory(
        str(raw["id"]), str(raw["file"]), str(raw["title"]), str(raw["text"]), raw.get("twin")
    )


def _check_records(records: list[Memory]) -> dict[str, Memory]:
    ids = Counter(m.id for m in records)
    names = Counter(m.name for m in records)
    twice = [i for i, n in ids.items() if n > 1] + [i for i, n in names.items() if n > 1]
    if twice:
        raise ValueError(f"ids or section titles given twice: {sorted(twice)}")
    return {m.id: m for m in records}


def load_everyday(path: Path = DATA / "everyday.yaml") -> Everyday:
    raw = _yaml(path)
    memories = [_memory(m) for m in raw["memories"]]
    distractors = [_memory(m) for m in raw["distractors"]]
    by_id = _check_records(memories + distractors)
    for m in memories:
        if m.twin is not None and (m.twin not in by_id or by_id[m.twin].twin != m.id):
            raise ValueError(f"{m.id}: its twin {m.twin} does not name it back")
    prompts = []
    for item in raw["prompts"]:
        target, text = str(item["to"]), str(item["prompt"])
        if target not in by_id or by_id[target] in distractors:
            raise ValueError(f"prompt {text!r}: no memory {target}")
        memory = by_id[target]
        copied = shared_phrase(text, f"{memory.title} {memory.text}")
        if copied:
            raise ValueError(f"prompt {text!r} repeats its memory's words: {copied!r}")
        answers = frozenset({target} | ({memory.twin} if memory.twin else set()))
        lang = language(text)
        prompts.append(Prompt(text, lang, answers, target, cross=lang != memory.lang))
    chatter = {lang: [str(p) for p in raw["chatter"][lang]] for lang in LANGUAGES}
    return Everyday(memories, distractors, prompts, chatter)


def load_conversation(path: Path = DATA / "conversation.yaml") -> Conversation:
    raw = _yaml(path)
    turns: list[Memory] = []
    by_turn: dict[tuple[str, int], Memory] = {}
    for session in raw["sessions"]:
        for number, (speaker, said) in enumerate(session["turns"], 1):
            turn = Memory(
                f"{session['id']}/{number}", str(session["id"]), f"{number} {speaker}", str(said)
            )
            turns.append(turn)
            by_turn[(str(session["id"]), number)] = turn
    _check_records(turns)
    questions = []
    for item in raw["questions"]:
        text = str(item["question"])
        try:
            answers = [by_turn[(str(item["session"]), int(n))] for n in item["turns"]]
        except KeyError as exc:
            raise ValueError(f"question {text!r}: no turn {exc}") from None
        copied = next(filter(None, (shared_phrase(text, t.text) for t in answers)), None)
        if copied:
            raise ValueError(f"question {text!r} repeats its turn's words: {copied!r}")
        lang = language(text)
        ids = frozenset(t.id for t in answers)
        questions.append(Prompt(text, lang, ids, answers[0].id, cross=lang != answers[0].lang))
    return Conversation(turns, questions)


def chitchat_dataset() -> Path | None:
    """The installed ``chitchat-dataset`` package's ``dataset.json``, or None."""
    spec = importlib.util.find_spec("chitchat_dataset")
    if spec is None or spec.origin is None:
        return None
    found = Path(spec.origin).parent / "dataset.json"
    return found if found.is_file() else None


def load_chitchat(
    path: Path = DATA / "chitchat.yaml", dataset: Path | None = None
) -> Conversation | None:
    """The public dialogue (one record per turn: a sender's messages in a row, joined)
    with the hand-written questions about it; None when the package is not installed."""
    dataset = dataset or chitchat_dataset()
    if dataset is None:
        return None
    raw = _yaml(path)
    chats = json.loads(dataset.read_text(encoding="utf-8"))
    by_prefix = {key[:8]: key for key in chats}
    asked = [by_prefix[str(q["conversation"])] for q in raw["questions"]]
    chosen: list[str] = list(dict.fromkeys(asked))
    size = sum(len(chats[key]["messages"]) for key in chosen)
    for key in sorted(chats):
        if size >= int(raw["haystack"]):
            break
        if key not in chosen:
            chosen.append(key)
            size += len(chats[key]["messages"])
    turns: dict[tuple[str, int], Memory] = {}
    for key in chosen:
        for number, messages in enumerate(chats[key]["messages"], 1):
            said = " ".join(" ".join(str(m["text"]) for m in messages).split())
            if said:
                turns[(key[:8], number)] = Memory(
                    f"{key[:8]}/{number}", f"chitchat-{key[:8]}", str(number), said
                )
    questions = []
    for item in raw["questions"]:
        text = str(item["question"])
        turn = turns.get((str(item["conversation"]), int(item["turn"])))
        if turn is None:
            raise ValueError(f"question {text!r}: no such turn")
        copied = shared_phrase(text, turn.text)
        if copied:
            raise ValueError(f"question {text!r} repeats its turn's words: {copied!r}")
        questions.append(Prompt(text, language(text), frozenset({turn.id}), turn.id))
    return Conversation(list(turns.values()), questions)


def constructions(
    everyday: Everyday, conversation: Conversation, chitchat: Conversation | None = None
) -> dict[tuple[str, str], list[Prompt]]:
    """The prompts per (construction, language of the prompt), in the files' order:
    ``everyday`` (asked in the memory's language), ``everyday-cross`` (in the other),
    ``conversation`` (written by hand) and ``chitchat`` (public dialogue), when given."""
    out: dict[tuple[str, str], list[Prompt]] = defaultdict(list)
    for prompt in everyday.prompts:
        construction = "everyday-cross" if prompt.cross else "everyday"
        out[(construction, prompt.lang)].append(prompt)
    for question in conversation.questions:
        out[("conversation", question.lang)].append(question)
    for question in chitchat.questions if chitchat else []:
        out[("chitchat", question.lang)].append(question)
    return dict(sorted(out.items()))


def halves(items: list[Any]) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """Items alternate between the dev half (choose on it) and the test half (report it)."""
    return (("dev", items[0::2]), ("test", items[1::2]))


def memory_files(records: list[Memory], folder: Path) -> Path:
    """``folder/memory/<file>.md``, one ``## title`` section per record, in order: what
    ``xbrain entry import folder`` reads. Returns ``folder``."""
    sections: dict[str, list[str]] = defaultdict(list)
    for record in records:
        sections[record.file].append(f"## {record.title}\n\n{record.text}\n")
    (folder / "memory").mkdir(parents=True, exist_ok=True)
    for file, parts in sections.items():
        (folder / "memory" / f"{file}.md").write_text("\n".join(parts), encoding="utf-8")
    return folder
