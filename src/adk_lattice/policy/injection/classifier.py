"""``ClassifierDetector``: a prompt-injection sequence classifier run locally on the CPU."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from .._text.normalize import clean
from .detectors import Finding

_EXTRA = "ClassifierDetector needs the classifier extra: pip install 'adk-lattice[classifier]'"


class ClassifierDetector:
    """A :class:`~adk_lattice.policy.Detector` backed by a ``transformers`` classifier.

    Any sequence-classification model whose labels name the attack class works (for
    example a DeBERTa or BERT prompt-injection classifier): loaded from a local directory
    or a hub id (downloaded once by ``transformers``; set ``HF_HUB_OFFLINE=1`` to forbid
    it). A long text is cut into windows of the model's length that overlap by
    ``overlap`` tokens, the text's score is the highest window score, and the text is
    flagged at ``threshold`` or above. Inference runs in a worker thread, so the event loop
    is never blocked. Text is NFKC-normalised, invisible characters are dropped and
    look-alike letters folded before tokenising.

    Args:
        model: a directory or hub id, or a loaded ``PreTrainedModel``.
        tokenizer: a directory, hub id or loaded tokenizer (default: the model's).
        labels: the label names whose probabilities add up to the attack score (matched
            without regard to case against the model's ``id2label``).
        threshold: the score from which a text is flagged (0 to 1).
        window: tokens per window, special tokens included (default: the model's limit).
        overlap: tokens shared by consecutive windows (default: a quarter of a window, at
            most 64).
        batch_size: windows per forward pass.
        name: the detector name.

    Raises:
        ImportError: when ``transformers`` or ``torch`` is missing (install the extra).
        ValueError: when no label of the model is in ``labels`` (the message lists the
            model's labels), or on a bad ``threshold``, ``window`` or ``overlap``.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any,
        *,
        tokenizer: str | os.PathLike[str] | Any = None,
        labels: Sequence[str] = ("INJECTION", "JAILBREAK"),
        threshold: float = 0.5,
        window: int | None = None,
        overlap: int | None = None,
        batch_size: int = 8,
        name: str = "classifier",
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - the dev extra installs both
            raise ImportError(_EXTRA) from exc
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
        if isinstance(model, str | os.PathLike):
            tokenizer = tokenizer if tokenizer is not None else model
            model = AutoModelForSequenceClassification.from_pretrained(model)
        if tokenizer is None:
            raise ValueError("pass tokenizer= with a loaded model")
        if isinstance(tokenizer, str | os.PathLike):
            tokenizer = AutoTokenizer.from_pretrained(tokenizer)
        wanted = {label.upper() for label in labels}
        id2label = {int(i): str(n) for i, n in model.config.id2label.items()}
        self._label_ids = sorted(i for i, n in id2label.items() if n.upper() in wanted)
        if not self._label_ids:
            raise ValueError(
                f"none of labels={list(labels)} is a label of this model; its labels are "
                f"{sorted(id2label.values())}: pass labels=[...] naming the attack class"
            )
        limit = int(getattr(model.config, "max_position_embeddings", 512))
        model_max = getattr(tokenizer, "model_max_length", limit)
        limit = min(limit, int(model_max)) if model_max and model_max < 10**6 else limit
        self.window = window or limit
        self._special = int(tokenizer.num_special_tokens_to_add(pair=False))
        if not self._special < self.window <= limit:
            raise ValueError(f"window must be between {self._special + 1} and {limit}")
        body = self.window - self._special
        overlap = min(64, body // 4) if overlap is None else overlap
        if not 0 <= overlap < body:
            raise ValueError(f"overlap must be >= 0 and below {body} (the window's text tokens)")
        self.overlap = overlap
        self.threshold = threshold
        self.batch_size = max(1, batch_size)
        self.name = name
        self._torch = torch
        self._model = model.eval()
        self._tokenizer = tokenizer
        # One pass now: a model that cannot run fails here, and the lazy imports of the first
        # call happen in this thread rather than in a worker thread.
        self.scores("")

    async def detect(self, text: str, source: str = "user") -> Finding | None:
        """Score ``text`` in a worker thread; a finding at or above the threshold."""
        score = await asyncio.to_thread(self.score, text)
        return Finding("classifier", (self.name,), source) if score >= self.threshold else None

    def score(self, text: str) -> float:
        """The attack score of ``text``: the highest of its windows' scores (0 to 1)."""
        return max(self.scores(text))

    def scores(self, text: str) -> list[float]:
        """The attack score of each window of ``text``, in order (at least one)."""
        enc = self._encode(text, padding=True, return_tensors="pt")
        enc.pop("overflow_to_sample_mapping", None)
        torch = self._torch
        out: list[float] = []
        total = int(enc["input_ids"].shape[0])
        for start in range(0, total, self.batch_size):
            batch = {k: v[start : start + self.batch_size] for k, v in enc.items()}
            with torch.inference_mode():
                logits = self._model(**batch).logits
            probs = torch.softmax(logits.float(), dim=-1)[:, self._label_ids].sum(dim=-1)
            out.extend(float(p) for p in probs)
        return out

    def windows(self, text: str) -> list[list[int]]:
        """The token ids of each window of ``text``, without the special tokens."""
        enc = self._encode(text, return_special_tokens_mask=True)
        return [
            [t for t, special in zip(ids, mask, strict=True) if not special]
            for ids, mask in zip(enc["input_ids"], enc["special_tokens_mask"], strict=True)
        ]

    def _encode(self, text: str, **options: Any) -> Any:
        return self._tokenizer(
            clean(text),
            truncation=True,
            max_length=self.window,
            stride=self.overlap,
            return_overflowing_tokens=True,
            **options,
        )
