import dataclasses
import math
from collections import OrderedDict, namedtuple

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nstviz.capture.outputs import build_output_check, compare_outputs, snapshot_outputs
from nstviz.passes.assemble import build_report
from nstviz.report import OutputCheck, OutputComparison, Report


def cmp(left, right, **kw):
    return compare_outputs(left, right, left_name="baseline", right_name="nonstrict", **kw)


def detail(c: OutputComparison, path: str):
    return next(d for d in c.details if d.path == path)


def test_identical_tensors_match_with_zero_diff():
    t = torch.randn(4, 5)
    c = cmp({"return": t}, {"return": t.clone()})
    assert c.match is True
    assert c.max_abs_diff == 0.0
    d = detail(c, "return")
    assert d.shape == "[4, 5]" and d.dtype == "f32"


def test_float_difference_reports_abs_and_rel():
    a = torch.tensor([1.0, 2.0, 4.0])
    b = torch.tensor([1.0, 2.5, 4.0])
    c = cmp({"y": a}, {"y": b})
    assert c.match is False
    d = detail(c, "y")
    assert d.max_abs_diff == pytest.approx(0.5)
    assert d.max_rel_diff == pytest.approx(0.25)
    assert "1 of 3 elements" in d.note


def test_within_tolerance_matches_but_reports_diff():
    a = torch.ones(10)
    b = a + 1e-7
    c = cmp({"y": a}, {"y": b})
    assert c.match is True
    assert 0 < c.max_abs_diff < 1e-6


def test_nan_at_same_place_is_equal_and_one_sided_nan_is_not():
    a = torch.tensor([1.0, float("nan"), 3.0])
    assert cmp({"y": a}, {"y": a.clone()}).match is True
    b = torch.tensor([1.0, 2.0, 3.0])
    c = cmp({"y": a}, {"y": b})
    assert c.match is False
    assert "NaN on one side only at 1" in detail(c, "y").note


def test_inf_sign_matters():
    a = torch.tensor([float("inf"), 1.0])
    assert cmp({"y": a}, {"y": a.clone()}).match is True
    c = cmp({"y": a}, {"y": torch.tensor([float("-inf"), 1.0])})
    assert c.match is False
    assert "inf" in detail(c, "y").note


def test_integer_and_bool_tensors_must_be_exact():
    a = torch.tensor([1, 2, 3])
    c = cmp({"i": a}, {"i": torch.tensor([1, 2, 4])}, atol=10.0, rtol=10.0)
    assert c.match is False
    assert detail(c, "i").max_abs_diff == 1.0
    m = torch.tensor([True, False])
    assert cmp({"m": m}, {"m": m.clone()}).match is True
    assert cmp({"m": m}, {"m": ~m}).match is False


def test_dtype_and_shape_mismatch():
    c = cmp({"y": torch.ones(3)}, {"y": torch.ones(3, dtype=torch.float64)})
    d = detail(c, "y")
    assert d.match is False and "dtype f32 vs f64" in d.note
    assert d.max_abs_diff == 0.0  # values still compared
    c = cmp({"y": torch.ones(3)}, {"y": torch.ones(4)})
    assert detail(c, "y").match is False
    assert "shape [3] vs [4]" in detail(c, "y").note


def test_nested_paths_and_missing_names():
    Pair = namedtuple("Pair", "first second")
    left = {"return": {"logits": torch.ones(2), "aux": [torch.zeros(1), Pair(1, 2.0)]}, "only_left": 1}
    right = {"return": {"logits": torch.ones(2), "aux": [torch.zeros(1), Pair(1, 2.0)]}, "only_right": 2}
    c = cmp(left, right)
    paths = {d.path for d in c.details}
    assert {"return.logits", "return.aux[0]", "return.aux[1].first", "return.aux[1].second"} <= paths
    assert detail(c, "only_left").match is False and "missing in nonstrict" in detail(c, "only_left").note
    assert detail(c, "only_right").match is False and "missing in baseline" in detail(c, "only_right").note
    assert c.details[0].match is False  # differing leaves first


def test_non_identifier_keys_and_dataclasses():
    @dataclasses.dataclass
    class Out:
        loss: torch.Tensor
        extra: dict

    left = {"o": Out(torch.tensor(1.0), {"a b": 1, 3: 2})}
    right = {"o": Out(torch.tensor(1.0), {"a b": 1, 3: 3})}
    c = cmp(left, right)
    assert detail(c, "o.loss").match is True
    assert detail(c, "o.extra['a b']").match is True
    assert detail(c, "o.extra[3]").match is False


def test_model_output_like_ordered_dict():
    class ModelOutput(OrderedDict):
        pass

    a = ModelOutput(logits=torch.ones(2, 3), hidden=None)
    b = ModelOutput(logits=torch.ones(2, 3), hidden=None)
    c = cmp({"return": a}, {"return": b})
    assert c.match is True
    assert {d.path for d in c.details} == {"return.logits", "return.hidden"}


def test_numpy_arrays_numbers_strings_and_opaque_objects():
    class Thing:
        pass

    t1, t2 = Thing(), Thing()
    left = {"a": np.array([1.0, 2.0]), "n": 3, "f": 0.1, "s": "x", "obj": t1, "none": None}
    right = {"a": np.array([1.0, 2.0 + 1e-3]), "n": 3, "f": 0.1 + 1e-12, "s": "x", "obj": t2, "none": None}
    c = cmp(left, right)
    assert detail(c, "a").match is False
    assert detail(c, "n").match is True
    assert detail(c, "f").match is True
    assert detail(c, "s").match is True
    assert detail(c, "none").match is True
    # an object without state or __eq__ of its own cannot be compared: noted, not a failure
    assert detail(c, "obj").match is None and "no state" in detail(c, "obj").note
    assert c.match is False  # because of "a"


def test_uncomparable_value_is_none_and_does_not_fail():
    class Weird:
        def __eq__(self, other):
            raise RuntimeError("no")

    c = cmp({"w": Weird(), "t": torch.ones(1)}, {"w": Weird(), "t": torch.ones(1)})
    assert detail(c, "w").match is None
    assert c.match is True


def test_tensor_vs_number_is_a_mismatch():
    c = cmp({"y": torch.tensor(1.0)}, {"y": 1.0})
    assert c.match is False
    assert "different types" in detail(c, "y").note or "vs" in detail(c, "y").note


def test_empty_containers_and_cycles():
    a: list = []
    a.append(a)
    c = cmp({"l": [], "d": {}, "cyc": a}, {"l": [], "d": {}, "cyc": a})
    assert detail(c, "l").match is True
    assert detail(c, "d").match is True
    assert cmp({"l": []}, {"l": [1]}).match is False


def test_snapshot_is_independent_of_later_inplace_changes():
    t = torch.ones(3, requires_grad=True)
    y = t * 2
    arr = np.zeros(2)
    values = {"y": y, "lst": [y, arr], "tup": (y,)}
    snap = snapshot_outputs(values)
    with torch.no_grad():
        y.add_(5)
    arr[0] = 9
    assert torch.equal(snap["y"], torch.full((3,), 2.0))
    assert snap["y"].requires_grad is False
    assert snap["lst"][1][0] == 0
    assert snap["lst"][0] is snap["y"]  # aliasing is kept within one snapshot
    assert isinstance(snap["tup"], tuple)


def test_snapshot_keeps_container_types():
    Pair = namedtuple("Pair", "a b")

    class MO(OrderedDict):
        pass

    @dataclasses.dataclass(frozen=True)
    class DC:
        x: torch.Tensor

    snap = snapshot_outputs({"p": Pair(torch.ones(1), 2), "m": MO(x=torch.ones(1)), "d": DC(torch.ones(1))})
    assert type(snap["p"]) is Pair and type(snap["m"]) is MO and type(snap["d"]) is DC


def test_build_output_check_headline_and_json_round_trip():
    a = cmp({"y": torch.ones(2)}, {"y": torch.ones(2) * 2})
    e = compare_outputs({"y": torch.ones(2)}, {"y": torch.ones(2)}, left_name="eager", right_name="baseline")
    check = build_output_check([e, a], nondeterministic=False)
    assert check.match is False  # baseline vs nonstrict is the headline even if listed second
    assert check.max_abs_diff == 1.0
    assert len(check.comparisons) == 2
    report = build_report(torch_version=torch.__version__, runs={}, outputs=check)
    assert Report.from_json(report.to_json()).outputs == check


def test_build_output_check_empty_and_nothing_comparable():
    assert build_output_check([]).match is None
    assert build_output_check([]).skipped_reason
    c = cmp({}, {})
    check = build_output_check([c])
    assert check.match is None and check.skipped_reason


def test_nan_infinite_diffs_survive_json():
    c = cmp({"y": torch.tensor([0.0, 1.0])}, {"y": torch.tensor([1.0, 1.0])})
    assert math.isinf(c.max_rel_diff)
    check = build_output_check([c])
    assert Report.from_json(build_report(torch_version="x", runs={}, outputs=check).to_json()).outputs == check


def test_inputs_are_not_modified_and_torch_state_untouched():
    a = torch.randn(5, requires_grad=True)
    b = a.detach().clone() + 1
    before = a.detach().clone()
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # the test runner may run single-threaded (OMP_NUM_THREADS=1)
    try:
        cmp({"a": a}, {"a": b})
        snapshot_outputs({"a": a})
        assert torch.get_num_threads() == 2  # set to 1 inside, restored
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(a.detach(), before)
    assert torch.is_grad_enabled()


def test_half_precision_and_complex():
    a = torch.randn(8, dtype=torch.bfloat16)
    assert cmp({"h": a}, {"h": a.clone()}).match is True
    z = torch.randn(4, dtype=torch.complex64)
    c = cmp({"z": z}, {"z": z + 1j})
    assert c.match is False and detail(c, "z").max_abs_diff == pytest.approx(1.0)


floats = st.floats(allow_nan=True, allow_infinity=True, width=32)


@settings(max_examples=60, deadline=None)
@given(st.lists(floats, min_size=1, max_size=20))
def test_property_a_tensor_always_matches_its_copy(values):
    t = torch.tensor(values, dtype=torch.float32)
    c = cmp({"t": t}, {"t": t.clone()})
    assert c.match is True
    assert c.max_abs_diff == 0.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6, width=32), min_size=1, max_size=20),
    st.integers(min_value=0, max_value=19),
    st.floats(min_value=1e-3, max_value=10.0),
)
def test_property_a_perturbation_is_found_and_measured(values, index, delta):
    t = torch.tensor(values, dtype=torch.float64)
    u = t.clone()
    i = index % len(values)
    u[i] += delta
    c = cmp({"t": t}, {"t": u})
    assert c.max_abs_diff == pytest.approx(abs(float(u[i] - t[i])), rel=1e-9, abs=1e-12)
    tol = 1e-6 + 1e-5 * abs(float(u[i]))
    assert c.match is (abs(float(u[i] - t[i])) <= tol)


@settings(max_examples=40, deadline=None)
@given(st.recursive(
    st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3), st.none(),
              st.builds(lambda n: torch.arange(n, dtype=torch.float32), st.integers(0, 4))),
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=3), kids, max_size=3)),
    max_leaves=10,
))
def test_property_any_pytree_matches_its_snapshot_and_is_symmetric(tree):
    snap = snapshot_outputs({"v": tree})
    c1 = cmp({"v": tree}, snap)
    assert c1.match in (True, None)
    c2 = compare_outputs(snap, {"v": tree}, left_name="a", right_name="b")
    assert c2.match == c1.match
    assert {d.path for d in c1.details} == {d.path for d in c2.details}


def test_output_check_type():
    assert isinstance(build_output_check([cmp({"a": 1}, {"a": 1})]), OutputCheck)


def test_big_tensors_are_compared_in_chunks_with_the_same_answer(monkeypatch):
    import nstviz.capture.outputs.compare as oc

    monkeypatch.setattr(oc, "_CHUNK", 7)
    a = torch.arange(50, dtype=torch.float32)
    b = a.clone()
    b[3] = float("nan")
    a[3] = float("nan")  # same place: equal
    b[40] += 2.0  # a later chunk
    b[20] = float("inf")  # one-sided inf in a middle chunk
    c = cmp({"y": a}, {"y": b})
    d = detail(c, "y")
    assert d.match is False
    assert d.max_abs_diff == 2.0
    assert "inf on one side only" in d.note and "1 of 50 elements beyond" in d.note
    assert "NaN on one side" not in d.note


class _Layer:
    def __init__(self, k, v):
        self.keys = k
        self.values = v
        self.is_initialized = True


class _Cache:  # shaped like transformers' DynamicCache: identity ==, state in attributes
    def __init__(self, layers):
        self.layers = layers
        self.layer_class_to_replicate = _Layer


def test_objects_with_identity_eq_are_compared_by_their_attributes_and_snapshotted():
    k, v = torch.randn(1, 2, 3), torch.randn(1, 2, 3)
    left = {"return": {"logits": torch.ones(2), "cache": _Cache([_Layer(k, v)])}}
    right = {"return": {"logits": torch.ones(2), "cache": _Cache([_Layer(k.clone(), v + 1)])}}
    snap = snapshot_outputs(left)
    k.add_(100)  # a later in-place update of the live cache
    c = cmp(snap, right)
    assert detail(c, "return.cache.layers[0].keys").match is True  # the snapshot kept the old keys
    assert detail(c, "return.cache.layers[0].values").match is False
    assert detail(c, "return.cache.layer_class_to_replicate").match is True
    assert type(snap["return"]["cache"]) is _Cache


def test_real_transformers_output_with_cache():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=16)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    ids = torch.randint(0, 50, (1, 4))
    with torch.no_grad():
        a = snapshot_outputs({"out": model(ids, use_cache=True)})
        b = snapshot_outputs({"out": model(ids, use_cache=True)})
    c = cmp(a, b)
    assert c.match is True
    paths = {d.path for d in c.details}
    assert "out.logits" in paths and any(p.startswith("out.") and p.endswith(".keys") for p in paths)


def test_values_whose_comparison_fails_are_noted_not_raised():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.ones(3)
    c = cmp({"f": fake, "t": torch.ones(1)}, {"f": fake, "t": torch.ones(1)})
    assert detail(c, "f").match is None and detail(c, "f").note.startswith("not compared")
    assert c.match is True
