"""Pytest fixtures shared by the tests."""

import pytest

from kzhelpers import RecordingChannel


@pytest.fixture
def channel():
    """A channel that records the events of an in-process run."""
    return RecordingChannel()
