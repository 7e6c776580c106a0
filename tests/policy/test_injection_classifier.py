"""ClassifierDetector: a local sequence classifier, windowed, thresholded, off the event loop.

The model is a one-layer BERT built here from a config, with weights set by hand so that it
flags exactly the texts containing the token ``pwned``: no download, deterministic.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path
from types import SimpleNamespace
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


class _Bare(torch.nn.Module):
    """A loaded classifier as a plain module: a forward that takes only the model inputs, and
    a config that states only the labels and, when given, the position limit."""

    def __init__(self, inner: Any, positions: int | None) -> None:
        super().__init__()
        self.inner = inner
        limit = {} if positions is None else {"max_position_embeddings": positions}
        self.config = SimpleNamespace(id2label=inner.config.id2label, **limit)

    def forward(self, input_ids: Any, token_type_ids: Any, attention_mask: Any) -> Any:
        return self.inner(
            input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask
        )


class _PlainTokenizer:
    """A tokenizer that states no length limit and returns no overflow bookkeeping."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, text: str, **options: Any) -> Any:
        enc = self.inner(text, **options)
        enc.pop("overflow_to_sample_mapping", None)
        return enc

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        return int(self.inner.num_special_tokens_to_add(pair=pair))


def _loaded(model_dir: Path, positions: int | None = 32) -> _Bare:
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir)
    return _Bare(model, positions)


def _tokenizer(model_dir: Path, limit: int) -> Any:
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    tokenizer.model_max_length = limit
    return tokenizer


async def test_a_finding_names_the_detector_and_defaults_to_the_user(model_dir: Path) -> None:
    """A finding lists the detector's name (default ``classifier``) and is the user's by default."""
    found = await ClassifierDetector(model_dir).detect("hello pwned")
    assert found is not None
    assert (found.rules, found.source) == (("classifier",), "user")
    named = await ClassifierDetector(model_dir, name="local_bert").detect("pwned")
    assert named is not None
    assert named.rules == ("local_bert",)


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_thresholds_at_either_end_are_accepted(model_dir: Path, threshold: float) -> None:
    """0 (flag everything) and 1 (flag only certainty) are valid thresholds."""
    assert ClassifierDetector(model_dir, threshold=threshold).threshold == threshold


@pytest.mark.parametrize("threshold", [-0.1, 1.5])
def test_a_threshold_outside_0_to_1_fails_at_construction(
    model_dir: Path, threshold: float
) -> None:
    """A threshold below 0 or above 1 is refused, naming the value given."""
    with pytest.raises(ValueError, match=rf"between 0 and 1, got {threshold}"):
        ClassifierDetector(model_dir, threshold=threshold)


async def test_a_text_scoring_exactly_the_threshold_is_flagged(model_dir: Path) -> None:
    """The threshold is inclusive: a score equal to it flags."""
    score = ClassifierDetector(model_dir).score("please summarize the page")
    detector = ClassifierDetector(model_dir, threshold=score)
    assert await detector.detect("please summarize the page") is not None


def test_a_tokenizer_given_beside_a_model_directory_is_used(model_dir: Path) -> None:
    """``tokenizer=`` overrides the model directory's own tokenizer."""
    other = model_dir.parent / "no-pwned-tokenizer"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS[:-1]]
    transformers.BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(other)
    assert ClassifierDetector(model_dir).score("pwned") > 0.5
    assert ClassifierDetector(model_dir, tokenizer=other).score("pwned") < 0.5


def test_a_loaded_model_needs_a_tokenizer(model_dir: Path) -> None:
    """A loaded model without ``tokenizer=`` fails at construction, saying what to pass."""
    with pytest.raises(ValueError, match=r"^pass tokenizer= with a loaded model$"):
        ClassifierDetector(_loaded(model_dir))


def test_a_missing_extra_is_named_in_the_error(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without torch installed, construction fails naming the extra to install."""
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"pip install 'adk-lattice\[classifier\]'"):
        ClassifierDetector(model_dir)


@pytest.mark.parametrize(
    ("positions", "stated", "window"),
    [
        (32, 10**30, 32),  # the tokenizer states none (transformers' placeholder): the model's
        (2_000_000, 100, 100),  # the tokenizer's, when shorter
        (2_000_000, 10**6, 2_000_000),  # a million tokens or more reads as no limit
        (None, 10**30, 512),  # neither states a limit
    ],
)
def test_the_window_is_the_shorter_stated_limit(
    model_dir: Path, positions: int | None, stated: int, window: int
) -> None:
    """The default window is the smaller of the model's and the tokenizer's limits (else 512)."""
    detector = ClassifierDetector(
        _loaded(model_dir, positions), tokenizer=_tokenizer(model_dir, stated)
    )
    assert detector.window == window
    assert detector.overlap == min(64, (window - 2) // 4)


def test_a_tokenizer_without_limit_or_overflow_mapping_works(model_dir: Path) -> None:
    """A tokenizer that states no limit and returns no overflow mapping still scores windows."""
    plain = _PlainTokenizer(transformers.AutoTokenizer.from_pretrained(model_dir))
    detector = ClassifierDetector(_loaded(model_dir), tokenizer=plain)
    assert detector.window == 32
    assert detector.score("hello world " * 30 + "pwned") > 0.5


class _MisalignedTokenizer(_PlainTokenizer):
    """A faulty tokenizer: its special-token masks do not line up with its windows."""

    def __init__(self, inner: Any, cut: str) -> None:
        super().__init__(inner)
        self.cut = cut

    def __call__(self, text: str, **options: Any) -> Any:
        enc = super().__call__(text, **options)
        if "special_tokens_mask" in enc:
            masks = enc["special_tokens_mask"]
            cut = masks[:-1] if self.cut == "windows" else [m[:-1] for m in masks]
            enc["special_tokens_mask"] = cut
        return enc


@pytest.mark.parametrize("cut", ["windows", "tokens"])
def test_a_tokenizer_whose_masks_do_not_line_up_is_an_error(model_dir: Path, cut: str) -> None:
    """Windows are not silently cut short when a tokenizer's masks miss windows or tokens."""
    inner = transformers.AutoTokenizer.from_pretrained(model_dir)
    detector = ClassifierDetector(_loaded(model_dir), tokenizer=_MisalignedTokenizer(inner, cut))
    with pytest.raises(ValueError, match="zip"):
        detector.windows("hello world " * 40)


def test_the_smallest_window_holds_one_text_token(model_dir: Path) -> None:
    """A window one token larger than the special tokens works; one smaller is refused."""
    detector = ClassifierDetector(model_dir, window=3, overlap=0)
    assert [len(w) for w in detector.windows("hello world page")] == [1, 1, 1]
    with pytest.raises(ValueError, match="window must be between 3 and 32"):
        ClassifierDetector(model_dir, window=2)


def test_the_overlap_defaults_to_a_quarter_and_must_leave_room(model_dir: Path) -> None:
    """The default overlap is a quarter of a window's text tokens; a full one is refused."""
    assert ClassifierDetector(model_dir).overlap == 7
    assert ClassifierDetector(model_dir, overlap=4).overlap == 4
    assert ClassifierDetector(model_dir, overlap=29).overlap == 29
    with pytest.raises(ValueError, match=r"overlap must be >= 0 and below 30"):
        ClassifierDetector(model_dir, overlap=30)


def test_a_smaller_window_cuts_the_text_into_smaller_windows(model_dir: Path) -> None:
    """``window=`` bounds every window's length, special tokens included."""
    detector = ClassifierDetector(model_dir, window=8, overlap=1)
    windows = detector.windows("hello world " * 10)
    assert len(windows) == 4
    assert all(len(w) <= 6 for w in windows)


def test_each_window_gets_one_score(model_dir: Path) -> None:
    """``scores`` has one score per window, whatever the batch size."""
    text = "hello world " * 100 + "pwned"
    for batch_size in (1, 3, 8):
        detector = ClassifierDetector(model_dir, batch_size=batch_size)
        scores = detector.scores(text)
        assert len(scores) == len(detector.windows(text)) > batch_size
        assert scores[-1] > 0.5 > max(scores[:-1])


@pytest.mark.parametrize(("batch_size", "passes"), [(None, 2), (1, 9), (0, 9), (9, 1)])
def test_windows_go_through_the_model_batch_size_at_a_time(
    model_dir: Path, batch_size: int | None, passes: int
) -> None:
    """Windows are scored ``batch_size`` at a time (8 by default, at least 1): memory is bounded."""
    options = {} if batch_size is None else {"batch_size": batch_size}
    model = _loaded(model_dir)
    detector = ClassifierDetector(model, tokenizer=model_dir, **options)
    text = "hello world " * 100
    assert len(detector.windows(text)) == 9
    calls: list[int] = []
    model.register_forward_hook(lambda *_: calls.append(1), with_kwargs=True)
    detector.scores(text)
    assert len(calls) == passes
