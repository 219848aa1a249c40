"""The one error type the CLI turns into a one-line message and exit code 2."""


class UsageError(Exception):
    """Bad input from the user: a flag, a file, a budget. Its message is printed as one line."""
