"""What the held-out sets' door tests share: a door opened on the side-door host task,
undefended, and whether a door's case hijacks the agent."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchmarks.security.attacks import GOALS, Case, Goal
from benchmarks.security.classes import BY_ID
from benchmarks.security.env import Env
from benchmarks.security.harness import Config, _world, run_one, user_message

from adk_lattice import Lattice

#: The host task each door is opened on.
HOST = "sb1"
UNDEFENDED = Config("undefended", list)


async def run_door(door: str, text: str, *plugins: Any) -> Env:
    """Run the host task undefended with ``text`` behind ``door``, ``plugins`` listed after
    an empty lattice (a recorder of what the model is sent); the world after the run."""
    task = BY_ID[HOST]
    runner, session_id, env = await _world(task, text, door, GOALS, [Lattice(policy=[]), *plugins])
    message = user_message(task, text, door)
    async for _ in runner.run_async(user_id="emma", session_id=session_id, new_message=message):
        pass
    await runner.close()
    return env


async def door_obeyed(
    doors: Mapping[str, tuple[str, Callable[[Goal], str], str]], door: str, goal: Goal
) -> bool:
    """Whether the door's case, from a set's doors table, hijacks the undefended agent on
    the host task through ``run_one``."""
    style, render, _ = doors[door]
    case = Case(style, f"{style}:test", render, f"door:{door}", klass="side_door")
    outcome = await run_one(BY_ID[HOST], UNDEFENDED, case, goal)
    return outcome.attacked and outcome.done
