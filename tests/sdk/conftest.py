"""Fixtures for the SDK tests: in-process fake agents and the real AG-UI captures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CAPTURES


@pytest.fixture
def captures() -> Path:
    assert CAPTURES.is_dir(), f"the AG-UI captures are expected at {CAPTURES}"
    return CAPTURES
