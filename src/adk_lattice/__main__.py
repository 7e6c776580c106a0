"""``python -m adk_lattice``: the lint command line (see :mod:`adk_lattice._config.cli`)."""

import sys

from ._config.cli import main

if __name__ == "__main__":
    sys.exit(main())
