"""Fixtures for these tests: a real redis-server (see ``tests/_redis.py``)."""

from tests._redis import redis_factory, redis_server

__all__ = ["redis_factory", "redis_server"]
