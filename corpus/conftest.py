"""Replay the corpus under pytest without installing dynfuzz: register the plugin here unless
the `dynfuzz` pytest11 entry point (after `pip install`) has already done so."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("dynfuzz"):
        from harness import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "dynfuzz")
