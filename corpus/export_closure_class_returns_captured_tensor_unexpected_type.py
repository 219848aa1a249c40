# [exceptions/crash] call 0: compiler crashed with Unsupported
# torch 2.14.1, torch._dynamo.export(aten_graph=True) at the call's arguments, the exported graph run on them: exits 1 while the bug is present, 0 once fixed.
import copy
import torch

def make_pw0():
    v0 = torch.tensor(0.0)

    def bump(t):
        pass

    class Reader:

        def run(self, fn, t):
            return v0
    return (bump, Reader)
PW_WRITE0, PW_READER0 = make_pw0()

def f(x):
    t0 = PW_READER0().run(PW_WRITE0, x)

def inputs(device, call=0):
    return (0.0,)
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
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("eager_copy", __file__)
    eager = sys.modules["eager_copy"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eager)
    args = eager.inputs("cpu")
    out = eager.f(*args)
    with torch._dynamo.config.patch(install_free_tensors_for_export=False):
        c_args = inputs("cpu")
        c_out = exported(f)(*c_args)
    tensors = lambda o: [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
    torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True, msg=lambda m: "eager vs compiled: " + m)
