"""The everyday benchmark's hand-written data (bench/data/everyday.yaml, conversation.yaml)
and its loader: valid, big enough, halves split, no prompt copying its memory's words,
and the memory files it writes import as the entries the bench expects. No model."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bench import bench_module
from tests.conftest import Result

data = bench_module("everyday_data")

Run = Callable[..., Result]


def test_the_data_loads_and_is_as_big_as_issue_43_asks() -> None:
    everyday = data.load_everyday()
    conversation = data.load_conversation()
    by_lang = Counter(m.lang for m in everyday.memories)
    assert by_lang["en"] >= 40 and by_lang["zh"] >= 40
    sets = data.constructions(everyday, conversation)
    for lang in data.LANGUAGES:
        assert len(sets[("everyday", lang)]) >= 40
        assert sets[("everyday-cross", lang)], "some prompts ask across languages"
        assert len(sets[("conversation", lang)]) >= 10
        assert len(everyday.chatter[lang]) >= 20
        assert all(data.language(p) == lang for p in everyday.chatter[lang])
    assert everyday.distractors
    prompted = {p.target for p in everyday.prompts}
    assert not prompted & {d.id for d in everyday.distractors}
    assert {m.id for m in everyday.memories} <= prompted, "every memory is asked for"


def test_halves_alternate_and_neither_is_empty() -> None:
    sets = data.constructions(data.load_everyday(), data.load_conversation())
    for prompts in sets.values():
        (dev_name, dev), (test_name, test) = data.halves(prompts)
        assert (dev_name, test_name) == ("dev", "test")
        assert dev and test and 0 <= len(dev) - len(test) <= 1
        assert sorted(map(id, dev + test)) == sorted(map(id, prompts))


def test_no_prompt_repeats_its_memorys_words() -> None:
    everyday = data.load_everyday()
    by_id = {m.id: m for m in everyday.memories}
    for prompt in everyday.prompts:
        for answer in prompt.answers:
            memory = by_id[answer]
            assert data.shared_phrase(prompt.text, f"{memory.title} {memory.text}") is None
            assert prompt.text.lower() not in memory.text.lower()
    conversation = data.load_conversation()
    turns = {t.id: t for t in conversation.turns}
    for question in conversation.questions:
        for answer in question.answers:
            assert data.shared_phrase(question.text, turns[answer].text) is None


def test_the_loader_refuses_a_prompt_that_copies_its_memory(tmp_path: Path) -> None:
    assert data.shared_phrase("how do I promote the replica now", "Promote the replica.") == (
        "promote the replica"
    )
    assert data.shared_phrase("主库宕机了怎么办", "主库宕机时先切换") == "主库宕机"
    assert data.shared_phrase("the main box is down", "Promote the replica.") is None
    copied = tmp_path / "everyday.yaml"
    copied.write_text(
        "memories:\n"
        "  - {id: a, file: f, title: T, text: 'Promote the replica with patronictl.'}\n"
        "distractors: []\n"
        "prompts:\n"
        "  - {to: a, prompt: 'should I promote the replica with patronictl?'}\n"
        "chatter: {en: [], zh: []}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="repeats its memory's words"):
        data.load_everyday(copied)


def test_the_memory_files_import_as_the_entries_the_bench_names(xb: Run, tmp_path: Path) -> None:
    everyday = data.load_everyday()
    records = everyday.memories + everyday.distractors
    folder = data.memory_files(records, tmp_path / "import")
    imported = xb("entry", "import", str(folder))
    assert imported.code == 0, imported.stderr
    assert imported.json["added"] == len(records)
    listed = xb("entry", "list", "--kind", "memory")
    assert {e["name"] for e in listed.json["entries"]} == {r.name for r in records}


def test_public_dialogue_turns_are_a_senders_messages_in_a_row(tmp_path: Path) -> None:
    chats = {
        f"{n:08x}-conversation": {
            "messages": [
                [{"text": "hello"}, {"text": f"I moved to  Leeds\nin {2010 + n}"}],
                [{"text": "oh nice, how is the commute?"}],
            ]
        }
        for n in range(5)
    }
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(chats), encoding="utf-8")
    questions = tmp_path / "chitchat.yaml"
    questions.write_text(
        'haystack: 5\nquestions:\n  - {conversation: "00000003", turn: 1, '
        'question: "Which city did someone relocate to?"}\n',
        encoding="utf-8",
    )
    loaded = data.load_chitchat(questions, dataset)
    assert loaded is not None
    # the asked conversation first, then others in id order until the haystack is full
    assert [t.id for t in loaded.turns] == [
        "00000003/1",
        "00000003/2",
        "00000000/1",
        "00000000/2",
        "00000001/1",
        "00000001/2",
    ]
    assert loaded.turns[0].text == "hello I moved to Leeds in 2013"
    assert loaded.turns[0].name == "chitchat-00000003#1"
    (question,) = loaded.questions
    assert question.answers == {"00000003/1"} and question.lang == "en"
    questions.write_text(
        'haystack: 5\nquestions:\n  - {conversation: "00000003", turn: 1, '
        'question: "who said I moved to Leeds?"}\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="repeats its turn's words"):
        data.load_chitchat(questions, dataset)


def test_the_public_dialogue_questions_hold_to_the_rules() -> None:
    pytest.importorskip("chitchat_dataset", reason="make bench installs chitchat-dataset")
    loaded = data.load_chitchat()
    assert loaded is not None and len(loaded.questions) >= 20
    assert 3000 <= len(loaded.turns) < 3500
    (_, dev), (_, test) = data.halves(loaded.questions)
    assert len(dev) == len(test)
