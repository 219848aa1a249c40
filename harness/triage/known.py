"""`corpus/known_issues.toml`: signatures already reported upstream, which campaigns do not re-report."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from dynfuzz.errors import UsageError

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "corpus" / "known_issues.toml"


@dataclass
class KnownIssues:
    """Known signatures → their entry (`upstream` link, `title`, `corpus` file, ...)."""

    entries: dict[str, dict] = field(default_factory=dict)

    def __contains__(self, signature: str) -> bool:
        return signature in self.entries

    @classmethod
    def load(cls, path: Path | None = None) -> KnownIssues:
        path = DEFAULT_PATH if path is None else Path(path)
        if not path.exists():
            return cls()
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise UsageError(f"{path}: not valid TOML: {e}") from None
        entries = {}
        for item in data.get("issue", []):
            if "signature" not in item:
                raise UsageError(f"{path}: every [[issue]] needs a signature")
            entries[item["signature"]] = item
        return cls(entries)
