"""``python -m adk_lattice``: the lint command line (see :mod:`adk_lattice._cli`)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
