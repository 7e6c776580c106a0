"""The text machinery the guards share: linear-time patterns, folding, look-alike letters.

Private to the policy families: :mod:`.engine` compiles and runs patterns (RE2 when
present, else ``re``), :mod:`.normalize` folds attacker-made text into what a pattern
should see, and :mod:`.confusables` is the generated table of look-alike letters.
"""
