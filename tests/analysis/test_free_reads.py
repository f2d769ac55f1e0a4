import functools
import random
import time

import numpy as np
import pytest
import torch
from torch import nn

from nstviz.capture.reads import find_non_input_reads

SCALE = torch.tensor(2.0)
CFG = {"k": 3.0}
OFFSET = 0.5
DEVICE = torch.device("cpu")
CACHE: list = []
COUNTER = 0


def by_name(reads):
    return {(r.name, r.kind): r for r in reads}


def inner_reads_offset(x):
    return x + OFFSET


def helper(x):
    global COUNTER
    y = x * SCALE + CFG["k"]
    y = inner_reads_offset(y).to(DEVICE)
    y = y + float(np.random.rand()) + random.random() + time.time() * 0
    CACHE.append(1)
    COUNTER = 1
    return torch.sin(y)


def pure(x, w):
    return torch.nn.functional.relu(x @ w) + len(x.shape)


def test_globals_randomness_and_mutations_are_found_with_lines():
    reads = by_name(find_non_input_reads(helper))
    src_line = helper.__code__.co_firstlineno
    assert reads[("SCALE", "global")].line == src_line + 2
    assert "rebind SCALE later" in reads[("SCALE", "global")].detail
    assert "in-place updates are seen" in reads[("SCALE", "global")].detail
    assert "change an entry" in reads[("CFG", "global")].detail
    assert ("np.random.rand", "randomness") in reads
    assert ("random.random", "randomness") in reads
    assert ("time.time", "randomness") in reads
    assert ("CACHE", "nonlocal_mutation") in reads
    assert ".append()" in reads[("CACHE", "nonlocal_mutation")].detail
    assert ("COUNTER", "nonlocal_mutation") in reads
    assert reads[("COUNTER", "nonlocal_mutation")].detail.startswith("assigns the global `COUNTER`: ")
    # followed into the callee, and says so
    offset = reads[("OFFSET", "global")]
    assert "inner_reads_offset" in offset.detail and "float (0.5)" in offset.detail
    assert offset.line == src_line + 3  # the line of helper that calls inner_reads_offset
    # modules, functions, classes, builtins, dtypes/devices are not reported
    names = {r.name for r in reads.values()}
    assert not names & {"torch", "np", "inner_reads_offset", "float", "DEVICE", "torch.sin"}


def test_pure_function_reads_nothing():
    assert find_non_input_reads(pure) == ()


def test_closure_cells_and_nonlocal_assignment():
    def make():
        table = {"a": 1}
        w = torch.ones(2)
        calls = 0

        def f(x):
            nonlocal calls
            calls += 1
            return x * w + table["a"]

        return f

    reads = by_name(find_non_input_reads(make()))
    assert ("calls", "nonlocal_mutation") in reads
    assert reads[("calls", "nonlocal_mutation")].detail.startswith("assigns the nonlocal `calls`: ")
    assert ("w", "closure") in reads and "tensor" in reads[("w", "closure")].detail
    assert ("table", "closure") in reads


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("buf", torch.ones(3))
        self.alpha = 0.5
        self.plain = torch.ones(3)
        self.calls = 0

    def scale(self, x):
        return x * self.alpha

    def stats(self, x):
        self.calls += 1
        if self.training:
            x = x * 2
        return self.scale(x) + self.buf + self.plain + self.lin(x) + self.lin.weight.sum()


def test_self_attributes_of_a_bound_method():
    reads = by_name(find_non_input_reads(Block().stats))
    assert ("self.calls", "nonlocal_mutation") in reads
    assert ("self.plain", "self_attribute") in reads
    assert "model.eval()" in reads[("self.training", "self_attribute")].detail
    alpha = reads[("self.alpha", "self_attribute")]
    assert "float (0.5)" in alpha.detail and "self.scale" in alpha.detail
    names = {r.name for r in reads.values()}
    # parameters, buffers and submodules are lifted into the graph: not reported
    assert not names & {"self.buf", "self.lin", "self.lin.weight", "self.scale"}


def test_self_attributes_of_an_unbound_method_skip_registered_ones():
    reads = find_non_input_reads(Block.stats)
    names = {r.name for r in reads}
    assert {"self.alpha", "self.plain", "self.calls", "self.training"} <= names
    assert "model.eval()" in next(r.detail for r in reads if r.name == "self.training")
    assert not names & {"self.buf", "self.lin"}


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.factor = 3.0
        self.offset = 1.0

    def parts(self, xs):
        offset = self.offset  # a cell here: the comprehension below captures self
        return [x * self.factor + offset for x in xs]


def test_self_reads_inside_comprehensions():
    reads = by_name(find_non_input_reads(Scaled().parts))
    assert ("self.factor", "self_attribute") in reads and ("self.offset", "self_attribute") in reads


def test_wrappers_partials_and_callables_are_unwrapped():
    marked = torch._dynamo.nonstrict_trace(helper)
    assert by_name(find_non_input_reads(marked)).keys() == by_name(find_non_input_reads(helper)).keys()
    part = functools.partial(helper, torch.ones(1))
    assert ("SCALE", "global") in by_name(find_non_input_reads(part))

    class Call:
        def __call__(self, x):
            return x * SCALE

    assert ("SCALE", "global") in by_name(find_non_input_reads(Call()))


def test_builtins_and_c_functions_give_nothing():
    assert find_non_input_reads(torch.sin) == ()
    assert find_non_input_reads(len) == ()
    assert find_non_input_reads(nn.Linear) == ()


def test_global_dict_item_assignment_is_a_mutation():
    code = "TABLE = {}\ndef put(x):\n    TABLE['last'] = x\n    return x\n"
    ns: dict = {}
    exec(code, ns)
    reads = by_name(find_non_input_reads(ns["put"]))
    assert ("TABLE", "nonlocal_mutation") in reads
    assert "item assignment" in reads[("TABLE", "nonlocal_mutation")].detail


# -- the premise, measured on the installed torch -----------------------------------------------


def test_premise_nonstrict_trace_returns_stale_values_for_rebound_globals():
    """Why the Report names these reads: torch 2.13 bakes them in with no guard and no error."""
    ns: dict = {}
    exec(
        "import torch\n"
        "SCALE = torch.tensor(2.0)\n"
        "CFG = {'k': 3.0}\n"
        "def helper(x):\n"
        "    return x * SCALE + CFG['k']\n",
        ns,
    )
    helper = ns["helper"]
    marked = torch._dynamo.nonstrict_trace(helper)
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: marked(x) + 1, backend="aot_eager", fullgraph=True)
    x = torch.ones(3)
    try:
        assert torch.equal(compiled(x), torch.full((3,), 6.0))
        ns["SCALE"] = torch.tensor(5.0)  # rebind the global tensor
        stale = compiled(x)
        assert torch.equal(helper(x) + 1, torch.full((3,), 9.0))  # eager sees the new value
        assert torch.equal(stale, torch.full((3,), 6.0))  # compiled: the old one, no error
        ns["CFG"]["k"] = 100.0  # change a dict entry
        assert torch.equal(compiled(x), torch.full((3,), 6.0))
        assert torch.equal(helper(x) + 1, torch.full((3,), 106.0))
        # ... and these are exactly what the analysis names
        kinds = by_name(find_non_input_reads(helper))
        assert ("SCALE", "global") in kinds and ("CFG", "global") in kinds
    finally:
        torch._dynamo.reset()


def test_premise_eager_backend_calls_the_function_at_run_time_and_inductor_refuses_global_tensors():
    ns: dict = {}
    exec("import torch\nSCALE = torch.ones(2) * 2\ndef helper(x):\n    return x * SCALE\n", ns)
    marked = torch._dynamo.nonstrict_trace(ns["helper"])
    x = torch.ones(2)
    try:
        torch._dynamo.reset()
        compiled = torch.compile(lambda a: marked(a), backend="eager", fullgraph=True)
        assert torch.equal(compiled(x), torch.full((2,), 2.0))
        ns["SCALE"] = torch.ones(2) * 5
        assert torch.equal(compiled(x), torch.full((2,), 5.0))  # eager backend: fresh
        torch._dynamo.reset()
        inductor = torch.compile(lambda a: marked(a), backend="inductor", fullgraph=True)
        with pytest.raises(Exception, match="convert all Tensors to FakeTensors"):
            inductor(x)
    finally:
        torch._dynamo.reset()
    assert "FakeTensors" in by_name(find_non_input_reads(ns["helper"]))[("SCALE", "global")].detail


def test_premise_strict_tracing_guards_the_same_reads():
    ns: dict = {}
    exec("import torch\nSCALE = torch.tensor(2.0)\ndef helper(x):\n    return x * SCALE\n", ns)
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: ns["helper"](x), backend="eager", fullgraph=True)
    x = torch.ones(2)
    try:
        assert torch.equal(compiled(x), torch.full((2,), 2.0))
        ns["SCALE"] = torch.tensor(5.0)
        assert torch.equal(compiled(x), torch.full((2,), 5.0))  # guarded: recompiled
    finally:
        torch._dynamo.reset()


RNG = np.random.default_rng(0)
PYRNG = random.Random(1)


def uses_generators_and_clocks(x):
    import datetime
    import uuid

    a = RNG.random() + PYRNG.random() + time.perf_counter()
    b = datetime.datetime.now()
    c = uuid.uuid4()
    d = torch.randn(3)  # traced as an op: not Python-level randomness
    return x + a + d, b, c


def test_generator_objects_clocks_and_ids_are_randomness():
    reads = by_name(find_non_input_reads(uses_generators_and_clocks))
    randomness = {n for n, k in reads if k == "randomness"}
    assert {"RNG.random", "PYRNG.random", "time.perf_counter"} <= randomness
    assert {"datetime.datetime.now", "uuid.uuid4"} <= randomness  # imported inside the function
    assert not any(n.startswith("torch") for n, _ in reads)


def test_premise_train_eval_mode_is_baked_in_by_nonstrict_trace():
    class Net(nn.Module):
        @torch._dynamo.nonstrict_trace
        def body(self, x):
            return x * 2 if self.training else x

        def forward(self, x):
            return self.body(x)

    net = Net()
    torch._dynamo.reset()
    try:
        compiled = torch.compile(net, backend="aot_eager", fullgraph=True)
        assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 2.0))
        net.eval()
        assert torch.equal(net(torch.ones(2)), torch.ones(2))  # eager: eval mode
        assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 2.0))  # compiled: still training
    finally:
        torch._dynamo.reset()
    assert ("self.training", "self_attribute") in by_name(find_non_input_reads(Net.body))
