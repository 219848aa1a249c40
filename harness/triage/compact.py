"""The compact checker appended to minimized repros and corpus entries (imports only torch).

It is written out verbatim after a script's `DYNFUZZ` / `PROGRAM` /
`EAGER_PROGRAM` header, so it must stay short, readable and self-contained:
run the call plan eagerly and compiled, describe what each call left behind
(outputs, arguments, globals, cells, exceptions, storage sharing), and print
the first difference in the aspect the finding's oracle checks.
"""
from __future__ import annotations

CHECKER = r'''
# ---- checker (imports only torch): exits 1 while eager and compiled differ, 0 once they agree ----
import sys
import warnings

import torch


def describe(v, seen, depth=0):
    """A comparable picture of a value: tensors by metadata + values, containers, cells, attributes."""
    if isinstance(v, torch.Tensor):
        tag = seen.setdefault(("storage", v.untyped_storage().data_ptr()), len(seen))
        grad = describe(v.grad, seen, depth + 1) if v.is_leaf and v.grad is not None else None
        return ("tensor", tuple(v.shape), v.dtype, v.stride(), v.requires_grad, tag, v.detach().clone(), grad)
    if isinstance(v, (int, float, bool, str, type(None), complex)) or type(v).__name__ == "module":
        return v
    if depth > 6:
        return "..."
    if id(v) in seen:
        return ("@", seen[id(v)])
    seen[id(v)] = len(seen)
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [describe(x, seen, depth + 1) for x in v])
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, {"members": "{%s}" % ", ".join(sorted(repr(x) for x in v))})
    if isinstance(v, dict):
        return ("dict", {repr(k): describe(x, seen, depth + 1) for k, x in v.items()})
    if callable(v) and hasattr(v, "__code__"):
        cells = [c.cell_contents for c in (v.__closure__ or ()) if _full(c)]
        return ("function " + v.__name__, [describe(c, seen, depth + 1) for c in cells])
    if hasattr(v, "__dict__") and not isinstance(v, type):
        return (type(v).__name__, {k: describe(x, seen, depth + 1) for k, x in sorted(vars(v).items())})
    return repr(v)


def _full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def run(compiled):
    ns = {"__name__": "repro"}
    source = PROGRAM if compiled or not EAGER_PROGRAM else EAGER_PROGRAM
    exec(compile(source, "<repro-%s>" % ("compiled" if compiled else "eager"), "exec"), ns)
    fn = ns[DYNFUZZ["entry"]]
    if compiled:
        torch._dynamo.reset()
        options = {"backend": DYNFUZZ["backend"], "fullgraph": DYNFUZZ["fullgraph"]}
        fn = torch.compile(fn, **{**options, **ns.get("COMPILE_OPTIONS", {})})
    plan = {"inputs", "between", "CALLS", "COMPILE_OPTIONS"}
    names = [k for k in ns if not k.startswith("__") and k not in plan and type(ns[k]).__name__ != "module"]
    calls = []
    for i in range(ns.get("CALLS", 2)):
        between = ns["between"](i) if i and "between" in ns else None
        args = ns["inputs"](DYNFUZZ["device"], i)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, err = fn(*args), None
        except Exception as e:
            out, err = None, e
        backward(out)
        seen = {}
        state = [describe(x, seen) for x in (out, args, {k: ns[k] for k in names}, between)]
        calls.append((err, state))
    return calls


def leaves(v):
    if isinstance(v, torch.Tensor):
        return [v]
    items = v.values() if isinstance(v, dict) else v if isinstance(v, (tuple, list)) else ()
    return [t for x in items for t in leaves(x)]


def backward(out):
    """Like dynfuzz: backward from sum_k (k+1) * mean(out_k), k over all output tensors, those requiring grad."""
    tensors = [(k + 1, t) for k, t in enumerate(leaves(out)) if t.requires_grad and t.is_floating_point()]
    if tensors:
        try:
            sum(w * t.float().mean() for w, t in tensors).backward()
        except Exception as e:
            print("backward raised %r" % e)


def error_type(err):
    if err is not None and type(err).__name__ == "TorchRuntimeError" and " got " in str(err):
        return str(err).split(" got ", 1)[1].split("(", 1)[0]
    return None if err is None else type(err).__name__


def first_difference(a, b, path):
    tensors = [isinstance(x, tuple) and len(x) == 8 and x[0] == "tensor" for x in (a, b)]
    if all(tensors):
        for name, x, y in zip(("shape", "dtype", "stride", "requires_grad", "storage sharing"), a[1:6], b[1:6]):
            if x != y:
                return path, name, x, y
        x, y = a[6], b[6]
        exact = not (x.is_floating_point() or x.is_complex())
        same = torch.equal(x, y) if exact else torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
        if not same:
            return path, "values", x, y
        if (a[7] is None) != (b[7] is None):
            return path + ".grad", "presence", a[7] is not None, b[7] is not None
        return a[7] and first_difference(a[7], b[7], path + ".grad")
    if any(tensors):
        return path, "type", a[0] if tensors[0] else type(a), b[0] if tensors[1] else type(b)
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2 and isinstance(a[1], (list, dict)):
        if a[0] != b[0]:
            return path, "type", a[0], b[0]
        x, y = a[1], b[1]
        if isinstance(x, dict) and isinstance(y, dict):
            if list(x) != list(y):
                return path, "keys", list(x), list(y)
            items = [(k, x[k], y[k]) for k in x]
        else:
            if len(x) != len(y):
                return path, "length", len(x), len(y)
            items = list(zip(range(len(x)), x, y))
        for k, p, q in items:
            found = first_difference(p, q, "%s[%s]" % (path, k))
            if found:
                return found
        return None
    return None if a == b else (path, "value", a, b)


def main():
    meta = DYNFUZZ
    print("torch %s | backend=%s device=%s fullgraph=%s" % (torch.__version__, meta["backend"], meta["device"],
                                                          meta["fullgraph"]))
    if meta.get("compiler", "torch") != "torch":
        print("note: found with the test double %r; this script checks real torch.compile" % meta["compiler"])
    roots = {"outputs": ("out",), "effects": ("args", "globals", "between"),
             "exceptions": ()}.get(meta["oracle"], ("out", "args", "globals", "between"))
    for i, ((e_err, e_state), (c_err, c_state)) in enumerate(zip(run(False), run(True))):
        if error_type(e_err) != error_type(c_err):
            print("call %d: expected %s, got %s" % (i, e_err and repr(e_err)[:300], c_err and repr(c_err)[:300]))
            return 1
        if e_err is not None:
            continue
        for root, e_part, c_part in zip(("out", "args", "globals", "between"), e_state, c_state):
            found = root in roots and first_difference(e_part, c_part, root)
            if found:
                path, aspect, expected, actual = found
                print("call %d: %s %s differ\n  expected (eager):    %s\n  actual (compiled):   %s"
                      % (i, path, aspect, expected, actual))
                return 1
    print("no divergence: eager and compiled agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
