"""Modules whose sizes are 0-d integer buffers (EnCodec's pattern), and ones that must not be rewritten."""

from __future__ import annotations

import torch
from torch import nn


class PadConv(nn.Module):
    """A strided conv padded to whole frames, its sizes kept as 0-d int64 buffers (as EncodecConv1d)."""

    def __init__(self, kernel_size: int, stride: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, 2, kernel_size, stride)
        stride_t = torch.tensor(self.conv.stride[0], dtype=torch.int64)
        kernel = torch.tensor(self.conv.kernel_size[0], dtype=torch.int64)
        self.stride = nn.Buffer(stride_t, persistent=False)
        self.kernel_size = nn.Buffer(kernel, persistent=False)
        self.register_buffer("padding_total", kernel - stride_t, persistent=False)

    def extra_padding(self, x):
        length = x.shape[-1]
        n_frames = (length - self.kernel_size + self.padding_total) / self.stride + 1
        n_frames = torch.ceil(n_frames).to(torch.int64) - 1
        return n_frames * self.stride + self.kernel_size - self.padding_total - length

    @staticmethod
    def pad(x, left, right):
        length = x.shape[-1]
        extra = 0
        if length <= max(left, right):
            extra = max(left, right) - length + 1
            x = nn.functional.pad(x, (0, extra))
        padded = nn.functional.pad(x, (left, right), "reflect")
        return padded[..., : padded.shape[-1] - extra]

    def forward(self, x):
        extra = self.extra_padding(x)
        right = self.padding_total // 2
        left = self.padding_total - right
        return self.conv(self.pad(x, left, right + extra))


def pad_convs() -> nn.Module:
    """Two PadConv layers with different sizes (the rewrite must read each layer's own)."""
    torch.manual_seed(0)
    return nn.Sequential(PadConv(4, 2), PadConv(3, 1)).eval()


class PersistentPad(PadConv):
    """The same, but ``padding_total`` is a persistent buffer: a checkpoint may overwrite it."""

    def __init__(self, kernel_size: int, stride: int) -> None:
        super().__init__(kernel_size, stride)
        del self.padding_total
        self.register_buffer("padding_total", torch.tensor(kernel_size - stride))

    def forward(self, x):
        return self.conv(self.pad(x, self.padding_total, self.padding_total))


class CountingPad(nn.Module):
    """A 0-d int buffer the module writes (a step counter): not a constant."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("steps", torch.tensor(2), persistent=False)

    def forward(self, x):
        self.steps.add_(1)
        return PadConv.pad(x, self.steps, self.steps)


class ScaledPad(nn.Module):
    """A 0-d int buffer used as a tensor (multiplied into data): not size arithmetic."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 3)
        self.register_buffer("k", torch.tensor(self.conv.kernel_size[0]), persistent=False)

    def forward(self, x):
        y = x * self.k
        return PadConv.pad(y, self.k, self.k)


def encodec():
    """EnCodec from a tiny config (transformers 5.x, random weights): pad_mode="reflect", eval."""
    import transformers as T

    torch.manual_seed(0)
    cfg = T.EncodecConfig(
        hidden_size=16, num_filters=4, num_residual_layers=1, upsampling_ratios=[8, 5, 4, 2], codebook_size=16,
        codebook_dim=16, num_lstm_layers=1, target_bandwidths=[1.5], pad_mode="reflect",
    )
    return T.EncodecModel(cfg).eval()


def encodec_call():
    """``(entry, args)`` for a fresh-process explain: the decoded audio of one input, under no_grad."""
    model = encodec()
    x = torch.randn(1, 1, 1600)

    @torch.no_grad()
    def entry(input_values):
        return model(input_values=input_values).audio_values

    entry(x)  # transformers installs hooks on a model's first call
    return entry, (x,)


class AugmentedPad(PadConv):
    """``extra += <tensor>`` makes a name that was a size a tensor: its ``torch.ceil`` must stay torch."""

    def extra_padding(self, x):
        n = x.shape[-1] / self.stride
        n += x.new_zeros(())
        return torch.ceil(n).to(torch.int64) * self.stride - x.shape[-1]
