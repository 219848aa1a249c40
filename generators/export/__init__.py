"""The `export` family: a way of running a program rather than a construct of it (see `modes`)."""
from __future__ import annotations

from . import modes  # noqa: F401
