"""Replay the corpus under pytest: register dynfuzz's plugin here unless its `pytest11` entry point
(installed with the package) has already done so."""


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("dynfuzz"):
        from dynfuzz import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "dynfuzz")
