"""The harness: runs cases (eager, compiled, reference), orchestrates campaigns, saves repros, the CLI."""
