"""Fixtures for the reliability tests: real redis-servers (see ``tests/_redis.py``)."""

from tests._redis import redis_factory, redis_server

__all__ = ["redis_factory", "redis_server"]
