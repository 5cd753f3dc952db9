"""Writes the real-tracer DebugMode corpus (test/data/debugmode-real/).

Not run in CI: the logs it writes are committed. Run it with real torch (CPU):

  python test/data/debugmode-real/make_corpus.py TRACER.py OUTDIR

TRACER.py is torchtitan's agent_tooling/numerics_debugging/activation_tracer.py
(copied out of a torchtitan checkout; it is imported from that path, never
committed here). Each case trains a tiny transformer (embedding, attention
from bmm/masked_fill/softmax, GELU MLP, cross-entropy, AdamW) for one
captured step on the CPU and writes OUTDIR/<case>/rank_0_activations.log.
"""
import copy
import importlib.util
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

V, D, T, B, H = 64, 32, 32, 2, 2  # vocab, width, sequence, batch, heads


class ScaleGrad(torch.autograd.Function):
    """Identity forward; backward scales the gradient (a planted backward bug)."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.s, None


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        bias = cfg.get("bias", False)
        self.wq = nn.Linear(D, D, bias=bias)
        # Never a key bias: softmax ignores a shift, so its gradient is pure
        # rounding noise, which AdamW (m / sqrt(v)) turns into a full-size
        # update whose sign eager and compiled runs draw differently.
        self.wk = nn.Linear(D, D, bias=False)
        self.wv = nn.Linear(D, D, bias=bias)
        self.wo = nn.Linear(D, D, bias=bias)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, H, D // H).transpose(1, 2).reshape(b * H, t, D // H)
        k = self.wk(x).view(b, t, H, D // H).transpose(1, 2).reshape(b * H, t, D // H)
        v = self.wv(x).view(b, t, H, D // H).transpose(1, 2).reshape(b * H, t, D // H)
        scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / (D // H) ** 0.5)
        diag = 1 + self.cfg.get("mask_offset", 0)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=diag)
        scores = scores.masked_fill(mask, float("-inf"))
        p = torch.softmax(scores, dim=-1)
        o = torch.bmm(p, v).reshape(b, H, t, D // H).transpose(1, 2).reshape(b, t, D)
        return self.wo(o)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.w1 = nn.Linear(D, 4 * D, bias=cfg.get("bias", False))
        self.w2 = nn.Linear(4 * D, D, bias=cfg.get("bias", False))

    def forward(self, x):
        h = F.gelu(self.w1(x))
        # Every case runs these two muls (by 1.0 unless planted), so a planted
        # change alters values, not the ops logged.
        h = h * self.cfg.get("fwd_scale", 1.0)
        h = ScaleGrad.apply(h, self.cfg.get("bwd_scale", 1.0))
        if self.cfg.get("extra_op"):
            h = h + 0.0  # a neutral extra op: same values, one more block
        return self.w2(h)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.attention = Attention(cfg)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Block(cfg) for _ in range(2)])
        self.norm = nn.LayerNorm(D)
        self.output = nn.Linear(D, V, bias=cfg.get("bias", False))

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        for i, layer in enumerate(self.layers):
            if self.cfg.get("checkpoint"):
                x = checkpoint(layer, x, use_reentrant=False)
            else:
                x = layer(x)
        return self.output(self.norm(x))


# Two planted-change layers: only layers.1's MLP gets the planted change.
CASES = {
    "identical": {},
    "fwd_1e-3": {"layer1": {"fwd_scale": 1 + 1e-3}},
    "bwd_1e-3": {"layer1": {"bwd_scale": 1 + 1e-3}},
    "fwd_1e-6": {"layer1": {"fwd_scale": 1 + 1e-6}},
    "bf16": {"dtype": torch.bfloat16},
    "bf16_1pct": {"dtype": torch.bfloat16, "layer1": {"fwd_scale": 1.01}},
    "mask_bug": {"layer0": {"mask_offset": 1}},
    "checkpoint": {"checkpoint": True},
    "extra_op": {"layer1": {"extra_op": True}},
    "fused_adamw": {"fused": True},
    "fused_adamw_b": {"fused": True},
    "compile": {"compile": True},
    # Linear layers with biases: many parameters under min_numel, so the
    # optimizer logs runs of hash-only in-place blocks (add_, mul_, lerp_,
    # addcmul_, addcdiv_ per parameter) that compile's extra `<none>`
    # backward ops shift. AdamW as constructed by default (on the CPU that
    # is the for-loop form; foreach is the default only on GPUs).
    "bias": {"bias": True},
    "bias_compile": {"bias": True, "compile": True},
    # A planted optimizer bug under compile: one bias's learning rate doubled.
    "bias_compile_lr": {"bias": True, "compile": True, "lr_bug": "layers.1.mlp.w1.bias"},
}


def build(case):
    torch.manual_seed(0)
    model = Model({"checkpoint": case.get("checkpoint", False), "bias": case.get("bias", False)})
    for i, layer in enumerate(model.layers):
        cfg = dict(case.get(f"layer{i}", {}))
        layer.attention.cfg = cfg
        layer.mlp.cfg = cfg
    return model.to(case.get("dtype", torch.float32))


def optimizer(model, case):
    """AdamW with its defaults; a planted lr bug puts each parameter in a group
    of its own (the same ops in the same order) with one lr doubled."""
    fused = case.get("fused", False) or None
    if "lr_bug" not in case:
        return torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused)
    groups = [{"params": [p], "lr": 2e-3 if n == case["lr_bug"] else 1e-3} for n, p in model.named_parameters()]
    return torch.optim.AdamW(groups, lr=1e-3, fused=fused)


def step(model, opt, tokens, targets, fn):
    logits = fn(tokens)
    loss = F.cross_entropy(logits.reshape(-1, V).float(), targets.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def main():
    tracer_path, outdir = sys.argv[1], sys.argv[2]
    only = set(sys.argv[3:])
    spec = importlib.util.spec_from_file_location("activation_tracer", tracer_path)
    tracer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tracer)
    for name, case in CASES.items():
        if only and name not in only:
            continue
        model = build(case)
        opt = optimizer(model, case)
        g = torch.Generator().manual_seed(1)
        tokens = torch.randint(0, V, (B, T), generator=g)
        targets = torch.randint(0, V, (B, T), generator=g)
        fn = model
        if case.get("compile"):
            # Compile outside the capture (a warm-up step), then restore the
            # weights and start a fresh optimizer: the captured step starts
            # from the same state as the eager cases.
            saved = copy.deepcopy(model.state_dict())
            fn = torch.compile(model)
            step(model, opt, tokens, targets, fn)
            model.load_state_dict(saved)
            opt = optimizer(model, case)
        t = tracer.DebugModeTracer(model)
        captures = t.__enter__()
        try:
            step(model, opt, tokens, targets, fn)
        finally:
            t.__exit__(None, None, None)
        path = os.path.join(outdir, name, "rank_0_activations.log")
        tracer.dump_captures_to_file(captures, path, skipped_excluded_ops=set(t.skipped_excluded_ops))
        print(name, len(captures), os.path.getsize(path))


if __name__ == "__main__":
    main()
