"""Triage: minimizing, reducing, repro scripts, known issues, corpus replay."""
