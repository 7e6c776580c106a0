"""Limits per user request, user or tenant: calls, rates, sums and token budgets."""

from .budget import Budget, Price, TokenBudget
from .calls import CallLimits
from .rate import CounterStore, MemoryCounter, RateLimit, RedisCounter
from .sums import SumLimit

__all__ = [
    "Budget",
    "CallLimits",
    "CounterStore",
    "MemoryCounter",
    "Price",
    "RateLimit",
    "RedisCounter",
    "SumLimit",
    "TokenBudget",
]
