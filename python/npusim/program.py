"""A trace built in Python (docs/python.md, "Building a program").

Program mirrors the trace format (docs/spec/trace-format.md) one to one:
every method appends exactly the JSON object the format defines, with the
keys in the order given, and nothing else. Program.to_json() is the trace's
text; a file holding that text (Program.save) is the program's JSON twin,
and the two give byte-identical outputs (the trace digest in summary.json
is the digest of that text).
"""

import contextlib
import json

__all__ = ["Program", "In", "InOut", "Out", "OutExisting", "NoDep", "output", "dumps"]


def dumps(trace):
    """The text npusim reads for a trace given as a dict or a Program."""
    return json.dumps(trace, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _arg(tag, name, extra):
    a = {tag: name}
    a.update(extra)
    return a


def In(name, **extra):
    """{"in": NAME, ...}: INPUT (extra: offset, shape, manual_dep)."""
    return _arg("in", name, extra)


def InOut(name, **extra):
    """{"inout": NAME, ...}: INOUT."""
    return _arg("inout", name, extra)


def Out(name, shape, dtype, **extra):
    """{"out": NAME, "shape": [...], "dtype": D}: a new buffer bound to NAME."""
    a = {"out": name, "shape": list(shape), "dtype": dtype}
    a.update(extra)
    return a


def OutExisting(name, **extra):
    """{"out_existing": NAME, ...}: OUTPUT_EXISTING."""
    return _arg("out_existing", name, extra)


def NoDep(name, **extra):
    """{"no_dep": NAME, ...}: NO_DEP."""
    return _arg("no_dep", name, extra)


def output(bind, shape, dtype):
    """One of alloc's outputs: {"bind", "shape", "dtype"}."""
    return {"bind": bind, "shape": list(shape), "dtype": dtype}


class Program:
    """An orchestration program: kernels, tensors and the program's operations.

    p = Program("chain")
    p.kernel("ADD", func_id=1, core="aiv", duration={"ns": 2000})
    p.tensor("x", shape=[64, 128], dtype="fp32")
    with p.loop("i", to=8):
        p.submit("ADD", In("x"), Out("t", [64, 128], "fp32"))
    """

    def __init__(self, name=None, run=None, **top):
        self._doc = {"npusim_trace": 1}
        if name is not None:
            self._doc["name"] = name
        self._doc.update(top)  # x_about and other top-level keys, in order
        if run is not None:
            self._doc["run"] = dict(run)
        self._doc["kernels"] = {}
        self._doc["tensors"] = {}
        self._doc["program"] = []
        self._body = [self._doc["program"]]

    @property
    def name(self):
        return self._doc.get("name")

    # ---- the top level --------------------------------------------------
    def kernel(self, name, **fields):
        """kernels.NAME: func_id, core, duration, phases... as the format has them."""
        self._doc["kernels"][name] = fields
        return self

    def tensor(self, name, shape, dtype, **fields):
        """tensors.NAME: an external tensor (an orchestration argument)."""
        t = {"shape": list(shape), "dtype": dtype}
        t.update(fields)
        self._doc["tensors"][name] = t
        return self

    # ---- operations -----------------------------------------------------
    def op(self, op, **fields):
        """Any operation: {"op": OP, **fields} (every op of the format, current or new)."""
        o = {"op": op}
        o.update(fields)
        self._body[-1].append(o)
        return o

    @contextlib.contextmanager
    def block(self, op, **fields):
        """An operation with a body: the `with` block's operations go into its "body"."""
        o = self.op(op, **fields)
        o["body"] = []
        self._body.append(o["body"])
        try:
            yield o
        finally:
            self._body.pop()

    def scope(self, site=None, mode=None):
        """with p.scope(): {"op": "scope", ["mode"], ["site"], "body"} (PTO2_SCOPE)."""
        f = {}
        if mode is not None:
            f["mode"] = mode
        if site is not None:
            f["site"] = site
        return self.block("scope", **f)

    def loop(self, var, to, start=None, step=None):
        """with p.loop("i", to=N): {"op": "for", "var", ["from"], "to", ["step"], "body"}."""
        f = {"var": var}
        if start is not None:
            f["from"] = start
        f["to"] = to
        if step is not None:
            f["step"] = step
        return self.block("for", **f)

    def submit(self, kernel, *args, **fields):
        """{"op": "submit", "kernel", "args": [In(...), Out(...)...], **fields} (id, block_num, deps...)."""
        return self.op("submit", kernel=kernel, args=list(args), **fields)

    def dummy(self, *args, **fields):
        """{"op": "dummy", ["args"], **fields}."""
        if args:
            fields = {"args": list(args), **fields}
        return self.op("dummy", **fields)

    def alloc(self, *outputs, **fields):
        """{"op": "alloc", "outputs": [output(...)...], **fields}."""
        return self.op("alloc", outputs=list(outputs), **fields)

    def view(self, bind, of, offset, shape):
        """{"op": "view", "bind", "of", "offset", "shape"}."""
        return self.op("view", bind=bind, of=of, offset=list(offset), shape=list(shape))

    def let(self, var, value):
        """{"op": "let", "var", "value"}."""
        return self.op("let", var=var, value=value)

    def read(self, tensor, index, bind=None):
        """{"op": "read", "tensor", "index", ["bind"]}."""
        f = {"tensor": tensor, "index": list(index)}
        if bind is not None:
            f["bind"] = bind
        return self.op("read", **f)

    # ---- the trace --------------------------------------------------------
    def to_dict(self):
        """The trace as a dict (a deep copy)."""
        return json.loads(json.dumps(self._doc))

    def to_json(self):
        """The trace's text: what npusim reads for this program."""
        return dumps(self._doc)

    def save(self, path):
        """Writes the program's JSON twin (to_json) to `path`; returns path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())
        return path
