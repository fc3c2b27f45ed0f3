"""Writes tests/data/model_fixture.pt: what PyTorch computes for a tiny NoPE GPT, for
tests/model/model_fixture_test.cpp to check the C++ model against (its fast kernels and its plain
LibTorch path), in fp32 and under bf16 CPU autocast.

The model is built from the blocks of the benchmark's PyTorch reference
(tools/python_reference/bench_nanogpt.py: LayerNorm without bias, causal attention scaled by
1/sqrt(head size), GELU with the tanh approximation as in the C++ model, no Linear biases), under
nanoGPT's container names (transformer.wte, transformer.h.N, transformer.ln_f, lm_head tied to
wte) so that the C++ loader (core/run/saved_model.h) reads the weights by their keys. Differences
from the benchmark's Gpt, which cannot be reused as it is: its wte, h and ln_f sit at the top level
instead of under `transformer`, it returns the loss rather than the logits, and each attention
keeps its causal mask as the buffer `attn.mask`, which is left out of the state dict here (the C++
loader only knows nanoGPT's `attn.bias` buffer). Its attention scales the scores as the C++ model
does (see Attention below). Dropout is 0, so the benchmark's F.dropout calls are the identity.

Weights are drawn wider than nanoGPT's N(0, 0.02) so that the attention is far from uniform and
GELU is used in its curved part, and LayerNorm weights are not all 1, so that every parameter
matters to the loss and to its gradient.

The file is nanoGPT's ckpt.pt layout (so loadSavedModel reads it as it is) plus the expected
values:
  model        the state dict: nanoGPT's names, lm_head.weight tied to transformer.wte.weight
  model_args   n_layer, n_head, n_embd, block_size, bias, vocab_size, dropout
  inputs       (B, T) int64 token ids;  targets: (B, T) int64, the next tokens
  fp32, bf16   each a dict: logits (B, T, V) float32 (bf16: the autocast output, bf16),
               loss (a 0-dim float32 tensor), grads (parameter name -> float32 gradient, the tied
               head's gradient summed into transformer.wte.weight)
The bf16 entries come from the same model and batch with the forward pass and the loss under
torch.autocast("cpu", dtype=torch.bfloat16) and the cross-entropy on logits.float(), as the C++
trainer computes them (training/evaluation.h: languageModelLoss).

Not here: the tolerances (the test states them) and training.
"""
import collections
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "python_reference"))
import bench_nanogpt  # noqa: E402  (the benchmark's blocks, reused)

N_LAYER, N_HEAD, N_EMBD, BLOCK_SIZE, VOCAB = 2, 4, 32, 16, 96
BATCH, TOKENS = 3, 12
SEED = 20240


class Attention(bench_nanogpt.Attention):
    """The benchmark's attention with the scores multiplied by 1/sqrt(head size), as the C++
    model does, instead of divided by sqrt(head size). The same in fp32 (within 2e-6 here), but
    in bf16 the two round differently: dividing moves this fixture's logits by up to 0.031 and
    its gradients by up to 0.0027, as much as the C++ fused GELU does, whereas in the C++ order
    the C++ model's plain LibTorch path computes exactly what is stored. Without dropout (it is 0
    here)."""

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                   for t in (q, k, v))  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v  # (B, nh, T, hs)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


def block():
    b = bench_nanogpt.Block(N_EMBD, N_HEAD, 0.0, BLOCK_SIZE)
    b.attn = Attention(N_EMBD, N_HEAD, 0.0, BLOCK_SIZE)
    return b


class GPT(nn.Module):
    """nanoGPT's containers around the benchmark's blocks; returns the logits (B, T, V)."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, N_EMBD),
            h=nn.ModuleList([block() for _ in range(N_LAYER)]),
            ln_f=bench_nanogpt.LayerNorm(N_EMBD),
        ))
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as in nanoGPT

    def forward(self, idx):
        x = self.transformer.wte(idx)  # (B, T, C), no positional encoding
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def draw_weights(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or "ln_f" in name:
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.2)


def step(model, inputs, targets, bf16):
    """Logits, loss and the gradient of every parameter after one backward pass."""
    model.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))
    loss.backward()
    grads = collections.OrderedDict(
        (name, p.grad.detach().clone()) for name, p in model.named_parameters())
    return {"logits": logits.detach().clone(), "loss": loss.detach().clone(), "grads": grads}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)  # reductions in a fixed order: the same file on every machine
    torch.manual_seed(SEED)
    model = GPT()
    draw_weights(model)
    model.train()  # as the C++ trainer; dropout is 0

    sequences = torch.randint(VOCAB, (BATCH, TOKENS + 1))
    inputs, targets = sequences[:, :-1].contiguous(), sequences[:, 1:].contiguous()

    state = collections.OrderedDict(
        (k, v.detach().clone()) for k, v in model.state_dict().items()
        if not k.endswith(".attn.mask"))
    fixture = {
        "about": "written by tools/model_fixture/make_fixture.py with PyTorch " + torch.__version__,
        "model": state,
        "model_args": dict(n_layer=N_LAYER, n_head=N_HEAD, n_embd=N_EMBD, block_size=BLOCK_SIZE,
                           bias=False, vocab_size=VOCAB, dropout=0.0),
        "inputs": inputs,
        "targets": targets,
        "fp32": step(model, inputs, targets, bf16=False),
        "bf16": step(model, inputs, targets, bf16=True),
    }
    path = os.path.join(out, "model_fixture.pt")
    torch.save(fixture, path)
    for precision in ("fp32", "bf16"):
        r = fixture[precision]
        print(f"{precision}: logits {tuple(r['logits'].shape)} {r['logits'].dtype}, "
              f"loss {r['loss'].item():.6f}, {len(r['grads'])} gradients")
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
