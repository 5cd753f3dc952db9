"""A small transformer block trained 3 steps on the CPU; BUG=<name> plants one bug (real_torch_test.py, operator level)."""
import json, math, os, torch
torch.manual_seed(0)
# One intra-op thread: a BLAS that picks its thread count by the machine's
# load would otherwise round matmuls differently from run to run.
torch.set_num_threads(1)
BUG = os.environ.get("BUG", "")
F = torch.nn.functional
class Attention(torch.nn.Module):
    def __init__(s, d):
        super().__init__()
        s.qkv = torch.nn.Linear(d, 3 * d); s.proj = torch.nn.Linear(d, d); s.d = d
    def forward(s, x):
        q, k, v = s.qkv(x).chunk(3, dim=-1)
        if BUG == "bf16":
            q, k = q.to(torch.bfloat16), k.to(torch.bfloat16)
        scale = s.d if BUG == "const" else math.sqrt(s.d) * (1 + 2e-7 if BUG == "subtol" else 1)
        scores = (q @ k.transpose(-2, -1)).float() / scale
        T = x.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=0 if BUG == "mask" else 1)
        scores = scores.masked_fill(mask, -1e9)
        return s.proj(scores.softmax(-1) @ v)
class Mlp(torch.nn.Module):
    def __init__(s, d):
        super().__init__()
        s.up = torch.nn.Linear(d, 4 * d); s.down = torch.nn.Linear(4 * d, d); s.drop = torch.nn.Dropout(0.2)
    def forward(s, x):
        up = x @ s.up.weight.t() + s.up.bias if BUG == "refactor" else s.up(x)  # mm + add vs addmm
        h = F.gelu(up, approximate="tanh" if BUG == "gelu" else "none")
        h = h + torch.log(h + (-10.0 if BUG == "nan" else 10.0)) * 0.01
        return s.drop(s.down(h))
class Block(torch.nn.Module):
    def __init__(s, d):
        super().__init__()
        s.ln1 = torch.nn.LayerNorm(d); s.attn = Attention(d); s.ln2 = torch.nn.LayerNorm(d); s.mlp = Mlp(d)
    def forward(s, x):
        x = x + s.attn(s.ln1(x))
        if BUG == "checkpoint":
            return x + torch.utils.checkpoint.checkpoint(s.mlp, s.ln2(x), use_reentrant=False)
        return x + s.mlp(s.ln2(x))
import torch.utils.checkpoint  # noqa: E402


class Model(torch.nn.Module):
    def __init__(s, d=16):
        super().__init__()
        s.block = Block(d); s.head = torch.nn.Linear(d, 1)
    def forward(s, x):
        return s.head(s.block(x)).squeeze(-1)
model = Model()
if BUG == "settings":  # settings a script changes after import: what the captured step sees is recorded
    torch.set_float32_matmul_precision("high")
    torch.use_deterministic_algorithms(True)
if BUG == "eval":
    model.eval()
run = torch.compile(model) if BUG == "compile" else model
# SGD with momentum, not Adam: Adam's first step is about lr * sign(grad),
# which turns a last-bit difference in a near-zero gradient into a full step.
opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
x = torch.randn(4, 8, 16); y = torch.randn(4, 8)
losses = []
for step in range(3):
    if BUG == "late" and step == 2:  # a bug that begins at step 2 (watch mode names the step)
        x = x * 1.5
    if BUG == "flaky" and step == 1:  # differs from run to run, from step 1 on (numtrace twice --watch)
        x = x + int.from_bytes(os.urandom(8), "little") / 2.0**64
    out = run(x)
    if BUG == "bcast":  # (4, 8) - (4, 1, 8) broadcasts silently to (4, 4, 8)
        loss = ((out - y.unsqueeze(1)) ** 2).mean()
    else:
        loss = ((out - y) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    losses.append(loss.item().hex())
result = {"losses": losses}
if BUG == "compile":
    from torch._dynamo.utils import counters
    result.update(graph_breaks=sum(counters["graph_break"].values()), unique_graphs=counters["stats"]["unique_graphs"])
print(json.dumps(result))
