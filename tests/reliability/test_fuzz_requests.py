"""Arbitrary request contents into the ResponseCache key and InjectionGuard."""

from __future__ import annotations

import asyncio
import copy

from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from hypothesis import HealthCheck, given, settings

from adk_lattice.cache import KEY_VERSION, MemoryStore, ResponseCache
from adk_lattice.policy import InjectionGuard
from adk_lattice.testing import callback_context
from tests.reliability._strategies import requests

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CACHE = ResponseCache(MemoryStore())
GUARD = InjectionGuard()
CTX = callback_context()


@FUZZ
@given(request=requests)
def test_response_cache_key_is_stable_for_any_request(request: LlmRequest) -> None:
    """Any request: the key is None (unkeyable) or a prefixed string, the same for a copy."""
    key = CACHE.key(CTX, request)
    assert key is None or key.startswith(f"resp:{KEY_VERSION}:response_cache:")
    assert key == CACHE.key(CTX, copy.deepcopy(request))


@FUZZ
@given(request=requests)
def test_response_cache_lookup_is_a_miss_for_any_request(request: LlmRequest) -> None:
    """Any request: the lookup on an empty store answers None and never raises."""
    ctx = callback_context()
    assert asyncio.run(CACHE.before_model(callback_context=ctx, llm_request=request)) is None


@FUZZ
@given(request=requests)
def test_injection_guard_passes_or_refuses_any_request(request: LlmRequest) -> None:
    """Any request: None, or a refusal LlmResponse naming InjectionGuard."""
    out = asyncio.run(GUARD.before_model(callback_context=callback_context(), llm_request=request))
    assert out is None or (
        isinstance(out, LlmResponse)
        and (out.custom_metadata or {})["adk_lattice"]["denied_by"] == "InjectionGuard"
    )
