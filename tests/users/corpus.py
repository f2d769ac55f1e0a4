"""Reproducers users posted in public trackers, adapted to torch 2.13 CPU and seconds, with their truth.

Each case is a notebook cell as its user wrote it, changed only to run here: CUDA to CPU, sizes
and loop counts down, ``backend="eager"`` (the counting backend of the truth script stands in
for it), the result assigned to a name. ``truth`` was established with torch alone, one fresh
process per case, by ``python -m tests.users.truth`` (a counting backend for the graphs,
``torch._dynamo.utils.counters["graph_break"]`` for the breaks, their GB ids from torch's own
``graph_break_registry.json``, and the compiled result compared with an eager run); the
``fix`` figures come from the same script running the fix written by hand. Recorded on torch
2.13.0+cpu. ``expect`` is what nstviz must say of it (checked by ``test_corpus.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """One reproducer: where it was posted, the cell, what torch does with it, what nstviz must say."""

    name: str
    link: str
    source: str
    graphs: int
    """Dynamo graphs as written (the counting backend)."""
    gb_ids: tuple[str, ...]
    """Distinct graph-break GB ids as written, sorted."""
    skipped: bool = False
    """Dynamo gave a frame up after a break ("Skipping the function/frame" in the graph-break log)."""
    equal: bool = True
    """The compiled result equals eager's (type, dtype and values)."""
    fix: str = ""
    """The fix written by hand (a decorator, a config flag, a rewrite), or ''."""
    fix_graphs: int | None = None
    """Dynamo graphs with the fix, and no break left (None: no fix recorded)."""
    expect: dict = field(default_factory=dict)
    """What nstviz must say: ``skipped`` (the headline's skipped-frame text), ``compared``
    (output paths compared), ``nonstrict`` (names to mark) with ``nonstrict_graphs``, ``auto``
    with ``recommended_graphs``."""


CASES: tuple[Case, ...] = (
    Case(
        name="explain_toy_example",
        link="https://github.com/pytorch/torchdynamo/pull/895",
        source='''
import torch

@torch.compile(backend="eager")
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    print("woo")
    if b.sum() < 0:
        b = b * -1
    return x * b

out = toy_example(torch.linspace(-1, 1, 10), torch.linspace(-2, 1, 10))
''',
        graphs=3,
        gb_ids=("GB0059", "GB0170"),
    ),
    Case(
        name="data_dependent_branch_lt",
        link="https://github.com/pytorch/torchdynamo/issues/1883",
        source='''
import torch

@torch.compile(backend="eager")
def toy_example(a, b):
    x = torch.add(a, 33)
    y = x.sum()
    if y < 0:
        x = torch.add(x, 55)
    x = torch.add(x, b)
    return x

out = toy_example(torch.linspace(-1, 1, 10), torch.linspace(-2, 1, 10))
''',
        graphs=2,
        gb_ids=("GB0170",),
        fix="x = torch.where(y < 0, torch.add(x, 55), x)",
        fix_graphs=1,
        expect={"auto": True, "recommended_graphs": 1},
    ),
    Case(
        name="explain_sum_branch",
        link="https://github.com/Lightning-AI/lightning-thunder/issues/1810",
        source='''
import torch

@torch.compile(backend="eager")
def fn(x):
    if x.sum() > 0:
        return x * x
    else:
        return x

out = fn(torch.linspace(-1, 2, 9).reshape(3, 3))
''',
        graphs=2,
        gb_ids=("GB0170",),
    ),
    Case(
        name="class_inside_compiled_fn",
        link="https://github.com/pytorch/pytorch/issues/161562",
        source='''
import torch

@torch.compile(backend="eager")
def fn(x):
    y = x + 10

    class Foo:
        def __init__(self, x):
            self.x = x

    f = Foo(x)
    return f.x - y

out = fn(torch.tensor([1.0]))
''',
        graphs=2,
        gb_ids=("GB8977",),
        fix="@torch._dynamo.nonstrict_trace under @torch.compile",
        fix_graphs=1,
        expect={"nonstrict": ("fn",), "nonstrict_graphs": 1},
    ),
    Case(
        name="graph_break_in_loop_tacotron2",
        link="https://github.com/pytorch/pytorch/pull/88857",
        source='''
import torch

def inner(x):
    return torch.sin(x)

@torch.compile(backend="eager")
def fn(x):
    for _ in range(3):
        inner(x)
        torch._dynamo.graph_break()
    return x

out = fn(torch.ones(4))
''',
        graphs=1,
        gb_ids=("GB0025",),
        skipped=True,
        expect={"skipped": "Dynamo skipped the frame fn: a break inside a loop (GB7000)"},
    ),
    Case(
        name="print_in_loop_skips_frame",
        link="https://github.com/pytorch/pytorch/pull/116981",
        source='''
import torch

def foo(x, y):
    z = x * y
    for i in range(3):
        z = z * y
        print(z)
    return z

a = torch.linspace(-1, 1, 4).reshape(2, 2)
b = torch.linspace(0.5, 2, 4).reshape(2, 2)
foo = torch._dynamo.optimize("eager")(foo)
out = foo(a, b)
''',
        graphs=0,
        gb_ids=("GB0059",),
        skipped=True,
        expect={"skipped": "Dynamo skipped the frame foo: a break inside a loop (GB7000)"},
    ),
    Case(
        name="numpy_in_numpy_out_print",
        link="https://github.com/pytorch/pytorch/issues/109604",
        source='''
import numpy as np
import torch

@torch.compile(backend="eager")
def fn(x):
    x = x ** 2
    print("HI")
    return 2 * x

out = fn(np.arange(8))
''',
        graphs=2,
        gb_ids=("GB0059",),
        expect={"compared": ("out",)},
    ),
    Case(
        name="numpy_astype_int",
        link="https://github.com/pytorch/pytorch/issues/105052",
        source='''
import numpy as np
import torch

@torch.compile(backend="eager")
def f(x):
    y = x.astype(int)
    return y

x = np.ones(3, dtype="float64")
out = f(x)
''',
        graphs=1,
        gb_ids=(),
        expect={"compared": ("out",)},
    ),
    Case(
        name="numpy_len_of_array",
        link="https://github.com/pytorch/pytorch/issues/105054",
        source='''
import numpy as np
import torch

y_glob = np.array([[1, 2, 3], [4, 5, 6]])

@torch.compile(backend="eager")
def av(x):
    v = x.sum() / len(x)
    return v

out = av(y_glob)
''',
        graphs=1,
        gb_ids=(),
        equal=False,  # compiled: a float32 0-d ndarray; eager: np.float64 (both 10.5)
        expect={"compared": ("out",)},
    ),
    Case(
        name="item_scale",
        link="https://github.com/pytorch/pytorch/issues/196198",
        source='''
import torch

def fn(x):
    scale = x.sum().item()
    return x * scale + 1

compiled = torch.compile(fn, backend="eager")
out = compiled(torch.tensor([1.0, 2.0, 4.0]))
''',
        graphs=2,
        gb_ids=("GB0124",),
        fix="torch._dynamo.config.capture_scalar_outputs = True",
        fix_graphs=1,
        expect={"auto": True, "recommended_graphs": 1},
    ),
    Case(
        name="item_then_mul",
        link="https://github.com/pytorch/pytorch/issues/163798",
        source='''
import torch

@torch.compile(fullgraph=False, backend="eager")
def func2(a):
    u0 = a.item()
    return a * u0

out = func2(torch.tensor([3]))
''',
        graphs=1,
        gb_ids=("GB0124",),
    ),
    Case(
        name="sum_item_add",
        link="https://github.com/pytorch/pytorch/issues/158083",
        source='''
import torch

@torch.compile(backend="eager")
def f(x):
    y = x.sum()
    return x + y.item()

x = torch.ones(3, 3)
res = f(x)
''',
        graphs=2,
        gb_ids=("GB0124",),
        fix="torch._dynamo.config.capture_scalar_outputs = True",
        fix_graphs=1,
    ),
)
