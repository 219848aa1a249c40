"""The `syntax` family: Python statements Dynamo must translate opcode by opcode: exceptions
(try/except/finally, raise, re-raise), `with` blocks (and `with` forms Dynamo models by trackers of their own),
`match`, loops with break/continue/else, generators,
comprehensions (with graph breaks inside), f-strings, starred unpacking, walrus, `del` and local imports.

The fragments are registered here, drawn by the modules of this package; importing the package registers them.
"""
from __future__ import annotations

FAMILY = "syntax"

from ..builder import Builder  # noqa: E402
from ..fragments import Fragment, register  # noqa: E402
from .exc_attrs import exception_attrs, try_in_loop  # noqa: E402
from .exceptions import iteration_end, raise_flow, try_else_finally, try_except  # noqa: E402
from .flow import for_loop, match_stmt, while_loop  # noqa: E402
from .generator_funcs import comprehension, comprehension_break, generator  # noqa: E402
from .small_forms import (  # noqa: E402
    del_rebind,
    fstring_key,
    graph_break_site,
    kwonly_defaults,
    lambda_binding,
    print_call,
    seq_ops,
    starred,
    walrus_compare,
)
from .values import introspection, scalar_ops  # noqa: E402
from .with_blocks import context_manager, grad_mode, torch_context, with_graph_break  # noqa: E402
from .with_forms import with_forms  # noqa: E402

# Each fragment draws two constructs of the family, one after the other: the default mix draws about three
# fragments per program from all families, so a fragment per construct would leave each construct too small a
# share; a pair gives both of its constructs the pair's share. Pairs join neighbouring themes.
PAIRS = (
    (try_except, try_else_finally),
    (raise_flow, iteration_end),
    (exception_attrs, try_in_loop),
    (grad_mode, torch_context),
    (context_manager, with_graph_break),
    (match_stmt, introspection),
    (while_loop, for_loop),
    (generator, comprehension),
    (comprehension_break,),
    (fstring_key, print_call),
    (starred, kwonly_defaults),
    (walrus_compare, del_rebind),
    (graph_break_site, lambda_binding),
    (seq_ops, scalar_ops),
    (with_forms,),
)
NOT_NESTABLE = {grad_mode}  # returns a tensor that needs grad straight from the entry
WEIGHT = 8
# Pairs drawn late in the table come out of Hypothesis's index draw less often than their weight says.
WEIGHTS = {"walrus_compare_del_rebind": 11, "seq_ops_scalar_ops": 10, "fstring_key_print_call": 10,
           "grad_mode_torch_context": 9, "graph_break_site_lambda_binding": 11, "starred_kwonly_defaults": 9,
           "comprehension_break": 11, "generator_comprehension": 10, "while_loop_for_loop": 10, "with_forms": 11}


def _pair(parts: tuple) -> Fragment:
    def draw(draw_, b: Builder) -> None:
        for part in parts:
            part(draw_, b)

    name = "_".join(p.__name__ for p in parts)
    draw.__name__ = draw.__qualname__ = name
    draw.__doc__ = " Then: ".join(p.__doc__ or "" for p in parts)
    tags = ("syntax", *(t for p in parts for t in p.tags))
    return Fragment(name, FAMILY, tags, draw, WEIGHTS.get(name, WEIGHT), not NOT_NESTABLE.intersection(parts))


register(*(_pair(parts) for parts in PAIRS))
