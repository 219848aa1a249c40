# The checker inlined into every saved repro script (after oracles/snapshot.py).
# It imports only torch; `take` and `diff` come from the inlined snapshot code,
# and DYNFUZZ / PROGRAM / EAGER_PROGRAM from the script's header.
import sys
import warnings

import torch

if "take" not in globals():  # running this template directly (tests) rather than inlined
    from dynfuzz.oracles.snapshot import diff, take, take_tracked


def run_mode(source, compiled):
    """Run the program's call plan once; returns a list of (error, snapshot) per call."""
    meta = DYNFUZZ  # noqa: F821 - defined by the script header
    ns = {"__name__": "dynfuzz_program"}
    exec(compile(source, "<dynfuzz-%s>" % ("compiled" if compiled else "eager"), "exec"), ns)
    fn = ns[meta["entry"]]
    if compiled:
        options = dict(backend=meta["backend"], fullgraph=meta["fullgraph"])
        options.update(ns.get("COMPILE_OPTIONS", {}))
        torch._dynamo.reset()
        fn = torch.compile(fn, **options)
    state = {k: v for k, v in ns.items() if not k.startswith("__") and k not in
             ("inputs", "between", "CALLS", "COMPILE_OPTIONS") and type(v).__name__ != "module"}
    results = []
    for i in range(ns.get("CALLS", 2)):
        between = ns["between"](i) if i and "between" in ns else None
        args = ns["inputs"](meta["device"], i)
        _, known = take_tracked({"args": args, "state": {k: ns[k] for k in state}})
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, err = fn(*args), None
        except Exception as e:
            out, err = None, e
        state = {k: ns[k] for k in state}
        results.append((err, take({"args": args, "out": out, "state": state, "between": between},
                                  known_tensors=known)))
    return results


def user_type(err):
    """The exception type a user sees, with Dynamo's wrappers taken off."""
    if err is None:
        return None
    if type(err).__name__ == "TorchRuntimeError":
        import re

        m = re.search(r"got (\w+)\(", str(err))
        return m.group(1) if m else "RuntimeError"
    return type(err).__name__


def divergences(expected, actual, oracle):
    """Human-readable differences between the eager and compiled runs, for the aspect `oracle` checks."""
    roots = {"outputs": ("out",), "effects": ("args", "state", "between")}.get(oracle, ("out", "args", "state"))
    lines = []
    for i, ((e_err, e_snap), (c_err, c_snap)) in enumerate(zip(expected, actual)):
        if user_type(e_err) != user_type(c_err):
            lines.append("call %d: eager raised %r, compiled raised %r" % (i, e_err, c_err))
            break
        if e_err is not None or c_err is not None:
            continue
        for name in roots:
            e_sub = dict(e_snap[2]).get(name)
            c_sub = dict(c_snap[2]).get(name)
            for path, aspect, exp, act in diff(e_sub, c_sub, name):
                lines.append("call %d: %s: %s: expected %r, got %r" % (i, path, aspect, exp, act))
        if lines:
            break
    return lines


def main():
    meta = DYNFUZZ  # noqa: F821
    print("torch", torch.__version__, "| backend=%s device=%s fullgraph=%s" %
          (meta["backend"], meta["device"], meta["fullgraph"]))
    if meta["device"] == "cuda" and not torch.cuda.is_available():
        print("this repro needs CUDA, which is not available here")
        return 2
    expected = run_mode(EAGER_PROGRAM or PROGRAM, compiled=False)  # noqa: F821
    actual = run_mode(PROGRAM, compiled=True)  # noqa: F821
    lines = divergences(expected, actual, meta["oracle"])
    if lines:
        print("DIVERGENCE (%s/%s):" % (meta["oracle"], meta["kind"]))
        for line in lines[:20]:
            print("  " + line)
        return 1
    print("no divergence: eager and compiled agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
