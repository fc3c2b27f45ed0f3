"""Writes the nanoGPT-style test files of tests/data with plain PyTorch (Debian's 1.13).

A minimal copy of nanoGPT's model.py without positional embedding (NoPE), bias=False: wte,
h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f, lm_head tied to wte.
Like nanoGPT on PyTorch < 2.0 (no flash attention), each attention keeps its causal mask as the
buffer `attn.bias`, which lands in the state dict. Weights are drawn as nanoGPT draws them, then
one AdamW step is taken so that the checkpoint carries a real optimizer state.

Writes, into the folder given (default: ../../tests/data):
  nanogpt_ckpt.pt         nanoGPT's ckpt.pt layout: model (keys prefixed `_orig_mod.`, as after
                          torch.compile), model_args, optimizer, iter_num, best_val_loss, config
  nanogpt_state_dict.pt   the same weights as a plain state dict, nanoGPT's names, no prefix
  nanogpt_reference.json  what this model computes for three prompts, for the C++ loader's test

Not here: training. The numbers only have to be fixed and reproducible.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

N_LAYER, N_HEAD, N_EMBD, BLOCK_SIZE = 2, 2, 24, 32
# The tool's character vocabulary (core/tasks/vocab.h): '\n', ' ', then '!'..'~'.
VOCAB = "\n " + "".join(chr(c) for c in range(33, 127))
PROMPTS = ["rev(3141592)", "$123+456=579", "Hello, NoPE!"]


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_attn = nn.Linear(cfg["n_embd"], 3 * cfg["n_embd"], bias=cfg["bias"])
        self.c_proj = nn.Linear(cfg["n_embd"], cfg["n_embd"], bias=cfg["bias"])
        self.n_head = cfg["n_head"]
        size = cfg["block_size"]
        self.register_buffer("bias", torch.tril(torch.ones(size, size)).view(1, 1, size, size))

    def forward(self, x, record=None):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C), heads concatenated
        if record is not None:
            record.append(y)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg["n_embd"], 4 * cfg["n_embd"], bias=cfg["bias"])
        self.c_proj = nn.Linear(4 * cfg["n_embd"], cfg["n_embd"], bias=cfg["bias"])
        self.approximate = "none"  # nanoGPT's nn.GELU(); the tool uses the tanh approximation

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate=self.approximate))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.mlp = MLP(cfg)

    def forward(self, x, record=None):
        x = x + self.attn(self.ln_1(x), record)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg["vocab_size"], cfg["n_embd"]),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])]),
            ln_f=LayerNorm(cfg["n_embd"], cfg["bias"]),
        ))
        self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as in nanoGPT
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg["n_layer"]))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, record=None):
        x = self.transformer.wte(idx)  # (B, T, C), no positional embedding
        for block in self.transformer.h:
            x = block(x, record)
        return x  # the final hidden states, before ln_f

    def logits(self, idx):
        return self.lm_head(self.transformer.ln_f(self.forward(idx)))


def encode(text):
    return [VOCAB.index(c) for c in text]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1337)
    model_args = dict(n_layer=N_LAYER, n_head=N_HEAD, n_embd=N_EMBD, block_size=BLOCK_SIZE,
                      bias=False, vocab_size=len(VOCAB), dropout=0.0)
    model = GPT(model_args)

    # One AdamW step on random text, so that the optimizer state is a real one.
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95),
                                  weight_decay=0.1)
    batch = torch.randint(len(VOCAB), (4, 17))
    logits = model.logits(batch[:, :-1])
    F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1)).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

    state = model.state_dict()
    checkpoint = {
        "model": {"_orig_mod." + k: v for k, v in state.items()},
        "model_args": model_args,
        "optimizer": optimizer.state_dict(),
        "iter_num": 1,
        "best_val_loss": torch.tensor(4.5),
        "config": dict(out_dir="out", batch_size=4, learning_rate=1e-3, compile=True,
                       dataset="nopescope", dtype="float32", beta2=0.95, decay_lr=True),
    }
    # nanoGPT saves the OrderedDict that state_dict() returns (with its _metadata); so do we.
    prefixed = type(state)(checkpoint["model"])
    prefixed._metadata = getattr(state, "_metadata", None)
    checkpoint["model"] = prefixed
    torch.save(checkpoint, os.path.join(out, "nanogpt_ckpt.pt"))
    torch.save(state, os.path.join(out, "nanogpt_state_dict.pt"))

    model.eval()
    with torch.no_grad():
        tokens = torch.tensor([encode(p) for p in PROMPTS])  # (3, 12)
        record = []
        hidden = model(tokens, record)
        # The same model with the tool's tanh GELU, to state how far the two are apart here.
        for block in model.transformer.h:
            block.mlp.approximate = "tanh"
        hidden_tanh = model(tokens)
    reference = {
        "about": "written by tools/make_nanogpt_checkpoint/make_checkpoint.py with PyTorch "
                 + torch.__version__,
        "model_args": model_args,
        "prompts": PROMPTS,
        "tokens": tokens.tolist(),
        "shape": [len(PROMPTS[0]), N_EMBD],
        "attn_layer1_prompt0": record[0][0].flatten().tolist(),
        "hidden_before_ln_f_prompt0": hidden[0].flatten().tolist(),
        "tolerance": 1e-4,
        "gelu_tanh_max_difference": (hidden - hidden_tanh).abs().max().item(),
        "note": "attn_layer1: the first block's attention output, heads concatenated, before "
                "c_proj (no GELU on its path). hidden_before_ln_f: after every block, with "
                "nanoGPT's exact GELU; the tool uses the tanh approximation, which differs by "
                "gelu_tanh_max_difference here. Compare within tolerance.",
    }
    with open(os.path.join(out, "nanogpt_reference.json"), "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    for name in ("nanogpt_ckpt.pt", "nanogpt_state_dict.pt", "nanogpt_reference.json"):
        print(name, os.path.getsize(os.path.join(out, name)), "bytes")


if __name__ == "__main__":
    main()
