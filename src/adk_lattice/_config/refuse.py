"""What a lattice does when its config file cannot be used: refuse every run, raise, or run open.

A file that does not build must never leave an app running unguarded. ADK's servers build
``--extra_plugins adk_lattice.Lattice`` inside a ``try`` that logs one line and serves the
app without the plugin, so raising there is the same as failing open. By default the
lattice therefore loads anyway and refuses every run, logging every finding (file, table,
key) when it is built and again at each refused run. Failing open, or raising, is chosen
explicitly: ``on_config_error=`` in code, ``ADK_LATTICE_ON_CONFIG_ERROR`` for a server.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Protocol, get_args

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .read import ConfigError, config_from_env, read_config

if TYPE_CHECKING:
    from .read import LatticeConfig

#: What to do with a config file that has problems.
OnConfigError = Literal["refuse", "raise", "open"]
#: The environment variable choosing :data:`OnConfigError` when ``on_config_error`` is unset.
ON_CONFIG_ERROR_ENV: Final = "ADK_LATTICE_ON_CONFIG_ERROR"
_MODES: Final = get_args(OnConfigError)
#: The ``code`` of a refusal (a tool denial's ``code``, a model reply's metadata reason).
CODE: Final = "config_error"

logger = logging.getLogger("adk_lattice")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A lattice whose config file did not build: every run is refused with this reply.

    Attributes:
        path: the config file.
        findings: every problem found, each naming the file, the table and the key.
    """

    path: str
    findings: tuple[str, ...]
    code: ClassVar[str] = CODE

    def reply(self) -> types.Content:
        """The model-authored reply a refused run ends with (names no table or value)."""
        text = (
            "This request was refused: the app's safety configuration "
            f"({Path(self.path).name}) has {len(self.findings)} problem(s), so nothing runs "
            "until it is fixed. The server log lists each one."
        )
        return types.Content(role="model", parts=[types.Part(text=text)])

    def log(self, when: str) -> None:
        """Log every finding at ERROR level, saying what happens to runs."""
        logger.error(
            "adk_lattice: %s: the config file %s does not build, so every run is refused "
            "(set %s=open to run without it). Fix: python -m adk_lattice config check %s\n  %s",
            when,
            self.path,
            ON_CONFIG_ERROR_ENV,
            self.path,
            "\n  ".join(self.findings),
        )


def _mode(on_config_error: str | None) -> OnConfigError:
    if on_config_error is not None:
        if on_config_error not in _MODES:
            raise ValueError(
                f"on_config_error must be one of {', '.join(_MODES)}, got {on_config_error!r}"
            )
        return on_config_error  # type: ignore[return-value]
    chosen = os.environ.get(ON_CONFIG_ERROR_ENV, "").strip()
    if chosen in _MODES:
        return chosen  # type: ignore[return-value]
    if chosen:
        logger.error(
            "adk_lattice: %s=%r is not one of %s; refusing runs on a config error",
            ON_CONFIG_ERROR_ENV,
            chosen,
            ", ".join(_MODES),
        )
    return "refuse"


def load_config(
    config: str | os.PathLike[str] | None, *, from_env: bool, on_config_error: str | None
) -> tuple[LatticeConfig | None, Refusal | None]:
    """Read the config file given in code, or (``from_env``) the one the environment names.

    Args:
        config: the file passed as ``config=``, or None.
        from_env: read ``ADK_LATTICE_CONFIG`` when ``config`` is None.
        on_config_error: ``refuse``, ``raise`` or ``open``; None reads
            ``ADK_LATTICE_ON_CONFIG_ERROR`` (default ``refuse``).

    Returns:
        The built config (None when there is none, or when a broken one runs open) and the
        refusal of a broken one (None unless it refuses).

    Raises:
        ConfigError: when the file has problems and the mode is ``raise``.
        ValueError: on an unknown ``on_config_error``.
    """
    mode = _mode(on_config_error)
    try:
        if config is not None:
            return read_config(config), None
        return (config_from_env() if from_env else None), None
    except ConfigError as exc:
        if mode == "raise":
            raise
        path = str(config) if config is not None else os.environ.get("ADK_LATTICE_CONFIG", "")
        refusal = Refusal(path.strip(), tuple(exc.findings))
        if mode == "open":
            logger.error(
                "adk_lattice: the config file %s does not build; running WITHOUT its "
                "handlers because on_config_error is 'open':\n  %s",
                refusal.path,
                "\n  ".join(refusal.findings),
            )
            return None, None
        refusal.log("at construction")
        return None, refusal


class Refuses(Protocol):
    """What refuses every run: a config file that did not build, a name that names nothing."""

    @property
    def code(self) -> str:
        """The ``code`` of the refusal (a tool denial's ``code``, a model reply's reason)."""

    def reply(self) -> types.Content:
        """The model-authored reply a refused run ends with."""

    def log(self, when: str) -> None:
        """Log the refusal at ERROR level."""


def refused(refusal: Refuses | None, hook: str) -> Any:
    """What a refusing lattice returns on ``hook`` (logged loudly), or None when it built.

    ``before_run`` ends the run with the reply; ``before_model`` and ``before_tool`` refuse
    too, for a run that reached them another way (a nested runner).
    """
    if refusal is None:
        return None
    refusal.log(f"{hook} refused")
    reply = refusal.reply()
    if hook == "before_model":
        meta = {"adk_lattice": {"reason": refusal.code}}
        return LlmResponse(content=reply, custom_metadata=meta)
    if hook == "before_tool":
        return {"status": "denied", "reason": reply.parts[0].text, "code": refusal.code}  # type: ignore[index]
    return reply
