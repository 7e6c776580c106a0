"""The forwarded-references corpus (``benchmarks/forwarded_ids.py``) measures refusals of
benign forwards: each forward goes out without a guard, and the guard's answer per shape
is the one the docs report."""

from __future__ import annotations

import pytest
from benchmarks.forwarded_ids import REFERENCES, _guard, forwarded


@pytest.mark.parametrize(("shape", "reference"), REFERENCES)
async def test_each_forward_goes_out_without_a_guard(shape: str, reference: str) -> None:
    """Undefended, the agent mails each reference on: a refusal is the guard's."""
    assert await forwarded(shape, reference, None)


async def test_a_long_document_id_is_refused_as_an_opaque_identifier() -> None:
    """With ``opaque_identifiers="long"``, a 44-character document id from the mail is
    refused, and with the option off it goes out."""
    shape, ref = next(r for r in REFERENCES if r[0] == "document id")
    assert not await forwarded(shape, ref, _guard("long"))
    assert await forwarded(shape, ref, _guard(False))


async def test_a_tracking_number_shorter_than_26_goes_out_in_long_mode() -> None:
    """With ``opaque_identifiers="long"``, a parcel tracking number (18 characters) is no
    long identifier: it goes out."""
    shape, ref = next(r for r in REFERENCES if r[0] == "UPS tracking number")
    assert await forwarded(shape, ref, _guard("long"))


async def test_a_tracking_number_is_refused_as_shipped() -> None:
    """With the guard as shipped, every opaque token counts: the tracking number only the
    mail holds is refused."""
    shape, ref = next(r for r in REFERENCES if r[0] == "UPS tracking number")
    assert not await forwarded(shape, ref, _guard(True))
