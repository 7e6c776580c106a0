"""SemanticResponseCache on real Runners: paraphrase hits, refused near misses, scope."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_lattice.cache import MemoryStore, SemanticResponseCache
from adk_lattice.testing import ScriptedResponse
from tests.cache.rig import Rig, text_of

S = ScriptedResponse


def _cache(**kwargs: object) -> SemanticResponseCache:
    return SemanticResponseCache(MemoryStore(), **kwargs)  # type: ignore[arg-type]


def _marker(events: list) -> dict:  # type: ignore[type-arg]
    meta = events[-1].custom_metadata or {}
    return dict(meta.get("adk_lattice", {}).get("cache", {}))


async def test_a_paraphrase_is_served_the_stored_answer() -> None:
    """A reworded question is answered from the cache without calling the model."""
    rig = Rig([S.text("Paris."), S.text("never used")], cache=[_cache()])
    await rig.ask("What is the capital of France?")
    second = await rig.ask("Could you tell me the capital of France, please?")
    assert (text_of(second), rig.model.calls) == ("Paris.", 1)
    await rig.close()


async def test_a_semantic_hit_is_marked_with_its_similarity() -> None:
    """The served response says match semantic and how similar the questions were."""
    cache = _cache()
    rig = Rig([S.text("Paris.")], cache=[cache])
    await rig.ask("What is the capital of France?")
    marker = _marker(await rig.ask("what is the capital of france"))
    assert (marker["result"], marker["match"]) == ("hit", "semantic")
    assert cache.threshold <= marker["similarity"] <= 1.0
    assert cache.stats["semantic_hits"] == 1
    await rig.close()


async def test_an_exact_repeat_is_marked_exact() -> None:
    """The same question again is an exact hit, marked so."""
    rig = Rig([S.text("Paris.")], cache=[_cache()])
    await rig.ask("What is the capital of France?")
    marker = _marker(await rig.ask("What is the capital of France?"))
    assert (marker["match"], "similarity" in marker) == ("exact", False)
    await rig.close()


@pytest.mark.parametrize(
    ("stored", "asked", "guard"),
    [
        ("Is the Acme store open on Sunday?", "Is the Acme store not open on Sunday?", "negation"),
        ("Is the Acme store open on Sunday?", "Is the Acme store closed on Sunday?", "negation"),
        ("Send 50 dollars to Alice.", "Send 500 dollars to Alice.", "number"),
        (
            "Please email the March invoice for the design work to ann@example.com.",
            "Please email the March invoice for the design work to bob@example.com.",
            "entity",
        ),
        (
            "Which river is longer, the Nile or the Amazon?",
            "Which river is shorter, the Nile or the Amazon?",
            "comparison",
        ),
        ("When did the Acme store open?", "When will the Acme store open?", "frame"),
        ("Find flights from Paris to Rome.", "Find flights from Rome to Paris.", "order"),
        (
            "How do I reset the password of the heater controller in the main office?",
            "How do I reset the password of the printer controller in the main office?",
            "content",
        ),
    ],
)
async def test_a_near_miss_is_refused_and_counted_by_guard(
    stored: str, asked: str, guard: str
) -> None:
    """A similar question another guard tells apart reaches the model; the refusal is counted."""
    cache = _cache()
    rig = Rig([S.text("first"), S.text("second")], cache=[cache])
    await rig.ask(stored)
    second = await rig.ask(asked)
    assert (text_of(second), rig.model.calls) == ("second", 2)
    assert cache.stats[f"refused.{guard}"] == 1
    assert cache.stats["near_refused"] == 1
    await rig.close()


async def test_two_users_never_share_a_semantic_hit() -> None:
    """With the default scope a paraphrase by another user calls the model."""
    rig = Rig([S.text("For alice."), S.text("For bob.")], cache=[_cache()])
    await rig.ask("What is my account balance?", user="alice")
    bob = await rig.ask("what is my account balance", user="bob")
    assert (text_of(bob), rig.model.calls) == ("For bob.", 2)
    await rig.close()


async def test_app_scope_shares_a_paraphrase_across_users() -> None:
    """scope='app' widens the semantic lookup to every user of the app, on purpose."""
    rig = Rig([S.text("Paris.")], cache=[_cache(scope="app")])
    await rig.ask("What is the capital of France?", user="alice")
    bob = await rig.ask("what is the capital of france", user="bob")
    assert (text_of(bob), rig.model.calls) == ("Paris.", 1)
    await rig.close()


async def test_a_different_instruction_is_another_space() -> None:
    """A paraphrase under another system instruction is not served (the context differs)."""
    cache = _cache()
    first = Rig([S.text("Paris.")], cache=[cache])
    await first.ask("What is the capital of France?")
    other = Rig([S.text("Paris, the capital.")], cache=[cache])
    other.runner.agent.instruction = "Answer in full sentences."  # type: ignore[attr-defined]
    events = await other.ask("what is the capital of france")
    assert (text_of(events), other.model.calls) == ("Paris, the capital.", 1)
    await first.close()
    await other.close()


async def test_a_streamed_semantic_hit_is_one_final_event() -> None:
    """In SSE mode a paraphrase hit yields one non-partial event with the stored answer."""
    rig = Rig([S.text("Paris is the capital.")], cache=[_cache()])
    await rig.ask("What is the capital of France?", sse=True)
    events = await rig.ask("what is the capital of france", sse=True)
    answers = [e for e in events if e.content and e.content.parts]
    assert [(e.partial, text_of([e])) for e in answers] == [(None, "Paris is the capital.")]
    assert rig.model.calls == 1
    await rig.close()


async def test_a_function_call_answer_is_never_stored() -> None:
    """A model turn that calls a tool stores no vector; only the final text answer does."""

    def lookup(city: str) -> dict[str, str]:
        """Look up a city."""
        return {"city": city}

    cache = _cache()
    rig = Rig(
        [S.call("lookup", city="Paris"), S.text("It is Paris.")], cache=[cache], tools=[lookup]
    )
    await rig.ask("What is the capital of France?")
    assert (cache.stats["not_stored.function_call"], cache.stats["vectors_stored"]) == (1, 0)
    await rig.close()


async def test_a_failing_backend_is_a_miss_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An embedder that raises at run time never fails the run: the model answers."""
    calls = []

    def flaky(text: str) -> list[float]:
        calls.append(text)
        if len(calls) > 1:  # the construction probe works, the run-time calls do not
            raise RuntimeError("embedding service down")
        return [1.0, 0.0]

    cache = _cache(embedder=flaky)
    rig = Rig([S.text("one"), S.text("two")], cache=[cache])
    await rig.ask("What is the capital of France?")
    events = await rig.ask("what is the capital of france")
    assert (text_of(events), cache.stats["backend_errors"]) == ("two", 2)
    assert "could not embed a question (RuntimeError)" in caplog.text
    assert "embedding service down" not in caplog.text
    await rig.close()


async def test_an_async_backend_of_the_wrong_dimension_is_a_miss() -> None:
    """A vector of another dimension than dim= at run time is a miss, counted."""

    async def short(text: str) -> list[float]:
        return [1.0, 0.0, 0.0]

    cache = _cache(embedder=short, dim=4)
    rig = Rig([S.text("one")], cache=[cache])
    events = await rig.ask("What is the capital of France?")
    assert (text_of(events), cache.stats["backend_errors"]) == ("one", 1)
    await rig.close()


async def test_any_callable_is_a_backend() -> None:
    """A plain function returning vectors serves paraphrases as the default model does."""

    def by_first_word(text: str) -> list[float]:
        return [1.0, float(len(text.split()[0]))]

    cache = _cache(embedder=by_first_word, threshold=0.99)
    rig = Rig([S.text("Paris.")], cache=[cache])
    await rig.ask("What is the capital of France?")
    events = await rig.ask("What's the capital of France?")
    assert (text_of(events), rig.model.calls, cache.dim) == ("Paris.", 1, 2)
    await rig.close()


async def test_a_bypassed_lookup_still_stores_the_question() -> None:
    """With the no_cache state key set the model answers, and the answer serves paraphrases."""
    rig = Rig([S.text("Paris.")], cache=[_cache()])
    await rig.ask("What is the capital of France?", state={"temp:adk_lattice.no_cache": True})
    events = await rig.ask("what is the capital of france")
    assert (text_of(events), rig.model.calls) == ("Paris.", 1)
    await rig.close()


async def test_a_question_whose_answer_is_gone_is_forgotten() -> None:
    """When the stored answer was evicted, a paraphrase misses and the stale vector goes."""
    store = MemoryStore()
    cache = SemanticResponseCache(store)
    rig = Rig([S.text("Paris."), S.text("Paris again.")], cache=[cache])
    await rig.ask("What is the capital of France?")
    await store.delete_prefix("resp:")
    events = await rig.ask("what is the capital of france")
    assert (text_of(events), cache.stats["stale"]) == ("Paris again.", 1)
    await rig.close()


async def test_earlier_turns_are_part_of_the_space() -> None:
    """A paraphrase after other earlier turns is another space: the model is called."""
    rig = Rig([S.text("Hello."), S.text("Paris."), S.text("Paris, again.")], cache=[_cache()])
    session = await rig.runner.session_service.create_session(app_name="billing", user_id="u1")

    async def say(text: str) -> str:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = [
            e
            async for e in rig.runner.run_async(
                user_id="u1", session_id=session.id, new_message=message
            )
        ]
        return text_of(events)

    await say("Hi there")
    assert await say("What is the capital of France?") == "Paris."
    fresh = await rig.ask("what is the capital of france")
    assert (text_of(fresh), rig.model.calls) == ("Paris, again.", 3)
    await rig.close()
