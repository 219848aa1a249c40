# [exceptions/trace-exception] call 0: RuntimeError raised inside the trace, eager raised nothing
# torch 2.14.1, torch._dynamo.export(aten_graph=True) at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed.
import copy
import torch

def f(x):
    try:
        d = 0 / (x.numel() - 3)
    except ZeroDivisionError as err0:
        pass

def inputs(device, call=0):
    return (torch.linspace(0.0, 0.0, 3, device=device),)
COMPILE_OPTIONS = {'export': 'dynamo-aten'}


# fn exported (dynamo-aten) at the call's arguments, the exported graph run on them
def exported(fn):

    def call(*args):
        try:
            example = copy.deepcopy(args)
        except Exception:
            example = args
        return torch._dynamo.export(fn, aten_graph=True)(*example).graph_module(*args)
    return call


if __name__ == "__main__":
    def run(fn):
        args = inputs("cpu")
        try:
            return fn(*args), args
        except Exception as e:  # an exception is the call's result
            return e, args
    out, args = run(f)
    with torch._dynamo.config.patch(install_free_tensors_for_export=False):
        c_out, c_args = run(exported(f))
    assert isinstance(c_out, Exception) == isinstance(out, Exception), f"compiled raised {c_out!r}; eager returned {out!r}"
