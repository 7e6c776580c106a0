"""The built-in prompt-injection detectors: patterns per family, with weights.

A strong rule (weight 1.0) flags on its own; weak rules (0.5) flag only when two different
ones agree. The patterns look for the shape of an attack (an override aimed at the model's
instructions, a persona without limits, a request for the hidden prompt, forged role
markers), not for single words, so ordinary requests that share the words pass: "ignore my
last message", "act as my assistant", "what does this system error mean".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern of one detector family."""

    name: str
    family: str
    pattern: re.Pattern[str]
    weight: float = 1.0


def _r(name: str, family: str, pattern: str, weight: float = 1.0) -> Rule:
    return Rule(name, family, re.compile(pattern, re.IGNORECASE | re.MULTILINE), weight)


def build_rules() -> tuple[Rule, ...]:
    """The built-in rules, compiled anew on each call (:data:`RULES` holds the set made at import).

    Returns:
        The rules in the order the detector reports them: instruction override, jailbreak
        framing, system-prompt extraction, delimiter smuggling.
    """
    target = (
        r"(?:instructions?|directions?|prompts?|rules|guidelines|directives|constraints|programming"
        r"|restrictions|polic(?:y|ies)|guardrails|filters|commands|context|training|conditioning"
        r"|inputs?)"
    )
    limits = (
        r"(?:restrictions|limitations|filters|censorship|guidelines|morals|ethics|boundaries"
        r"|rules|confines|polic(?:y|ies)|constraints|guardrails|principles|safeguards|filters?)"
    )
    override = "instruction_override"
    roleplay = "jailbreak_framing"
    extract = "system_prompt_extraction"
    smuggle = "delimiter_smuggling"
    return (
        # -- instruction override --------------------------------------------------------------
        _r(
            "ignore_instructions",
            override,
            r"\b(?:ignore|disregard|forget|override|bypass|discard|abandon|drop)\s+(?:all\s+|any\s+|"
            r"every\s+|each\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+|its\s+)?"
            r"(?:(?:previous|prior|above|earlier|preceding|initial|original|following|former|"
            r"system|existing|safety|given|old|current|other|default)\s+(?:and\s+following\s+)?)*"
            + target
            + r"\b",
        ),
        _r(
            "ignore_the_rest",
            override,
            r"\b(?:ignore|disregard)\s+(?:the\s+rest\s+of|all\s+(?:info|information|content|text)"
            r"\s+except|(?:them|it|everything|all\s+(?:of\s+)?(?:that|this|the\s+above))\s+and\s+"
            r"(?:instead|just|only))",
        ),
        _r(
            "forget_everything",
            override,
            r"\bforget\s+(?:everything|all)\s+(?:from\b|(?:that\s+)?you(?:'ve|\s+have)?\s+(?:been\s+told|"
            r"learned|know|were\s+told)|(?:above|before|previous))",
        ),
        _r(
            "new_instructions",
            override,
            r"\b(?:your\s+new\s+(?:instructions|task|role|rules|purpose|directive)\s+(?:is|are)|"
            r"new\s+(?:system\s+)?(?:instructions|directive|rules)\s*:)",
        ),
        _r("stop_everything", override, r"\bstop\s+everything\b"),
        _r(
            "authority_override",
            override,
            r"\b(?:admin(?:istrator)?|system|developer|root|sudo)\s+(?:override|command)\b",
        ),
        _r(
            "repeat_following",
            override,
            r"\b(?:repeat|say|print|output)\s+(?:the\s+following|this)\s+(?:sentence|text|phrase|words?)\b",
            0.5,
        ),
        _r(
            "if_asked_say",
            override,
            r"\bif\s+(?:questioned|asked)\b[^.\n]{0,30}\b(?:report|say|reply|respond|answer|tell)\b",
            0.5,
        ),
        _r(
            "instead_print",
            override,
            r"\b(?:and\s+)?(?:instead|just|only)\s+(?:say|print|output|write|repeat|reply\s+with)"
            r"\s*[\"'<:]",
            0.5,
        ),
        # -- jailbreak / role-play framing -----------------------------------------------------
        _r("do_anything_now", roleplay, r"\bdo\s+anything\s+now\b"),
        _r(
            "no_limits_persona",
            roleplay,
            r"\b(?:no|without(?:\s+any)?|free\s+(?:of|from)(?:\s+all)?|not\s+(?:bound|restrained|limited|"
            r"restricted|constrained|governed)\s+by(?:\s+any)?|"
            r"(?:don'?t|do\s+not|doesn'?t|does\s+not|won'?t|will\s+not)\s+(?:have(?:\s+any)?|"
            r"(?:need|have)\s+to\s+(?:follow|abide\s+by|adhere\s+to|obey|comply\s+with)(?:\s+any|"
            r"\s+the)?)|broken\s+free\s+of(?:\s+the)?|bypass(?:es|ing)?(?:\s+all)?|ignores?\s+all)"
            r"\s+(?:a\s+|your\s+|or\s+|and\s+|typical\s+|usual\s+|ethical\s+|moral\s+|content\s+|safety\s+|openai'?s?\s+|"
            r"programming\s+|any\s+)*" + limits + r"\b",
        ),
        _r(
            "unrestricted_persona",
            roleplay,
            r"\b(?:unfiltered|uncensored|amoral|unrestricted|unethical|immoral|unbound|unchained|"
            r"limitless|rogue|evil|jailbroken|jailbreak)\s+(?:and\s+\w+\s+)?(?:ai|chatbot|assistant|"
            r"model|language\s+model|version|response|responses|answer|bot|persona|character|entity"
            r"|mode|confidant|alter\s+ego)\b",
        ),
        _r(
            "jailbroken",
            roleplay,
            r"\b(?:you\s+(?:are|have\s+been|were)|successfully|now)\s+(?:been\s+)?jailbr(?:oken|eaked)",
        ),
        _r(
            "never_refuse", roleplay, r"\b(?:never|not|cannot|can'?t|won'?t)\s+(?:ever\s+)?refuse\b"
        ),
        _r(
            "stay_in_character",
            roleplay,
            r"\b(?:stay|remain|keep)\s+in\s+character\b|\bbreak(?:ing)?\s+character\b",
        ),
        _r(
            "developer_mode",
            roleplay,
            r"\bdeveloper\s+mode\s+(?:enabled|output|response)|\b(?:act|simulate|pretend)\b[^.\n]{0,60}"
            r"\b(?:developer|dev|god|admin|debug|maintenance|sudo)\s+mode|\byou\s+are\s+now\s+in\s+"
            r"\w+\s+mode\b",
        ),
        _r(
            "answer_anything",
            roleplay,
            r"\b(?:answer|respond\s+to|fulfil+|comply\s+with|provide)\s+(?:every|any|all)\s+"
            r"(?:request|question|prompt|query)s?\b[^.\n]{0,40}\b(?:no\s+matter|regardless|without|"
            r"even\s+if)",
        ),
        _r(
            "persona_switch",
            roleplay,
            r"\b(?:you\s+are\s+(?:now\s+)?(?:going\s+to\s+)?(?:act|pretend|be|play|become)\s+(?:as\s+"
            r"|to\s+be\s+)?|you(?:\s+are|'re)\s+now\s+|from\s+now\s+on,?\s+you(?:\s+are|'re|\s+will"
            r"\s+(?:be|act|respond))\s+|transform\s+into\s+)(?:an?\s+)?(?:(?-i:[A-Z][A-Za-z]*[A-Z]\w*)"
            r"|\"[^\"\n]{1,40}\"|ai\s+(?:that|which|who|without)|(?:evil|unrestricted|unfiltered))",
        ),
        _r(
            "dual_response",
            roleplay,
            r"[\[(](?:🔒|🔓|classic|jailbreak|dan|normal\s+output|developer\s+mode\s+output)[\])]",
        ),
        _r(
            "policy_contempt",
            roleplay,
            r"\b(?:openai|content|ethical|safety)\s+polic(?:y|ies)\b",
            0.5,
        ),
        _r(
            "harm_vocabulary",
            roleplay,
            r"\b(?:illegal|unethical|immoral|explicit|harmful|offensive|nsfw)\b[^.\n]{0,40}\b(?:illegal|"
            r"unethical|immoral|explicit|harmful|offensive|dangerous|nsfw)\b",
            0.5,
        ),
        _r(
            "hypothetical_frame",
            roleplay,
            r"\b(?:hypothetical|fictional|imaginary)\s+(?:world|reality|scenario|universe|setting)\b",
            0.4,
        ),
        _r("roleplay_game", roleplay, r"\b(?:role[- ]?play|play\s+a\s+game|let'?s\s+play)\b", 0.4),
        _r(
            "persona_request",
            roleplay,
            r"\b(?:act\s+(?:as|like)|pretend\s+(?:to\s+be|you\s+are)|simulate|personify|(?:take\s+"
            r"(?:up|on)|adopt)\s+the\s+(?:persona|role)|respond\s+as|you\s+are\s+now|your\s+name\s+is"
            r"\s+now)\b",
            0.4,
        ),
        _r(
            "no_longer_yourself",
            roleplay,
            r"\byou\s+are\s+no\s+longer\b|\b(?:not|never|won'?t)\s+(?:respond|answer|reply)\s+as\s+"
            r"(?:chat\s?gpt|gpt|an?\s+ai|an?\s+assistant|claude|gemini)\b",
        ),
        _r(
            "rules_do_not_apply",
            roleplay,
            r"\b(?:rules|polic(?:y|ies)|guidelines|restrictions|filters)\s+(?:don'?t|do\s+not|no\s+"
            r"longer|does\s+not|doesn'?t)\s+apply\b",
        ),
        _r(
            "mode_enabled",
            roleplay,
            r"\b\w*[ _]mode\s*[:=]?\s*(?:output|enabled|activated)\b",
        ),
        _r(
            "two_responses",
            roleplay,
            r"\b(?:two|2|both)\s+(?:different\s+)?(?:responses|answers"
            r"|paragraphs|replies|entities|personalities)\b",
            0.5,
        ),
        _r(
            "opposite_game",
            roleplay,
            r"\bopposite\s+(?:day|of\s+what|machine)\b|\bin\s+reverse\b",
            0.5,
        ),
        _r(
            "anything_goes",
            roleplay,
            r"\b(?:can|could|will)\s+do\s+anything\b|\bcapable\s+of\s+anything\b|\b(?:will|can|"
            r"must)\s+(?:answer|respond\s+to|fulfil+|do)\s+(?:any|every|all)\s+(?:request|question|"
            r"prompt)s?\b",
            0.5,
        ),
        _r("vendor_name", roleplay, r"\b(?:chat\s?gpt|openai|gpt-?[34]\w*)\b", 0.4),
        _r("from_now_on", roleplay, r"\bfrom\s+now\s+on,?\s+(?:you|your)\b", 0.4),
        # -- system prompt extraction ----------------------------------------------------------
        _r(
            "your_hidden_prompt",
            extract,
            r"\b(?:your|the|this)\s+(?:initial|original|starting|hidden|secret|system|internal|"
            r"underlying|full|complete|exact)\s+(?:prompt|instructions?|system\s+message|message|"
            r"configuration|directives)\b",
        ),
        _r("system_prompt_token", extract, r"\bsystem_?prompt\b|\bsystemPrompt\b"),
        _r(
            "what_were_you_told",
            extract,
            r"\b(?:what\s+(?:were|are|have)\s+you\s+(?:been\s+)?(?:told|instructed|programmed|given)|"
            r"instructions\s+you\s+were\s+given|were\s+you\s+told\s+before|i\s+was\s+(?:instructed|"
            r"told|programmed)\s+to|my\s+instructions\s+are)\b",
        ),
        _r(
            "repeat_above",
            extract,
            r"\b(?:repeat|output|print|echo|copy|show|display)\s+(?:me\s+)?(?:back\s+)?(?:the\s+|all\s+"
            r"(?:of\s+)?(?:the\s+)?|everything\s+)?(?:text|words|content|everything|lines|messages?)?"
            r"\s*(?:above|before\s+this|prior\s+to\s+this|in\s+the\s+system)\b|\brepeat\s+(?:this\s+"
            r"|the\s+)?entire\s+conversation\b|\bword\s+for\s+word\b",
        ),
        _r(
            "not_supposed_to_tell",
            extract,
            r"\bnot\s+(?:supposed|allowed|permitted)\s+to\s+(?:tell|say|share|reveal|disclose)",
        ),
        _r(
            "your_instructions",
            extract,
            r"\b(?:reveal|print|display|output|repeat|recite|leak|dump|what\s+are|tell\s+me|show\s+me)"
            r"\s+(?:me\s+)?your\s+(?:instructions|rules|guidelines|programming|prompt|configuration)\b",
        ),
        _r("initialization_string", extract, r"\binitiali[sz]ation\s+(?:string|prompt|text)\b"),
        _r(
            "system_configuration",
            extract,
            r"\bsystem\s+(?:configuration|instructions|message)\b",
            0.5,
        ),
        # -- delimiter / markup smuggling ------------------------------------------------------
        _r(
            "chat_template_tokens",
            smuggle,
            r"<\|(?:im_start|im_end|system|endoftext|user|assistant|start_header_id|eot_id)\|>|"
            r"\[/?INST\]|<</?SYS>>|</?(?:system|sys|instructions?|admin|developer)>",
        ),
        _r(
            "forged_role_line",
            smuggle,
            r"^\s*(?:#{1,3}\s*)?(?:system|assistant|developer)\s*:\s*\S|^\s*\$system\b",
        ),
        _r("forged_user_turn", smuggle, r"^\s*(?:user|human)\s*:\s*\S", 0.5),
        _r(
            "end_of_context",
            smuggle,
            r"<\s*end\s+of\s+(?:session|prompt|input|context|conversation)\s*>|\bend\s+of\s+"
            r"(?:system\s+)?(?:prompt|instructions)\b\s*[-=#*]{2,}|^[-=#*]{8,}\s*$\n\s*(?:new\s+)?"
            r"(?:system|instructions?)\b",
        ),
        _r(
            "note_to_the_model",
            smuggle,
            r"\b(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|"
            r"assistant|llm|language\s+model|automated\s+\w+(?:\s+\w+)?|chatbot|agent|model)\b|"
            r"\b(?:in)?visible\s+to\s+(?:humans|the\s+llm|llms|ai)\b",
        ),
    )


def build_squashed_override() -> re.Pattern[str]:
    """The override phrase matched on a text's letters alone, compiled anew (see
    :data:`SQUASHED_OVERRIDE`).

    Returns:
        The phrase with every non-letter removed: ``ignoreallpreviousinstructions``.
    """
    return re.compile(
        r"(?:ignore|disregard|forget|override|bypass)(?:all|any|of|the|your|these|those)?"
        r"(?:the|your)?(?:previous|prior|above|earlier|preceding|initial|original|system)"
        r"(?:instructions?|prompts?|rules|directions|directives|guidelines)"
    )


#: The built-in rules (see :func:`build_rules`).
RULES: Final[tuple[Rule, ...]] = build_rules()
#: The override phrase with every non-letter removed, matched on a view of the text that kept
#: only its letters: catches separators a pattern cannot anticipate (``ignore<!-- -->previous``,
#: ``ignore/*x*/all/previous/instructions``). Only this phrase: on squashed text, shorter
#: phrases would match across innocent word boundaries.
SQUASHED_OVERRIDE: Final = build_squashed_override()
