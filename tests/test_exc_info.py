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
