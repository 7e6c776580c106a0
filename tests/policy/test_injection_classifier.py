"""ClassifierDetector: a local sequence classifier, windowed, thresholded, off the event loop.

The model is a one-layer BERT built here from a config, with weights set by hand so that it
flags exactly the texts containing the token ``pwned``: no download, deterministic.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
# Idle OpenMP workers spin on the CPU; on a small machine that starves the tests after these.
torch.set_num_threads(1)

from google.adk.agents.llm_agent import LlmAgent  # noqa: E402

from adk_lattice import Lattice  # noqa: E402
from adk_lattice.policy import ClassifierDetector, Detector, InjectionGuard  # noqa: E402
from adk_lattice.testing import FakeModel, ScriptedResponse  # noqa: E402

from .conftest import run_app  # noqa: E402

WORDS = ["hello", "world", "invoice", "please", "summarize", "the", "page", "pwned"]
HIDDEN = 32


def _keyword_model(vocab: list[str]) -> Any:
    """A BERT whose CLS output is the mean of the tokens: it scores ~1 iff 'pwned' occurs."""
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=32,
        id2label={0: "SAFE", 1: "INJECTION"},
        label2id={"SAFE": 0, "INJECTION": 1},
    )
    model = transformers.BertForSequenceClassification(config)
    eye = torch.eye(HIDDEN)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        for name, p in model.named_parameters():
            if name.endswith("LayerNorm.weight"):
                p.fill_(1.0)
        bert = model.bert
        bert.embeddings.word_embeddings.weight[vocab.index("pwned"), 0] = 10.0
        layer = bert.encoder.layer[0]
        # Zero queries and keys: uniform attention, so CLS receives the mean of all tokens.
        layer.attention.self.value.weight.copy_(eye)
        layer.attention.output.dense.weight.copy_(eye)
        bert.pooler.dense.weight.copy_(eye)
        model.classifier.weight[1, 0] = 8.0
        model.classifier.bias.copy_(torch.tensor([0.0, -4.0]))
    return model.eval()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny classifier and its tokenizer, made offline."""
    path = tmp_path_factory.mktemp("classifier")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = transformers.BertTokenizer(vocab={w: i for i, w in enumerate(vocab)})
    tokenizer.model_max_length = 32
    tokenizer.save_pretrained(path)
    _keyword_model(vocab).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def detector(model_dir: Path) -> ClassifierDetector:
    """The detector loaded from the saved directory."""
    return ClassifierDetector(model_dir, overlap=4)


async def test_a_flagged_text_is_a_finding(detector: ClassifierDetector) -> None:
    """A text the model scores above the threshold is a 'classifier' finding."""
    found = await detector.detect("hello pwned world", "tool:fetch")
    assert found is not None
    assert (found.family, found.source) == ("classifier", "tool:fetch")


async def test_a_benign_text_passes(detector: ClassifierDetector) -> None:
    """A text the model scores below the threshold passes."""
    assert await detector.detect("please summarize the invoice") is None


async def test_a_payload_past_the_first_window_is_found(detector: ClassifierDetector) -> None:
    """A long text is scored window by window: a payload in the last window still flags."""
    text = "hello world " * 100 + "pwned"
    assert len(detector.windows(text)) > 1
    assert await detector.detect(text) is not None
    assert await detector.detect("hello world " * 100) is None


def test_windows_overlap_and_cover_every_token(detector: ClassifierDetector) -> None:
    """Consecutive windows share `overlap` tokens and together hold every token."""
    ids = detector._tokenizer("hello world " * 40, add_special_tokens=False)["input_ids"]
    windows = detector.windows("hello world " * 40)
    assert all(len(w) <= detector.window - 2 for w in windows)
    size = detector.overlap
    assert all(w[-size:] == n[:size] for w, n in itertools.pairwise(windows))
    rebuilt = windows[0] + [t for w in windows[1:] for t in w[detector.overlap :]]
    assert rebuilt == ids


def test_the_threshold_decides(model_dir: Path) -> None:
    """The same score flags or passes depending on the threshold."""
    score = ClassifierDetector(model_dir).score("please summarize the page")
    assert 0.0 < score < 0.5
    assert ClassifierDetector(model_dir, threshold=score / 2).score("page") >= score / 2


def test_an_unknown_label_fails_at_construction_with_the_models_labels(model_dir: Path) -> None:
    """Naming a label the model does not have fails early and lists the model's labels."""
    with pytest.raises(ValueError, match=r"\['INJECTION', 'SAFE'\]"):
        ClassifierDetector(model_dir, labels=["MALICIOUS"])


def test_it_is_a_detector(detector: ClassifierDetector) -> None:
    """ClassifierDetector meets the Detector protocol."""
    assert isinstance(detector, Detector)


async def test_a_runner_refuses_what_the_classifier_flags(detector: ClassifierDetector) -> None:
    """Through a Runner, the guard with only the classifier refuses a flagged user turn."""
    model = FakeModel([ScriptedResponse.text("sure")])
    guard = InjectionGuard(detectors=[detector], builtin=False)
    agent = LlmAgent(name="assistant", model=model)
    run = await run_app(agent, [Lattice(policy=[guard])], "hello pwned")
    assert model.calls == 0
    assert run.texts == [guard.message]
