"""One program's coverage spectrum: the lines of torch its compiled calls ran, in a fresh process.

`python -m dynfuzz.triage.spectrum JOB.pkl OUT.json` loads a pickled `(case, spec)`, runs the case as a campaign
judges it, with coverage.py measuring torch only while the compiled calls run (compiling included), and writes
`{"findings": [[oracle, class], ...], "eager_ok": bool, "lines": {"torch/<file>.py": [line, ...]}}`.
A fresh process per program, because Dynamo caches (and Python's own) leave a second compile in one process
running other lines than the first: spectra taken in one process would differ for reasons other than the bug.
"""
from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path


def main(job: str, out: str) -> int:
    import coverage
    import torch
    from dynfuzz.run.compilers import make_compiler, quiet_torch_logs
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.buckets import divergence_class

    quiet_torch_logs()
    case, spec = pickle.loads(Path(job).read_bytes())
    root = os.path.dirname(torch.__file__)
    cov = coverage.Coverage(data_file=None, include=[root + "/*"], branch=False)
    compiler = make_compiler(spec)
    compile_fn = compiler.compile

    def measured(fn, options):
        compiled = compile_fn(fn, options)

        def call(*args, **kwargs):
            cov.start()
            try:
                return compiled(*args, **kwargs)
            finally:
                cov.stop()
        return call

    compiler.compile = measured
    result = judge(case, compiler, spec)
    data = cov.get_data()
    lines = {"torch/" + os.path.relpath(f, root): sorted(data.lines(f) or []) for f in data.measured_files()}
    Path(out).write_text(json.dumps({"findings": [[f.oracle, divergence_class(f)] for f in result.findings],
                                     "eager_ok": result.eager_ok, "lines": lines}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
