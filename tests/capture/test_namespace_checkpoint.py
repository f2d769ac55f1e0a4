import gc
import tracemalloc

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from nstviz.capture.namespace import NamespaceCheckpoint

SETUP = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
x = torch.randn(16, 4)
y = torch.randn(16, 2)
first_row = model[0].weight[0]          # a view of a parameter
losses = []
"""

TRAIN_CELL = """
step = torch.compile(lambda m, a: m(a), backend="eager")
for _ in range(3):
    opt.zero_grad()
    loss = ((step(model, x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
    losses.append(loss.item())
model.eval()
"""


def state_of(ns):
    model, opt, sched = ns["model"], ns["opt"], ns["sched"]
    return {
        "params": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "grads": [None if p.grad is None else p.grad.clone() for p in model.parameters()],
        "opt": repr(opt.state_dict()),
        "sched": sched.state_dict(),
        "losses": list(ns["losses"]),
        "training": model.training,
        "names": {n for n in ns if not n.startswith("__")},  # Dynamo's own globals are left alone
    }


def assert_same_state(a, b):
    assert a["params"].keys() == b["params"].keys()
    for k in a["params"]:
        assert torch.equal(a["params"][k], b["params"][k]), k
    assert len(a["grads"]) == len(b["grads"])
    for ga, gb in zip(a["grads"], b["grads"], strict=True):
        assert (ga is None) == (gb is None)
        if ga is not None:
            assert torch.equal(ga, gb)
    assert a["opt"] == b["opt"]
    assert a["sched"] == b["sched"]
    assert a["losses"] == b["losses"]
    assert a["training"] == b["training"]
    assert a["names"] == b["names"]


@pytest.fixture
def ns():
    namespace: dict = {}
    exec(SETUP, namespace)
    return namespace


def test_underscore_is_an_ordinary_name_outside_ipython():
    ns = {"keep": 1}
    cp = NamespaceCheckpoint(ns)
    exec("for _ in range(2):\n    pass", ns)
    cp.restore()
    assert "_" not in ns


def test_training_cell_run_twice_starts_from_identical_state(ns):
    torch._dynamo.reset()
    ids = {k: id(v) for k, v in ns.items() if not k.startswith("__")}
    param_ids = [id(p) for p in ns["model"].parameters()]
    before = state_of(ns)
    cp = NamespaceCheckpoint(ns)
    exec(TRAIN_CELL, ns)
    first_losses = list(ns["losses"])
    assert ns["opt"].state  # the run really trained
    cp.restore()
    assert_same_state(before, state_of(ns))
    # names the run added are gone, the others are the very same objects
    assert "loss" not in ns and "step" not in ns
    assert {k: id(v) for k, v in ns.items() if not k.startswith("__")} == ids
    assert [id(p) for p in ns["model"].parameters()] == param_ids
    assert ns["first_row"].data_ptr() == ns["model"][0].weight.data_ptr()  # the view still aliases
    exec(TRAIN_CELL, ns)
    assert ns["losses"] == first_losses  # second run: the same numbers
    cp.restore()
    assert_same_state(before, state_of(ns))
    cp.discard()
    with pytest.raises(RuntimeError, match="discarded"):
        cp.restore()


def test_compiled_code_keeps_working_after_restore(ns):
    torch._dynamo.reset()
    exec("f = torch.compile(lambda a: (a * 2).sin(), backend='eager')\nr = f(x)", ns)
    cp = NamespaceCheckpoint(ns)
    exec("r2 = f(x).sum() + f(y).sum()", ns)  # compiles again, installing more Dynamo globals
    cp.restore()
    exec("r3 = f(x)", ns)  # cached code still finds the globals it needs
    assert torch.equal(ns["r3"], ns["r"])


def test_restore_after_a_run_that_started_with_grads_and_optimizer_state(ns):
    exec(TRAIN_CELL, ns)  # now grads, Adam moments and step counts exist
    before = state_of(ns)
    grad_ids = [id(p.grad) for p in ns["model"].parameters()]
    step_ids = [id(s["step"]) for s in ns["opt"].state.values()]
    with NamespaceCheckpoint(ns) as cp:
        exec(TRAIN_CELL.replace("opt.zero_grad()", "opt.zero_grad(set_to_none=True)"), ns)
        cp.restore()
    assert_same_state(before, state_of(ns))
    assert [id(p.grad) for p in ns["model"].parameters()] == grad_ids
    assert [id(s["step"]) for s in ns["opt"].state.values()] == step_ids
    assert all(float(s["step"]) == 3.0 for s in ns["opt"].state.values())


def test_rebound_names_and_parameters_are_restored():
    lin = nn.Linear(2, 2)
    t = torch.ones(3)
    ns = {"lin": lin, "t": t, "n": 1}
    old_weight = lin.weight
    cp = NamespaceCheckpoint(ns)
    ns["t"] = torch.zeros(3)
    ns["n"] = 2
    lin.weight = nn.Parameter(torch.zeros(2, 2))
    lin.extra = 5
    lin.train(False)
    cp.restore()
    assert ns["t"] is t and ns["n"] == 1
    assert lin.weight is old_weight
    assert not hasattr(lin, "extra")
    assert lin.training is True


def test_plain_tensor_attributes_of_modules_are_restored():
    lin = nn.Linear(2, 2)
    lin.cache = torch.zeros(3)
    lin._private_cache = torch.zeros(2)
    ns = {"lin": lin}
    cp = NamespaceCheckpoint(ns, max_data_bytes=0)  # module tensors are state: copied anyway
    lin.cache.add_(1)
    lin._private_cache.add_(1)
    cp.restore()
    assert torch.equal(lin.cache, torch.zeros(3)) and torch.equal(lin._private_cache, torch.zeros(2))


def test_hooks_registered_by_a_run_are_removed():
    lin = nn.Linear(2, 2)
    calls = []
    lin.register_forward_hook(lambda *a: calls.append("kept"))
    ns = {"lin": lin}
    cp = NamespaceCheckpoint(ns)
    lin.register_forward_hook(lambda *a: calls.append("run"))
    lin.register_forward_pre_hook(lambda *a: calls.append("pre"))
    cp.restore()
    lin(torch.ones(2))
    assert calls == ["kept"]


def test_views_shared_parameters_and_requires_grad_leaves():
    base = torch.arange(6.0)
    view = base[2:4]
    shared = nn.Linear(3, 3)
    tied = nn.Sequential(shared, shared)
    leaf = torch.randn(3, requires_grad=True)
    ns = {"base": base, "view": view, "tied": tied, "leaf": leaf}
    cp = NamespaceCheckpoint(ns)
    # one copy for base+view, one for the shared weight and bias, one for leaf
    expected = base.nbytes + shared.weight.nbytes + shared.bias.nbytes + leaf.nbytes
    assert cp.nbytes == expected
    view.mul_(10)
    with torch.no_grad():
        tied[1].weight.add_(1)
        leaf.add_(1)
    (leaf * 2).sum().backward()
    cp.restore()
    assert torch.equal(base, torch.arange(6.0))
    assert view.data_ptr() == base.data_ptr() + 2 * base.element_size()
    assert torch.equal(tied[0].weight, tied[1].weight)
    assert leaf.grad is None and leaf.requires_grad
    assert leaf.is_leaf


def test_metadata_changes_are_undone():
    t = torch.arange(6.0).reshape(2, 3)
    ns = {"t": t}
    cp = NamespaceCheckpoint(ns)
    t.t_()
    t.resize_(10)
    t.fill_(0)
    cp.restore()
    assert t.shape == (2, 3) and t.stride() == (3, 1)
    assert torch.equal(t, torch.arange(6.0).reshape(2, 3))


def test_top_level_containers_and_objects_holding_torch_state():
    class Trainer:
        def __init__(self):
            self.model = nn.Linear(2, 1)
            self.history = []

    tr = Trainer()
    d = {"a": torch.zeros(2)}
    lst = [1, 2]
    ns = {"tr": tr, "d": d, "lst": lst}
    w = tr.model.weight.detach().clone()
    cp = NamespaceCheckpoint(ns)
    lst.append(3)
    d["b"] = 1
    d["a"].add_(1)
    with torch.no_grad():
        tr.model.weight.mul_(0)
    tr.history.append(1)  # arbitrary objects: documented as not rolled back
    cp.restore()
    assert lst == [1, 2] and ns["lst"] is lst
    assert set(d) == {"a"} and torch.equal(d["a"], torch.zeros(2))
    assert torch.equal(tr.model.weight, w)
    assert tr.history == [1]


def test_ipython_history_names_are_neither_walked_nor_restored():
    big = torch.zeros(1000)
    ns = {"Out": {1: big}, "_1": big, "_i1": "x = 1", "_ih": ["", "x = 1"], "keep": 1}
    cp = NamespaceCheckpoint(ns)
    assert cp.nbytes == 0
    ns["_i2"] = "y = 2"  # IPython's history moves on while the checkpoint lives: left alone
    ns["_"] = 5
    ns["new"] = 3
    cp.restore()
    assert "new" not in ns and ns["keep"] == 1
    assert ns["_i2"] == "y = 2" and ns["_"] == 5


def test_inference_tensors_and_meta_tensors():
    with torch.inference_mode():
        inf = torch.ones(3)
    meta = torch.empty(3, device="meta")
    ns = {"inf": inf, "meta": meta}
    cp = NamespaceCheckpoint(ns)
    assert any("meta" in s for s in cp.skipped)
    with torch.inference_mode():
        inf.add_(1)
    cp.restore()
    assert torch.equal(inf, torch.ones(3))


def test_memory_is_about_one_copy_of_the_model_state():
    model = nn.Sequential(*[nn.Linear(256, 256) for _ in range(8)])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(4, 256)).sum().backward()
    opt.step()
    state_bytes = sum(p.nbytes for p in model.parameters())
    state_bytes += sum(p.grad.nbytes for p in model.parameters())
    state_bytes += sum(s["momentum_buffer"].nbytes for s in opt.state.values())
    ns = {"model": model, "opt": opt, "alias": model[0].weight, "params": list(model.parameters())}
    gc.collect()
    tracemalloc.start()
    try:
        cp = NamespaceCheckpoint(ns)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cp.nbytes == state_bytes  # aliases and the params list are not copied twice
    assert peak - cp.nbytes < 200_000  # bookkeeping beyond the one copy is small
    cp.discard()
    assert cp.nbytes == 0


def test_not_a_dict_is_refused():
    with pytest.raises(TypeError, match="namespace dict"):
        NamespaceCheckpoint([("a", 1)])  # type: ignore[arg-type]


# -- property: any sequence of in-place changes is undone ---------------------------------------


OPS = st.lists(
    st.tuples(
        st.sampled_from(["base", "view", "param", "grad", "buf", "state"]),
        st.sampled_from(["add", "mul", "zero", "rebind_grad", "resize"]),
    ),
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_property_in_place_changes_are_undone(ops):
    torch.manual_seed(0)
    base = torch.randn(4, 3)
    lin = nn.Linear(3, 2)
    lin.register_buffer("buf", torch.zeros(2))
    lin.weight.grad = torch.ones_like(lin.weight)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    lin(base).sum().backward()
    opt.step()
    ns = {"base": base, "view": base[1], "lin": lin, "opt": opt}
    targets = {
        "base": lambda: base,
        "view": lambda: ns["view"],
        "param": lambda: lin.weight,
        "grad": lambda: lin.weight.grad,
        "buf": lambda: lin.buf,
        "state": lambda: opt.state[lin.weight]["momentum_buffer"],
    }
    before = {k: f().detach().clone() for k, f in targets.items()}
    grad_obj = lin.weight.grad
    cp = NamespaceCheckpoint(ns)
    with torch.no_grad():
        for name, op in ops:
            t = targets[name]()
            if op == "add":
                t.add_(1.5)
            elif op == "mul":
                t.mul_(-2)
            elif op == "zero":
                t.zero_()
            elif op == "rebind_grad":
                lin.weight.grad = torch.full_like(lin.weight, 7.0)
            elif op == "resize" and name == "base":
                base.resize_(20)
    cp.restore()
    assert lin.weight.grad is grad_obj
    for k, f in targets.items():
        assert torch.equal(f(), before[k]), (k, ops)
    assert ns["view"].data_ptr() == base.data_ptr() + 3 * base.element_size()


def test_data_tensors_beyond_the_budget_are_not_copied_but_their_changes_are_reported():
    data = torch.zeros(1000)  # 4000 bytes of data
    small = torch.zeros(10)
    lin = nn.Linear(100, 100)  # 40 KB of state, always copied
    buffer_alias = lin.weight.detach()  # plain alias of a parameter's storage: restored with it
    ns = {"data": data, "small": small, "lin": lin, "alias": buffer_alias}
    w0 = lin.weight.detach().clone()
    cp = NamespaceCheckpoint(ns, max_data_bytes=1000)
    assert cp.nbytes == small.nbytes + lin.weight.nbytes + lin.bias.nbytes
    assert any("data" in s and "budget" in s for s in cp.skipped)
    cp.restore()
    assert cp.unrestored == []  # untouched: nothing to report
    small.add_(1)
    data.add_(1)
    with torch.no_grad():
        lin.weight.add_(1)
    cp.restore()
    assert torch.equal(small, torch.zeros(10))
    assert torch.equal(data, torch.ones(1000))  # not undone...
    assert len(cp.unrestored) == 1 and cp.unrestored[0].startswith("data: changed in place")  # ...but reported
    assert torch.equal(lin.weight, w0) and torch.equal(buffer_alias, w0)


def test_an_interrupt_during_restore_still_restores_everything(monkeypatch):
    import nstviz.capture.namespace as nsmod

    t = torch.zeros(4)
    lin = nn.Linear(2, 2)
    ns = {"t": t, "lin": lin}
    w0 = lin.weight.detach().clone()
    cp = NamespaceCheckpoint(ns)
    t.add_(1)
    with torch.no_grad():
        lin.weight.add_(1)
    ns["added"] = 1
    real = nsmod._copy_into
    calls = {"n": 0}

    def flaky(storage, copy):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        real(storage, copy)

    monkeypatch.setattr(nsmod, "_copy_into", flaky)
    with pytest.raises(KeyboardInterrupt):
        cp.restore()
    assert torch.equal(t, torch.zeros(4)) and torch.equal(lin.weight, w0) and "added" not in ns


def test_module_additions_of_a_warm_up_are_kept_until_dropped():
    model = nn.Sequential(nn.Linear(2, 2))
    ns = {"model": model, "count": 0}
    cp = NamespaceCheckpoint(ns)
    # the warm-up: a hook installed once behind a flag (changed values and names are still restored)
    model[0].register_forward_hook(lambda *a: None)
    model._hooks_installed = True
    model.training = False
    ns["count"] = 1
    assert cp.keep_module_additions() == 2
    cp.restore()
    assert len(model[0]._forward_hooks) == 1 and model._hooks_installed
    assert model.training and ns["count"] == 0
    model[0].register_forward_hook(lambda *a: None)  # a later run's own hook is still removed
    cp.restore()
    assert len(model[0]._forward_hooks) == 1
    cp.restore(keep_added=False)
    assert len(model[0]._forward_hooks) == 0 and not hasattr(model, "_hooks_installed")
    cp.restore()
    assert len(model[0]._forward_hooks) == 0 and not hasattr(model, "_hooks_installed")
