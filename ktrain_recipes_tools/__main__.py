"""Entry point for ``python -m ktrain_recipes_tools`` (``python -m ktrain_recipes`` runs the same commands)."""

import sys

from ktrain_recipes_tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
