"""Mutant of a path only a compile with torch's logs on runs: formatting the traced graph for the log.

Dynamo hands its `graph_code` artifact logger a lazily formatted string (`lazy_format_graph_code`),
formatted only when the artifact is enabled, just before the graph goes to the backend. A formatter that
touches the graph it prints changes what is compiled, and only a program drawn with the `torch-logs`
setting compiles with the artifact on.
"""
from __future__ import annotations

from . import mutant


@mutant("graph-log-negates-output", construct="torch-logs")
def graph_log_negates_output() -> None:
    """Formatting a graph for the `graph_code` log negates the graph's first output before it is compiled."""
    import torch
    import torch._dynamo.output_graph as output_graph
    from torch._logging import LazyString

    original = output_graph.lazy_format_graph_code

    def negate_first_output(gm) -> None:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        values = out.args[0]
        if not isinstance(values, (tuple, list)) or not values or not isinstance(values[0], torch.fx.Node):
            return
        with gm.graph.inserting_before(out):
            neg = gm.graph.call_function(torch.neg, (values[0],))
        out.args = (type(values)([neg, *values[1:]]),)
        gm.recompile()

    def lazy_format_graph_code(name, gm, *args, **kwargs):
        text = original(name, gm, *args, **kwargs)
        return LazyString(lambda: (negate_first_output(gm), str(text))[1])

    output_graph.lazy_format_graph_code = lazy_format_graph_code
