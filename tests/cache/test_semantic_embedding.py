"""The default backend: wordllama's shipped model, loaded offline and once per process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from adk_lattice.cache import WordLlamaEmbedder
from adk_lattice.cache._embedding import embedding_text

ROOT = Path(__file__).resolve().parents[2]

# Any attempt to reach the network fails loudly in the child process.
_NO_NETWORK = textwrap.dedent(
    """
    import socket
    def refuse(*args, **kwargs):
        raise OSError("network access attempted")
    socket.socket.connect = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    from adk_lattice.cache import WordLlamaEmbedder
    vector = WordLlamaEmbedder()("Is the store open on Sunday?")
    print(vector.shape[0], round(float((vector ** 2).sum()), 4))
    """
)


def test_the_model_loads_and_embeds_with_no_network() -> None:
    """In a process where every connection fails, the model loads from its wheel and embeds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        [sys.executable, "-c", _NO_NETWORK],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["256", "1.0"]


def test_the_model_is_loaded_once_per_process() -> None:
    """Two backends share one loaded model."""
    assert WordLlamaEmbedder()._model is WordLlamaEmbedder()._model


def test_a_paraphrase_embeds_closer_than_an_unrelated_question() -> None:
    """The shipped model places a reworded question nearer than another topic."""
    embed = WordLlamaEmbedder()
    base = embed("How do I reset my password?")
    assert float(base @ embed("How can I change my password?")) > float(
        base @ embed("What time does the museum close?")
    )


def test_case_and_spacing_do_not_change_what_is_embedded() -> None:
    """Upper case, odd spaces and curly apostrophes embed as the plain text."""
    assert embedding_text("WHAT\u2019S  the\u200b Capital?") == "what's the capital?"
    embed = WordLlamaEmbedder()
    assert np.allclose(
        embed(embedding_text("WHERE IS PARIS?")), embed(embedding_text("where is paris?"))
    )
