"""PyTorch's own ``test_nonstrict_trace_*`` tests, rewritten as notebook cells for nstviz.

Source: pytorch/pytorch ``test/dynamo/test_decorators.py`` at commit
0099a913b519885ee1f62145749d72ffffaebe0f (the one version of that file with the
``nonstrict_trace`` family that the reference index holds at a commit; it uses
``torch._opaque_base``, which torch 2.13 has and 2.14 does not, so it is the 2.13-era file;
the 2.14 file is not in the index: the two opaque-type tests use 2.14's API there, see
``torch_nonstrict_opaque``; the other tests run unchanged on both). Every
``test_nonstrict_trace_*`` method of ``DecoratorTests`` is here, plus
``test_nonstrict_newly_constructed_trace_register_constant_type_error`` (same family, its name
lacks the ``_trace`` prefix), in the order of the file.

How each test was rewritten (``tests/capture/test_torch_nonstrict.py`` runs them):

- The ``@torch._dynamo.nonstrict_trace`` decorator is removed; nstviz marks the function
  instead (``Case.nonstrict``). Tests whose subject is the call-site form
  (``torch._dynamo.nonstrict_trace(trace_me)(x)`` inside the compiled function) keep it as
  written; for those that work, nstviz's ``baseline="strict"`` lifts the mark in the baseline.
- The body of the test method is the cell. ``self.register_pytree_node(...)`` becomes a
  call of ``register_pytree_node`` (put in the cell's namespace by the test, registered with
  torch's Python pytree and deregistered after the test, as torch's
  ``PytreeRegisteringTestCase`` does).
- ``torch.compile(..., fullgraph=True, backend="aot_eager")`` is kept (nstviz replaces the
  backend by its recording one; ``fullgraph``/``dynamic`` stay). A ``CompileCounter`` backend
  becomes ``"aot_eager"``: nstviz counts the compiles.
- The compiled call is the ``{call}`` placeholder: the test puts it in the cell as written
  (uncaught) or inside ``try: ... except Exception as e: print(e)`` (caught), as the seed
  document writes it. ``ref = fn(...)``, torch's eager reference, stays in the cell.
- torch's own assertions become the expectations: ``self.assertEqual(ref, res)`` (and the
  side-effect checks ``d0 == d1``, ``p1.x == p2.x``) on the namespace after the run;
  ``assertIn(msg, str(e))`` is ``Case.refusal``; frame counts are compile counts.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

_POINT = '''
class Point:
    x: torch.Tensor
    y: torch.Tensor

    def __init__(self, x, y):
        self.x = x
        self.y = y
'''

_POINT_TENSOR = '''
class PointTensor:
    p: Point
    t: torch.Tensor

    def __init__(self, p, t):
        self.p = p
        self.t = t
'''

_REGISTER_POINT = '''
register_pytree_node(
    Point,
    lambda p: ((p.x, p.y), ()),
    lambda xy, _: Point(xy[0], xy[1]),
    serialized_type_name=f"{Point.__module__}.{Point.__qualname__}",
)
'''

_REGISTER_POINT_TENSOR = '''
register_pytree_node(
    PointTensor,
    lambda pt: ((pt.p, pt.t), ()),
    lambda pt, _: PointTensor(pt[0], pt[1]),
    serialized_type_name=f"{PointTensor.__module__}.{PointTensor.__qualname__}",
)
'''


@dataclasses.dataclass(frozen=True)
class Case:
    """One torch test as a cell.

    Attributes:
        name: the torch test method.
        source: the cell, with ``{call}`` where the compiled call goes.
        call: the compiled call (one statement; the caught form wraps it in try/except).
        outcome: ``"works"`` (torch asserts the compiled result equals eager), ``"refuses"``
            (torch asserts ``Unsupported`` with ``refusal`` in its message), ``"breaks"``
            (torch asserts a graph break: ``test_nonstrict_trace_no_action_at_a_distance``).
        nonstrict: what nstviz marks instead of the decorator.
        baseline: ``"strict"`` for the call-site forms (lift the code's own mark).
        refusal: the text torch's test asserts is in the error.
        equal: pairs of names torch asserts equal after the call (``ref``/``res`` and side effects).
        remedy: the user class whose pytree registration makes a refusal compile (the advisor's remedy).
        compiles: Dynamo compiles of the working run (torch's frame counts), when not 1.
    """

    name: str
    source: str
    call: str
    outcome: Literal["works", "refuses", "breaks"]
    nonstrict: tuple[str, ...] = ("trace_me",)
    baseline: Literal["as_written", "strict"] = "as_written"
    refusal: str = ""
    equal: tuple[tuple[str, str], ...] = (("ref", "res"),)
    remedy: str | None = None
    compiles: int = 1

    def cell(self, caught: bool) -> str:
        """The cell with the compiled call uncaught, or caught and printed as the seed does."""
        call = self.call
        if caught:
            call = f"try:\n    {call}\nexcept Exception as e:\n    print(e)"
        return "import torch\n" + self.source.replace("{call}", call)


CASES: tuple[Case, ...] = (
    Case(
        "test_nonstrict_trace_tensor_args",
        '''
def trace_me(x, y, z):
    torch._dynamo.graph_break()
    return x * y + z

def fn(x, y):
    t0 = x + 1
    t1 = trace_me(x, y, t0)
    t2 = t1 + y
    return t0 * t2

x, y = torch.randn(10), torch.randn(10)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, y)
{call}
''',
        "res = opt_fn(x, y)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_pre_existing_dict",
        '''
def trace_me(x, d):
    torch._dynamo.graph_break()
    return x * d["a"]

def fn(x, d):
    t0 = trace_me(x, d)
    return t0 + 1

x = torch.randn(10)
d = {"a": 2}
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, d)
{call}
''',
        "res = opt_fn(x, d)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_newly_constructed_dict_with_side_effects",
        '''
def trace_me(x, d):
    torch._dynamo.graph_break()
    return x * d["a"]

def fn(x):
    d = {}
    d["a"] = 2
    t0 = trace_me(x, d)
    return t0 + 1

x = torch.randn(10)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x)
{call}
''',
        "res = opt_fn(x)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_pre_existing_dict_with_side_effects",
        '''
def trace_me(x, d):
    torch._dynamo.graph_break()
    return x * d["a"]

def fn(x, d):
    d["a"] = x + 1
    t0 = trace_me(x, d)
    return t0 + 2

x = torch.randn(10)
d0 = {"a": 0}
d1 = dict(d0)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, d0)
{call}
''',
        "res = opt_fn(x, d1)",
        "works",
        equal=(("ref", "res"), ("d0", "d1")),
    ),
    Case(
        "test_nonstrict_trace_pre_existing_custom_class",
        _POINT + _REGISTER_POINT + '''
def trace_me(p):
    torch._dynamo.graph_break()
    return p.x * p.y

def fn(p):
    res = trace_me(p)
    return res, p.x, p.y

p = Point(torch.ones(10), torch.ones(1))
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(p)
{call}
''',
        "res = opt_fn(p)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_pre_existing_custom_class_with_side_effects",
        _POINT + _REGISTER_POINT + '''
def trace_me(p):
    torch._dynamo.graph_break()
    return p.x * p.y

def fn(p):
    p.x = p.x + 1
    p.y = p.y + 2
    res = trace_me(p)
    return res, p.x, p.y

p1 = Point(torch.ones(10), torch.ones(1))
p2 = Point(torch.ones(10), torch.ones(1))
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(p1)
{call}
''',
        "res = opt_fn(p2)",
        "works",
        equal=(("ref", "res"), ("p1.x", "p2.x"), ("p1.y", "p2.y")),
    ),
    Case(
        "test_nonstrict_trace_newly_constructed_custom_class_with_side_effects",
        _POINT + _REGISTER_POINT + '''
def trace_me(p):
    torch._dynamo.graph_break()
    return p.x * p.y

def fn(x, y):
    p = Point(x, y)
    p.x = p.x + 1
    p.y = p.y + 2
    res = trace_me(p)
    return res, p.x, p.y

x, y = torch.ones(10), torch.ones(1)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, y)
{call}
''',
        "res = opt_fn(x, y)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_nested_custom_class",
        _POINT + _POINT_TENSOR + _REGISTER_POINT_TENSOR + _REGISTER_POINT + '''
def trace_point(p):
    torch._dynamo.graph_break()
    return p.x * p.y

def trace_point_tensor(pt):
    torch._dynamo.graph_break()
    return pt.t + trace_point(pt.p)

def fn(x, y):
    p = Point(x, y)
    t = x + y
    pt = PointTensor(p, t)
    res = trace_point_tensor(pt)
    return res

x, y = torch.ones(10), torch.ones(1)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, y)
{call}
''',
        "res = opt_fn(x, y)",
        "works",
        nonstrict=("trace_point_tensor",),
    ),
    Case(
        "test_nonstrict_trace_pre_existing_register_constant_type_guard",
        '''
# class State(torch._opaque_base.OpaqueBase) ... register_opaque_type(State, typ="value"):
# defined and registered once, on import (torch_nonstrict_opaque says how on torch 2.14)
from tests.capture.cases.torch_nonstrict_opaque import State

def trace_me(x, s):
    return x * s.get_num()

@torch.compile(fullgraph=True, backend="aot_eager")
def fn(x, s):
    res = trace_me(x, s)
    return res

x = torch.ones(10)
ref = trace_me(x, State(42)), trace_me(x, State(41))
{call}
''',
        # two calls with State(42) (one compile), then State(41) (a recompile): torch's frame counts 1, 1, 2
        "res = fn(x, State(42)), fn(x, State(42)), fn(x, State(41))",
        "works",
        equal=(("(ref[0], ref[0], ref[1])", "res"),),
        compiles=2,
    ),
    Case(
        "test_nonstrict_trace_int_and_float_output",
        '''
def trace_me(x):
    torch._dynamo.graph_break()
    return len(x.shape), 0.42

def fn(x):
    n1, n2 = trace_me(x)
    return x * n1 + n2

x = torch.randn(10)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x)
{call}
''',
        "res = opt_fn(x)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_tuple_and_sym_int_output",
        '''
def trace_me(x):
    torch._dynamo.graph_break()
    return x + 1, x.size(0)

def fn(x):
    t0, n = trace_me(x)
    return t0 * n

x = torch.randn(10)
opt_fn = torch.compile(fn, dynamic=True, fullgraph=True, backend="aot_eager")

ref = fn(x)
{call}
''',
        "res = opt_fn(x)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_inside_compiled_function",
        '''
def trace_me(x):
    torch._dynamo.graph_break()
    return x + 42

def fn(x):
    res = torch._dynamo.nonstrict_trace(trace_me)(x)
    return res + 1

x = torch.randn(10)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x)
{call}
''',
        "res = opt_fn(x)",
        "works",
        nonstrict=(),
        baseline="strict",
    ),
    Case(
        "test_nonstrict_trace_inside_compiled_function_kwarg",
        '''
def trace_me(x):
    torch._dynamo.graph_break()
    return x + 42

def fn(x):
    res = torch._dynamo.nonstrict_trace(traceable_fn=trace_me)(x)
    return res + 1

x = torch.randn(10)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x)
{call}
''',
        "res = opt_fn(x)",
        "works",
        nonstrict=(),
        baseline="strict",
    ),
    Case(
        "test_nonstrict_trace_on_method",
        '''
class Num:
    def __init__(self, n):
        self.n = n

    def trace_me(self, t):
        torch._dynamo.graph_break()
        return t + self.n

register_pytree_node(
    Num,
    lambda num: ((num.n,), ()),
    lambda n, _: Num(n[0]),
    serialized_type_name=f"{Num.__module__}.{Num.__qualname__}",
)

def fn(x, n):
    num = Num(n)
    return num.trace_me(x)

x, n = torch.randn(10), 42
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, n)
{call}
''',
        "res = opt_fn(x, n)",
        "works",
        nonstrict=("Num.trace_me",),
    ),
    Case(
        "test_nonstrict_trace_captured_external_tensor",
        '''
cst = torch.ones(1)

def trace_me(x, y):
    torch._dynamo.graph_break()
    return x * y + cst

def fn(x, y):
    return trace_me(x, y)

x, y = torch.randn(10), torch.randn(10)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, y)
{call}
''',
        "res = opt_fn(x, y)",
        "works",
    ),
    Case(
        "test_nonstrict_trace_no_action_at_a_distance",
        '''
def trace_me(x):
    torch._dynamo.graph_break()
    return x + 42

# No effect on traceability of `trace_me`
torch._dynamo.nonstrict_trace(trace_me)

def fn(x):
    res = trace_me(x)
    return res + 1

x = torch.randn(10)
opt_fn = torch.compile(fn, backend="aot_eager")

ref = fn(x)
{call}
''',
        "res = opt_fn(x)",
        "breaks",
        nonstrict=(),
        compiles=2,
    ),
    Case(
        "test_nonstrict_trace_inside_compiled_function_error",
        '''
@torch.compile(fullgraph=True, backend="aot_eager")
def fn(x, y):
    def trace_me(x, y):
        torch._dynamo.graph_break()
        return x * y

    res = torch._dynamo.nonstrict_trace(trace_me)(x, y)
    return res + 1

{call}
''',
        "res = fn(torch.ones(10), torch.ones(1))",
        "refuses",
        nonstrict=(),
        refusal=(
            "Applying `nonstrict_trace` to function <trace_me>; however, `nonstrict_trace` currently requires "
            "the function to be defined outside `torch.compile` region."
        ),
        equal=(),
    ),
    Case(
        "test_nonstrict_trace_custom_class_error",
        _POINT + '''
def trace_me(p):
    torch._dynamo.graph_break()
    return p.x * p.y

@torch.compile(fullgraph=True, backend="aot_eager")
def fn(p):
    res = trace_me(p)
    return res + 1

p = Point(torch.ones(10), torch.ones(1))
{call}
''',
        "res = fn(p)",
        "refuses",
        refusal="Invalid input type for nonstrict_trace-ed function",
        equal=(),
        remedy="Point",
    ),
    Case(
        "test_nonstrict_trace_nested_custom_class_error",
        _POINT + _POINT_TENSOR + _REGISTER_POINT_TENSOR + '''
def trace_point(p):
    torch._dynamo.graph_break()
    return p.x * p.y

def trace_point_tensor(pt):
    torch._dynamo.graph_break()
    return pt.t + trace_point(pt.p)

@torch.compile(fullgraph=True, backend="aot_eager")
def fn(x, y):
    p = Point(x, y)
    t = x + y
    pt = PointTensor(p, t)
    res = trace_point_tensor(pt)
    return res

{call}
''',
        "res = fn(torch.ones(10), torch.ones(1))",
        "refuses",
        nonstrict=("trace_point_tensor",),
        refusal="Invalid input type for nonstrict_trace-ed function",
        equal=(),
        remedy="Point",
    ),
    Case(
        "test_nonstrict_trace_custom_class_output_error",
        _POINT + '''
def trace_me(x):
    torch._dynamo.graph_break()
    return Point(x, x + 1)

@torch.compile(fullgraph=True, backend="aot_eager")
def fn(x):
    p = trace_me(x)
    return p.x * p.y

x = torch.ones(10)
{call}
''',
        "res = fn(x)",
        "refuses",
        refusal="Unsupported output type for nonstrict_trace-ed function",
        equal=(),
        remedy="Point",
    ),
    Case(
        "test_nonstrict_newly_constructed_trace_register_constant_type_error",
        '''
# class State(torch._opaque_base.OpaqueBase) ... register_opaque_type(State, typ="reference"):
# defined and registered once, on import (torch_nonstrict_opaque says how on torch 2.14)
from tests.capture.cases.torch_nonstrict_opaque import RefState as State

def trace_me(x, s):
    return x * s.get_num()

@torch.compile(fullgraph=True, backend="aot_eager")
def fn(x):
    s = State(10)
    res = trace_me(x, s)
    return res

x = torch.ones(10)
{call}
''',
        "res = fn(x)",
        "refuses",
        refusal="An opaque object was created in the middle of the program.",
        equal=(),
    ),
    Case(
        "test_nonstrict_trace_object_in_context_error",
        _POINT + _POINT_TENSOR + '''
register_pytree_node(
    PointTensor,
    lambda pt: ((pt.t,), pt.p),
    lambda ts, p: PointTensor(p, ts[0]),
    serialized_type_name=f"{PointTensor.__module__}.{PointTensor.__qualname__}",
)

def trace_me(pt):
    torch._dynamo.graph_break()
    return pt.t + pt.p.x * pt.p.y

@torch.compile(fullgraph=True, backend="aot_eager")
def fn(x, y):
    p = Point(x, y)
    t = x + y
    pt = PointTensor(p, t)
    res = trace_me(pt)
    return res

x, y = torch.ones(10), torch.ones(1)
{call}
''',
        "res = fn(x, y)",
        "refuses",
        refusal="Invalid use of pytree_flatten with nonstrict_trace-ed function",
        equal=(),
    ),
    Case(
        "test_nonstrict_trace_nn_module_dict_input",
        '''
def trace_me(x, modules):
    torch._dynamo.graph_break()
    return modules["a"](x) + modules["b"](x)

def fn(x, modules):
    return trace_me(x, modules) + 1

linear_a = torch.nn.Linear(4, 4)
linear_b = torch.nn.Linear(4, 4)
modules = {"a": linear_a, "b": linear_b}
x = torch.randn(4, 4)
opt_fn = torch.compile(fn, fullgraph=True, backend="aot_eager")

ref = fn(x, modules)
{call}
''',
        "res = opt_fn(x, modules)",
        "works",
    ),
)
