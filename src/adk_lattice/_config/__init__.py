"""Configuration files: reading and checking TOML (``read``), building handlers from it
(``build``), and the ``python -m adk_lattice config`` command (``cli``)."""
