"""Test-wide settings: the IR verifier runs after every optimisation pass."""
import os

os.environ.setdefault("AD_COMPILER_VERIFY", "1")
