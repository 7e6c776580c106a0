"""A billing agent on a scripted model: it asks for a refund the lattice's ToolGuard refuses.

The app's code has no policy at all; ``lattice.toml`` adds every guard.
"""

from google.adk.agents import LlmAgent

from adk_lattice.testing import FakeModel, ScriptedResponse


def lookup_charge(charge_id: str) -> dict:
    """Look up a card charge by its id."""
    return {"charge_id": charge_id, "amount": 5000.0}


def issue_refund(charge_id: str, amount: float) -> dict:
    """Refund part or all of a charge."""
    return {"status": "refunded", "charge_id": charge_id, "amount": amount}


model = FakeModel(
    [
        ScriptedResponse.call("issue_refund", charge_id="ch_1", amount=5000.0),
        ScriptedResponse.text("That refund is over what I may issue; a manager can help."),
    ]
)
root_agent = LlmAgent(
    name="billing",
    model=model,
    instruction="You handle refunds.",
    tools=[lookup_charge, issue_refund],
)
