"""The attack-success benchmark: a worst-case obedient model against the lattice's policies.

``python -m benchmarks.security`` (or ``make bench-security``) runs it; see
``docs/policy.md``, section "Attack success and utility", for what it measures.
"""
