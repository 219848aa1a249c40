"""The `basic` family: straight-line tensor code, a closure writing a `nonlocal`, global writes, and the
Dynamo settings (`torch._dynamo.config` flags, torch logs) a program is compiled under.

It is the first family the pipeline runs and the filler the other families compose with. Importing this
package registers its fragments, in this order.
"""
from __future__ import annotations

from . import tensor_code  # noqa: F401  isort: skip
from . import settings  # noqa: F401  isort: skip
