"""The caching examples run offline and show what their READMEs promise."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests._redis import redis_binary

ROOT = Path(__file__).resolve().parents[2]


async def _run(example: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("REDIS_URL", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "examples" / example / "main.py"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def test_caching_example_shows_hits_isolation_and_restart() -> None:
    """The memory/SQLite example serves hits, keeps users apart and survives a restart."""
    out = await _run("caching")
    assert "<- cache 'response_cache' (memory)" in out
    assert "(bob)." in out
    assert "after restart:  'Invoices are emailed monthly.'        <- cache" in out
    assert "invalidated=1" in out


@pytest.mark.redis
async def test_shared_cache_example_second_replica_hits() -> None:
    """Replica B answers from Redis; turns go on while Redis is down; the cache resumes."""
    redis_binary()
    out = await _run("shared_cache")
    assert "replica B: 'Reset it under Settings.'         <- cache via redis@B" in out
    assert "model calls: A=1, B=0" in out
    assert "replica B: 'Mondays.'                         <- cache via redis@B" in out
