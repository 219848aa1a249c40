"""Hypothesis strategies that draw valid-by-construction programs, and the `Case` they become."""
from .case import Case, case_seed, draw_case, redraw
from .compose import family_names, programs
from .families import load_families

load_families()

__all__ = ["Case", "case_seed", "draw_case", "family_names", "load_families", "programs", "redraw"]
