"""Writes the DebugMode logs of test/data/debugmode-provenance/ with torchtitan's tracer.

    python make_logs.py TRACER.py OUTDIR

TRACER.py is torchtitan's agent_tooling/numerics_debugging/activation_tracer.py,
copied out of a torchtitan checkout and imported from that path (never
committed here). A two-layer model with torchtitan's module names
(tok_embeddings, layers.N.attention.wq/wk/wv/wo, layers.N.feed_forward.w1/w2/w3,
norm, output) is trained one step on the CPU under the tracer, twice: `a/` as
is, `b/` with layers.1.feed_forward.w1's weight times (1 + 1e-3), a planted
change whose first divergence is that module's addmm in forward.
"""
import importlib.util
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, H, B, T = 64, 32, 64, 2, 16


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(D, D) for _ in range(4))

    def forward(self, x):
        q, k, v = self.wq(x), self.wk(x), self.wv(x)
        a = torch.softmax(q @ k.transpose(-1, -2) / D ** 0.5, dim=-1)
        return self.wo(a @ v)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w2, self.w3 = nn.Linear(D, H), nn.Linear(H, D), nn.Linear(D, H)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm, self.ffn_norm = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attention, self.feed_forward = Attention(), FeedForward()

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Block(), Block()])
        self.norm, self.output = nn.LayerNorm(D), nn.Linear(D, V)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def main():
    tracer_path, outdir = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("activation_tracer", tracer_path)
    tracer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tracer)
    for name, planted in (("a", False), ("b", True)):
        torch.manual_seed(0)
        model = Transformer()
        if planted:
            with torch.no_grad():
                model.layers[1].feed_forward.w1.weight.mul_(1 + 1e-3)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
        g = torch.Generator().manual_seed(1)
        tokens = torch.randint(0, V, (B, T), generator=g)
        targets = torch.randint(0, V, (B, T), generator=g)
        t = tracer.DebugModeTracer(model)
        captures = t.__enter__()
        try:
            loss = F.cross_entropy(model(tokens).reshape(-1, V), targets.reshape(-1))
            loss.backward()
            opt.step()
        finally:
            t.__exit__(None, None, None)
        path = os.path.join(outdir, name, "rank_0_activations.log")
        tracer.dump_captures_to_file(captures, path, skipped_excluded_ops=set(t.skipped_excluded_ops))
        print(name, len(captures), os.path.getsize(path))


if __name__ == "__main__":
    main()
