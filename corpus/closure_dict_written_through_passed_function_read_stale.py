# [outputs/miscompile] call 1: out[0] values differ
# torch 2.14.1, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
import torch

def make_pw0():
    v0 = {'n': 0}

    def bump(t):
        v0['n'] = v0['n'] + 1

    class Reader:

        def run(self, fn, t):
            fn(t)
            return t + v0['n']
    return (bump, Reader)
PW_WRITE0, PW_READER0 = make_pw0()

def f(x):
    return (PW_READER0().run(PW_WRITE0, x),)

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 1, device=device),)


if __name__ == "__main__":
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("eager_copy", __file__)
    eager = sys.modules["eager_copy"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eager)
    def run(fn, ns):
        for call in range(2):
            args = ns["inputs"]("cpu", call)
            out = fn(*args)
        return out, args
    out, args = run(eager.f, vars(eager))
    c_out, c_args = run(torch.compile(f, backend="eager"), globals())
    torch.testing.assert_close(c_out[0], out[0], equal_nan=True, msg=lambda m: "out[0] values (compiled vs eager): " + m)
