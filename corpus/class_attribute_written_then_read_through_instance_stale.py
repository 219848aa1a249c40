# [outputs/miscompile] call 0: out values differ
# A class attribute written in the frame (`C.total = 4`) and then read through an instance (`c.total`) gives the
# value from before the write under torch.compile: eager returns 4, compiled 0. The tensor op before it is needed;
# the class may be defined in the frame too, and the write may be a method's `type(self).total = 4`.
# Correct on torch 2.5.1; wrong on 2.13.0 and 2.14.1. Found by the frontier family (a frame-built class) and
# reduced to default settings.
# torch 2.13.0+cpu, torch.compile(backend="eager"): exits 1 while the bug is present, 0 once fixed.
import torch


class C:
    total = 0


def f(x):
    y = x * 3
    c = C()
    C.total = 4
    return y + c.total


def inputs(device, call=0):
    return (torch.ones(2, device=device),)


if __name__ == "__main__":
    out = f(*inputs("cpu"))
    C.total = 0
    c_out = torch.compile(f, backend="eager")(*inputs("cpu"))
    torch.testing.assert_close(c_out, out, msg=lambda m: "eager vs compiled: " + m)
