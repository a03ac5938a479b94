"""``python -m ad_compiler`` behaves like the ``ad-compiler`` command."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
