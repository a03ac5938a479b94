"""Which features the quick test enables, and which expose compiler defects still open.

``PENDING`` features generate programs the compiler gets wrong today; each entry
names the failure and a minimal reproduction. Switch a feature on (remove it
from ``PENDING``) once its reproductions pass.
"""
from __future__ import annotations

from .generator import FEATURES

PENDING = {
}

STABLE = tuple(f for f in FEATURES if f not in PENDING)
