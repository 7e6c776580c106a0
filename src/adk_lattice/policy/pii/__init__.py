"""Personal data and secrets: ``RedactPII`` and what it runs.

The detectors (patterns with their validators), the folded view of text, phone numbers,
the scrubber, the streaming hold-back, the structure walk and the named-entity engines.
"""

from .ner import PresidioEngine
from .redact import RedactPII

__all__ = ["PresidioEngine", "RedactPII"]
