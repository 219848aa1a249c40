"""Campaigns: the loop that draws cases and runs them in workers or on Ray, its ledger and journal (and their
views), capacity shared with triage, progress, guidance, `--resume` and `dynfuzz triage DIR`.

Above `run/` (one case) and `triage/`, which never import it (docs/development.md, "Layers")."""
