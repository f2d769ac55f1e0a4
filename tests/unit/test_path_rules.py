"""Whose file a frame is, by the shape of its path (nstviz.tracing.stacks): every install layout.

The rule must not depend on where torch is installed on the machine that reads the paths, so
these are synthetic paths of other machines; none of them exists here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import nstviz
from nstviz.tracing import stacks
from nstviz.tracing.stacks import PathRules, RootLearner, classify, installed_package, torch_root_of

TORCH = [
    # Linux venvs and system Pythons
    "/home/me/.venv/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py",
    "/home/me/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py",
    "/home/me/.venv/lib/python3.12/site-packages/torch/__init__.py",
    "/home/me/.venv/lib/python3.12/site-packages/functorch/_src/aot_autograd.py",
    "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/nn/parallel/distributed.py",
    "/usr/lib/python3/dist-packages/torch/nn/parallel/distributed.py",
    "/usr/local/lib/python3.11/dist-packages/torch/_dynamo/variables/user_defined.py",
    "/home/me/.local/lib/python3.11/site-packages/torch/utils/_pytree.py",
    # conda
    "/opt/conda/envs/train/lib/python3.11/site-packages/torch/_dynamo/utils.py",
    "/opt/conda/pkgs/pytorch-2.13.0-py3.11_cuda12.4_cudnn9.1.0_0/lib/python3.11/site-packages/torch/fx/graph.py",
    "/opt/conda/pkgs/pytorch-2.13.0-py3.11_cpu_0/info/test/run_test.py",
    # source checkouts (and glog paths relative to one)
    "/home/me/pytorch/torch/_dynamo/symbolic_convert.py",
    "/home/me/pytorch/torch/nn/modules/module.py",
    "/home/me/pytorch/torch/__init__.py",
    "/home/me/src/pt/torch/_inductor/compile_fx.py",
    "/home/me/src/pt/torch/_higher_order_ops/flat_apply.py",
    "/home/me/src/pt/torch/_functorch/aot_autograd.py",
    "/home/me/src/pt/torch/fx/_symbolic_trace.py",
    "/home/me/src/pt/torch/_ops.py",
    "/work/build/lib.linux-x86_64-cpython-311/torch/_dynamo/convert_frame.py",
    "torch/_dynamo/utils.py",
    "torch/nn/modules/module.py",
    # Windows (backslashes, drive letters, Lib\site-packages)
    r"C:\Users\me\miniconda3\envs\x\Lib\site-packages\torch\_dynamo\eval_frame.py",
    r"C:\Users\me\AppData\Local\Programs\Python\Python311\Lib\site-packages\torch\nn\modules\module.py",
    r"D:\src\pytorch\torch\_dynamo\utils.py",
    "C:/venvs/x/Lib/site-packages/torch/_dynamo/utils.py",
    # macOS: framework Python, Homebrew
    "/Library/Frameworks/Python.framework/Versions/3.12/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py",
    "/opt/homebrew/lib/python3.12/site-packages/torch/nn/modules/module.py",
]

STDLIB = [
    "/usr/lib/python3.11/contextlib.py",
    "/home/me/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py",
    "/usr/lib64/python3.12/asyncio/events.py",
    "/opt/conda/envs/train/lib/python3.11/functools.py",
    "/home/me/.local/share/uv/python/cpython-3.13.1-linux-x86_64-gnu/lib/python3.13t/threading.py",
    "/Library/Frameworks/Python.framework/Versions/3.12/lib/python3.12/contextlib.py",
    "/opt/homebrew/Cellar/python@3.12/3.12.7/Frameworks/Python.framework/Versions/3.12/lib/python3.12/runpy.py",
    r"C:\Python311\Lib\contextlib.py",
    r"C:\Users\me\miniconda3\envs\x\Lib\importlib\__init__.py",
    "<frozen runpy>",
    "<frozen importlib._bootstrap>",
]

USER = [
    "/home/me/proj/train.py",
    "/home/me/proj/my_torch_utils.py",
    "/home/me/torch_experiments/model.py",
    "/home/me/torch_experiments/nn/layers.py",
    "/home/me/proj/torch/train.py",  # a folder named torch, but nothing of torch's in it
    "/home/me/proj/torch/nn/layers.py",  # a common name only: not inside a pytorch checkout
    "/home/me/proj/lib/helpers.py",
    "/home/me/proj/lib/python/helpers.py",
    "/home/me/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py",  # third-party
    "/home/me/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py",
    "/home/me/.venv/lib/python3.12/site-packages/torch_geometric/nn/conv/gcn_conv.py",
    "/home/me/.venv/lib/python3.12/site-packages/nstviz/examples/demo.py",  # nstviz demo's script
    "/tmp/ipykernel_1234/3456.py",
    "<ipython-input-3-0123456789ab>",
    r"C:\Users\me\proj\train.py",
    r"C:\Users\me\torch_experiments\torch_model.py",
    "D:/work/train.py",
    "/Users/me/Library/Mobile Documents/proj/train.py",
    "/Users/me/code/train.py",
]

NSTVIZ = [
    "/home/me/.venv/lib/python3.12/site-packages/nstviz/capture/runner.py",
    "/home/me/.venv/lib/python3.12/site-packages/nstviz/_cli_script.py",
    "/home/me/src/nstviz/nstviz/offline/record.py",
    r"C:\Users\me\envs\x\Lib\site-packages\nstviz\capture\session.py",
]


@pytest.mark.parametrize("path", TORCH)
def test_torch_files_by_shape(path: str) -> None:
    assert classify(path, PathRules()) == "torch"


@pytest.mark.parametrize("path", STDLIB)
def test_stdlib_files_by_shape(path: str) -> None:
    assert classify(path, PathRules()) == "stdlib"


@pytest.mark.parametrize("path", USER)
def test_user_files_stay_user_code(path: str) -> None:
    assert classify(path, PathRules()) == "user"


@pytest.mark.parametrize("path", NSTVIZ)
def test_nstviz_files_by_shape(path: str) -> None:
    assert classify(path, PathRules()) == "nstviz"


def test_this_nstviz_is_nstviz_and_its_examples_are_user_code() -> None:
    here = Path(nstviz.__file__).parent
    assert classify(str(here / "offline" / "ingest.py"), PathRules()) == "nstviz"
    assert classify(str(here / "examples" / "demo.py"), PathRules()) == "user"


def test_no_file_is_not_user_code() -> None:
    assert not stacks.is_user_file("")
    assert not stacks.is_user_file(None)


def test_torch_root_of() -> None:
    assert torch_root_of("/x/lib/python3.11/site-packages/torch/_dynamo/utils.py") == "/x/lib/python3.11/site-packages/torch/"
    assert torch_root_of(r"C:\e\Lib\site-packages\torch\nn\modules\module.py") == "C:/e/Lib/site-packages/torch/"
    assert torch_root_of("/home/me/pytorch/torch/_dynamo/utils.py") == "/home/me/pytorch/torch/"
    assert torch_root_of("/home/me/proj/train.py") is None


def test_installed_package() -> None:
    assert installed_package("/v/lib/python3.11/site-packages/transformers/modeling_utils.py") == "transformers"
    assert installed_package(r"C:\v\Lib\site-packages\six.py") == "six"
    assert installed_package("/usr/lib/python3/dist-packages/torch/nn/functional.py") == "torch"
    assert installed_package("/home/me/proj/train.py") is None


def test_learned_root_from_glog_sites_makes_a_checkout_torch() -> None:
    """A checkout whose folder says nothing (``/opt/src/pt``): the log's own paths say it is torch."""
    common = "/opt/src/pt/torch/nn/parallel/distributed.py"
    rules = PathRules()
    assert classify(common, rules) == "user"  # by shape alone: a common name in an unknown folder
    learner = RootLearner(rules)
    learner.site("torch/_logging/structured.py")  # the glog prefix: relative to the checkout
    learner.path("/opt/src/pt/torch/_logging/structured.py")  # a `str` record: the full path
    assert rules.torch_roots == ("/opt/src/pt/torch/",)
    assert classify(common, rules) == "torch"
    assert classify("/opt/src/pt/train.py", rules) == "user"


def test_learned_root_either_order_and_windows() -> None:
    rules = PathRules()
    learner = RootLearner(rules)
    learner.path(r"E:\code\pt\torch\utils\_pytree.py")  # the path first, the site later
    learner.site(r"torch\utils\_pytree.py")
    assert rules.torch_roots == ("E:/code/pt/torch/",)
    assert classify(r"E:\code\pt\torch\nn\modules\module.py", rules) == "torch"


def test_a_path_torch_by_shape_gives_the_root() -> None:
    rules = PathRules()
    RootLearner(rules).path("/opt/src/pt/torch/_dynamo/convert_frame.py")
    assert classify("/opt/src/pt/torch/autograd/function.py", rules) == "torch"


def test_sites_outside_torch_teach_nothing() -> None:
    rules = PathRules()
    learner = RootLearner(rules)
    learner.site("myproject/logging_helpers.py")
    learner.path("/home/me/myproject/logging_helpers.py")
    assert rules.torch_roots == ()


def test_the_running_torch_counts_live_but_not_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stacks, "_LIVE", PathRules())
    odd = "/weird/place/torch/nn/modules/module.py"
    assert stacks.is_user_file(odd)
    stacks.register_live_torch_root("/weird/place/torch")
    assert stacks.is_torch_file(odd) and not stacks.is_user_file(odd)
    with stacks.using(PathRules()):  # a log read here: this machine's torch does not count
        assert stacks.is_user_file(odd)
    assert stacks.is_torch_file(odd)


def test_the_installed_torch_here_is_torch_by_shape_alone() -> None:
    """This machine's torch is found by the rule itself, not because it is this machine's."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.submodule_search_locations, "torch is a dependency of nstviz"
    root = next(iter(spec.submodule_search_locations))
    assert classify(os.path.join(root, "_dynamo", "eval_frame.py"), PathRules()) == "torch"
    assert classify(os.path.join(root, "nn", "modules", "module.py"), PathRules()) == "torch"
