"""Prompt injection: ``InjectionGuard`` and the detectors it runs.

The detector protocol and the pattern detector, the built-in rules, a local classifier,
a model judge, and the session's memory of what was refused.
"""

from .classifier import ClassifierDetector
from .detectors import CallableDetector, Detector, Finding, RulesDetector
from .guard import InjectionGuard
from .judge import JudgeDetector

__all__ = [
    "CallableDetector",
    "ClassifierDetector",
    "Detector",
    "Finding",
    "InjectionGuard",
    "JudgeDetector",
    "RulesDetector",
]
