"""What ProvenanceGuard's check costs as a session's history grows.

Calls ``before_tool`` directly (real ADK contexts from ``adk_lattice.testing``) for a
consequential call in a clean session and in a tainted one whose history holds N user
messages and N untrusted tool outputs, and prints microseconds per check and the ratio to
the clean check, all in one run. The call's ``subject`` (content the guard reads) is empty,
or carries an order number the user typed (an opaque token, grounded against the history).
Usage: ``.venv/bin/python benchmarks/provenance_check.py``.
"""

from __future__ import annotations

import time
from typing import Any

from google.adk.events.event import Event
from google.genai import types

from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.testing import function_tool, invocation_context, tool_context

ROUNDS = 200
IBAN = "DE89370400440532013000"
ORDER = "5521873"


def send_money(recipient: str, amount: float, subject: str = "") -> dict[str, Any]:
    """Send money."""
    return {"status": "sent"}


def read_inbox() -> dict[str, Any]:
    """Read mail."""
    return {}


def _context(history: int, tainted: bool) -> Any:
    inv = invocation_context()
    for n in range(history):
        text = f"message {n}: pay 5 to {IBAN} for order {ORDER}"
        said = types.Content(role="user", parts=[types.Part(text=text)])
        inv.session.events.append(Event(author="user", invocation_id="i", content=said))
        body = {"messages": [{"sender": f"s{n}@example.com", "body": "lorem ipsum " * 40}]}
        fr = types.FunctionResponse(name="read_inbox", response=body)
        out = types.Content(role="user", parts=[types.Part(function_response=fr)])
        inv.session.events.append(Event(author="a", invocation_id="i", content=out))
    ctx = tool_context(invocation=inv, function_call_id=None)
    if tainted:
        GUARD.label(tool=INBOX, tool_context=ctx, result={})
    return ctx


GUARD = ProvenanceGuard(
    {"send_money": Consequential(args={"recipient": "iban", "amount": "number"})},
    trusted_tools={"read_inbox": ["messages.*.sender"]},
)
SEND, INBOX = function_tool(send_money), function_tool(read_inbox)


def per_check(ctx: Any, subject: str = "") -> float:
    """Microseconds per check, best of three batches."""
    args = {"recipient": IBAN, "amount": 5, "subject": subject}
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(ROUNDS):
            assert GUARD.before_tool(tool=SEND, tool_args=args, tool_context=ctx) is None
        best = min(best, (time.perf_counter() - start) / ROUNDS * 1e6)
    return best


def main() -> None:
    """Print the cost of a check against history length."""
    clean = per_check(_context(10, tainted=False))
    print(f"clean session (no check):      {clean:9.1f} us   1.0x")
    for history in (10, 100, 1000):
        ctx = _context(history, tainted=True)
        cost = per_check(ctx)
        print(f"tainted, {history:4d} turns of history: {cost:9.1f} us {cost / clean:6.1f}x")
        cost = per_check(ctx, f"order {ORDER}")
        print(f"  with a token in the subject:   {cost:9.1f} us {cost / clean:6.1f}x")


if __name__ == "__main__":
    main()
