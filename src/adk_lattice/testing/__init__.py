"""Test helpers for apps built on adk-lattice: a scripted model, fake contexts, fakes."""

from ._model import FakeModel, FunctionCall, ScriptedResponse

__all__ = ["FakeModel", "FunctionCall", "ScriptedResponse"]
