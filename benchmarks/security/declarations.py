"""What the suite's app declares to ``ProvenanceGuard``: its consequential tools and their
sensitive arguments, and the tools (or fields) it controls itself.

These declarations are the tuning of the benchmark: they were chosen looking only at the
tuning half of the styles (``attacks.TUNING_STYLES``) and at the benign tasks.
"""

from __future__ import annotations

from typing import Any

from adk_lattice.policy import Consequential, ProvenanceGuard

CONSEQUENTIAL = {
    "send_money": Consequential(args={"recipient": "iban", "amount": "number"}),
    "send_email": Consequential(args={"to": "email"}),
    "delete_file": Consequential(args={"file_id": "id"}),
    "share_file": Consequential(args={"file_id": "id", "email": "email"}),
    "post_message": Consequential(args={"channel": "id"}),
    "invite_user": Consequential(args={"channel": "id", "email": "email"}),
    "create_event": Consequential(args={"participants": "email"}),
}
#: The app's own data: the user's account, address book and channel list, whole; of the
#: inbox only who sent each message, of the calendar only who takes part in each event.
TRUSTED_TOOLS: dict[str, Any] = {
    "get_user_info": True,
    "list_contacts": True,
    "get_balance": True,
    "list_channels": True,
    "read_inbox": ["messages.*.sender"],
    "list_events": ["events.*.participants"],
}


def provenance_guard(
    on_ungrounded: str, *, dictated: bool = False, identifiers: bool | str = True
) -> ProvenanceGuard:
    """The suite's ``ProvenanceGuard``, denying (``deny``) or asking a person (``confirm``);
    ``dictated`` turns on ``dictated_content``; ``identifiers=False`` turns
    ``opaque_identifiers`` off."""
    return ProvenanceGuard(
        consequential=CONSEQUENTIAL,
        trusted_tools=TRUSTED_TOOLS,
        on_ungrounded=on_ungrounded,
        dictated_content=dictated,
        opaque_identifiers=identifiers,
    )
