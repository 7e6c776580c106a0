"""Provenance: ``ProvenanceGuard`` gates effects on where their arguments came from.

Declarations (consequential and trusted tools), the taint record and trusted text, the
kinds of sensitive values, destinations read as they are written (escaped, defanged), and
spotlighting of untrusted output.
"""

from .config import Consequential
from .guard import ProvenanceGuard

__all__ = ["Consequential", "ProvenanceGuard"]
