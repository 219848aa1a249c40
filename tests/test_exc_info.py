"""The innermost torch frame names the file inside the torch package, whatever folder torch lives in."""
from dynfuzz.run.execute import exc_info


def _raise_from(filename: str) -> BaseException:
    code = compile("def boom():\n    raise AssertionError('x')\n", filename, "exec")
    ns: dict = {}
    exec(code, ns)
    try:
        ns["boom"]()
    except AssertionError as e:
        return e
    raise RuntimeError("did not raise")


def test_torch_frame_is_relative_to_the_torch_package_even_under_a_folder_named_torch():
    e = _raise_from("/opt/torch/.venv/lib/python3.12/site-packages/torch/_dynamo/symbolic_convert.py")
    assert exc_info(e).torch_frame == "torch/_dynamo/symbolic_convert.py:boom"


def test_frames_outside_torch_are_not_torch_frames():
    assert exc_info(_raise_from("/home/user/project/model.py")).torch_frame is None


def _compiled_error(fn, *args) -> BaseException:
    import torch

    try:
        torch.compile(fn, backend="eager")(*args)
    except Exception as e:  # noqa: BLE001 - the exception is what the test reads
        return e
    raise RuntimeError("did not raise")


def test_an_error_the_program_raised_under_the_compiled_frame_is_outside_torch_one_torch_raised_is_not():
    """Note [An error the program raised is not torch's]: the program's own line failing under the compiled frame's
    wrapper is raised outside torch; an error raised inside torch's code (a fake-tensor shape check while tracing)
    is not, nor is one raised in a torch module the program called."""
    import torch

    def program(x):
        y = x + 1
        return y, (1).device

    def shapes(x):
        return torch.nn.functional.linear(x, torch.ones(3, 3))

    outside = exc_info(_compiled_error(program, torch.ones(2)))
    assert outside.type == "AttributeError" and outside.outside_torch
    assert outside.torch_frame in ("torch/_dynamo/eval_frame.py:compile_wrapper", "torch/_dynamo/eval_frame.py:_fn")
    assert not exc_info(_compiled_error(shapes, torch.ones(2))).outside_torch
    assert not exc_info(_raise_from("/x/site-packages/torch/_dynamo/symbolic_convert.py")).outside_torch
    assert exc_info(_raise_from("/home/user/project/model.py")).outside_torch

    class Broken(torch.nn.Module):
        def forward(self, x):
            return x.no_such_attribute

    try:
        Broken()(torch.ones(1))
    except AttributeError as e:  # raised in the program, but torch's module call is above it: not only wrappers
        assert not exc_info(e).outside_torch


def test_torch_dynamo_export_s_entry_point_is_not_part_of_a_crash_s_identity():
    """The same MATCH_SEQUENCE assertion reached through `torch._dynamo.export` (`eval_frame.py:inner` on its
    traceback) and through `torch.compile` is one crash: two 2.5.1 runs filed it under both frame lists, and the
    entry point's list was never minimized."""
    ns: dict = {}
    exec(compile("def MATCH_SEQUENCE():\n    raise AssertionError('x')\n",
                 "/v/site-packages/torch/_dynamo/symbolic_convert.py", "exec"), ns)
    exec(compile("def inner(f):\n    return f()\n", "/v/site-packages/torch/_dynamo/eval_frame.py", "exec"), ns)
    try:
        ns["inner"](ns["MATCH_SEQUENCE"])
    except AssertionError as e:
        assert exc_info(e).crash_frames == ("torch/_dynamo/symbolic_convert.py:MATCH_SEQUENCE",)
