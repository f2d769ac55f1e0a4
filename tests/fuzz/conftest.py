"""The fuzz tests share the reliability tests' warm-up (torch's one-time lazy imports first)."""

from tests.reliability.conftest import warmed_up

__all__ = ["warmed_up"]
