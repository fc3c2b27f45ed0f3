"""The authors' training step for prompt-completion training (`causal_training=False`), run in
plain PyTorch fp32 on the weights and batches that the C++ tool exported, so that a C++ test can
compare its own steps against what the authors' code computes.

Written from the semantics of the authors' public code (github.com/LittleDijkstraZ/PE_investigation:
train.py, pe_info/model_nope.py, pe_info_experiments/12_scale_training_script_add3_addmod.py); the
code here is our own. What it follows:
  model      nanoGPT-style NoPE GPT, no biases, no positional embedding, dropout 0: pre-LayerNorm
             blocks x += attn(ln_1(x)); x += mlp(ln_2(x)); ln_f; lm_head tied to wte (one
             parameter). LayerNorm weight only, eps 1e-5. c_attn (C -> 3C) split into q, k, v;
             scores scaled by 1/sqrt(head size); MLP c_fc (C -> 4C), GELU in the tanh form
             0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), c_proj (4C -> C).
  mask       key_ok = not padding (the authors: tokens != space); a query q may see key k iff
             (key_ok[q] and key_ok[k] and k <= q) or k == q. The `or k == q` is the authors'
             forced diagonal: a left-padding query attends to itself only, so no softmax row is
             ever all -inf and no NaN arises. Without padding this is the plain causal mask, which
             is what their code uses when a batch needs no padding.
  loss       logits of the last position only, cross-entropy with `target`, mean over the batch.
  lr         get_lr(it): it < warmup: lr * it / warmup (0 at it = 0); it > lr_decay_iters: min_lr;
             else min_lr + 0.5 (1 + cos(pi (it - warmup) / (lr_decay_iters - warmup))) (lr - min_lr).
             Step i uses get_lr(i), i from 0.
  optimizer  torch.optim.AdamW, two groups: the weights of Linear modules with weight_decay (the
             four projections of each block), everything else with 0 (LayerNorm weights and the
             tied embedding / head, which is not decayed); eps 1e-8 (PyTorch's default), betas
             (beta1, beta2), amsgrad off. Run with foreach=False (the single-tensor loop): on CPU
             the authors' code takes neither the fused nor, in PyTorch 1.13, the foreach path.
  step       forward, backward, clip_grad_norm_(all parameters, grad_clip) unless grad_clip is 0,
             optimizer step, zero_grad(set_to_none=True). fp32, one thread.

Usage: authors_step.py INPUT OUTPUT

INPUT (torch.load; a flat dict of tensors, as the C++ side writes it with torch::pickle_save):
  n_layer, n_head, n_embd, vocab_size, block_size, steps, warmup_iters, lr_decay_iters, pad_token
                                      0-dim int64
  learning_rate, min_lr, weight_decay, beta1, beta2, grad_clip
                                      0-dim float64
  weights.<name>                      the initial parameters under nanoGPT's names (see NAMES);
                                      weights.lm_head.weight must equal weights.transformer.wte.weight
  batch.<i>.inputs   (B, T) int64     token ids, left-padded with pad_token, i = 0..steps-1
  batch.<i>.padding  (B, T) bool      true at the left padding; must equal inputs == pad_token
                                      (the authors mask every pad_token; the tasks have no space)
  batch.<i>.target   (B,) int64       the token that the last position must predict
  B and T may differ from batch to batch.

OUTPUT (torch.save; a flat dict): every entry of INPUT, plus
  python.lr         (steps,) float64  the learning rate of each step
  python.loss       (steps,) float64  the loss of each step, before its update
  python.grad_norm  (steps,) float64  the total gradient 2-norm before clipping (as
                                      clip_grad_norm_ returns it, computed in fp32)
  python.decayed    (P,) int64        1 where the parameter gets weight decay, 0 where not, in the
                                      order of NAMES
  final.<name>      float32           each parameter after the last step, for every name of the
                                      input's weights; final.lm_head.weight == final.transformer.wte.weight

NAMES: the names of the input's `weights.` entries without the prefix, sorted as Python sorts
strings (so transformer.h.10 comes before transformer.h.2). With n_layer = L:
  lm_head.weight                                          0 (tied to wte, not decayed)
  transformer.h.<i>.attn.c_attn.weight, .attn.c_proj.weight,
  transformer.h.<i>.mlp.c_fc.weight, .mlp.c_proj.weight   1
  transformer.h.<i>.ln_1.weight, .ln_2.weight             0
  transformer.ln_f.weight                                 0
  transformer.wte.weight                                  0

Not here: the authors' dropout 0.2 and bf16 autocast (this is the fp32, dropout-0 step), their
data sampling (the batches come from the file) and their evaluation loop.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "python_reference"))
from bench_nanogpt import LayerNorm  # noqa: E402  weight only, no bias, eps 1e-5


def tanh_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim, bias=False)
        self.c_proj = nn.Linear(dim, dim, bias=False)
        self.heads = heads

    def forward(self, x, allowed):
        """allowed: (B, 1, T, T) bool, true where query (row) may attend to key (column)."""
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(~allowed, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim, bias=False)
        self.c_proj = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        return self.c_proj(tanh_gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln_1 = LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln_2 = LayerNorm(dim)
        self.mlp = Mlp(dim)

    def forward(self, x, allowed):
        x = x + self.attn(self.ln_1(x), allowed)
        return x + self.mlp(self.ln_2(x))


class NopeGpt(nn.Module):
    """Registration order as nanoGPT's (transformer before lm_head), so that named_parameters()
    names the tied parameter transformer.wte.weight."""

    def __init__(self, vocab, dim, heads, layers):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, dim),
            h=nn.ModuleList([Block(dim, heads) for _ in range(layers)]),
            ln_f=LayerNorm(dim),
        ))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, inputs, padding):
        T = inputs.size(1)
        key_ok = ~padding
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        diagonal = torch.eye(T, dtype=torch.bool)
        allowed = (key_ok[:, :, None] & key_ok[:, None, :] & causal) | diagonal  # (B, T, T)
        x = self.transformer.wte(inputs)  # no positional encoding
        for block in self.transformer.h:
            x = block(x, allowed[:, None])
        x = self.transformer.ln_f(x)
        return self.lm_head(x[:, -1, :])  # (B, V): the last position only


def decay_split(model):
    """The authors' rule: weights of Linear modules decay; weights of LayerNorm and Embedding
    modules do not; the head's weight is taken out of the decayed set because it is the
    embedding's parameter (kept once, under transformer.wte.weight, not decayed)."""
    decay, no_decay = set(), set()
    for module_name, module in model.named_modules():
        for pname, _ in module.named_parameters(recurse=False):
            full = f"{module_name}.{pname}" if module_name else pname
            if pname.endswith("bias"):
                no_decay.add(full)
            elif isinstance(module, nn.Linear):
                decay.add(full)
            elif isinstance(module, (LayerNorm, nn.LayerNorm, nn.Embedding)):
                no_decay.add(full)
    decay.discard("lm_head.weight")
    params = dict(model.named_parameters())
    assert not (decay & no_decay) and decay | no_decay == set(params), (decay, no_decay)
    return decay, no_decay, params


def get_lr(it, learning_rate, min_lr, warmup_iters, lr_decay_iters):
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: authors_step.py INPUT OUTPUT")
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    data = torch.load(sys.argv[1])
    data = {str(k): v for k, v in data.items()}

    def integer(key):
        return int(data[key].item())

    def real(key):
        return float(data[key].item())

    n_layer, n_head, n_embd = integer("n_layer"), integer("n_head"), integer("n_embd")
    vocab, steps, pad = integer("vocab_size"), integer("steps"), integer("pad_token")
    warmup_iters, lr_decay_iters = integer("warmup_iters"), integer("lr_decay_iters")
    learning_rate, min_lr = real("learning_rate"), real("min_lr")
    weight_decay, grad_clip = real("weight_decay"), real("grad_clip")
    betas = (real("beta1"), real("beta2"))

    model = NopeGpt(vocab, n_embd, n_head, n_layer)
    names = sorted(k[len("weights."):] for k in data if k.startswith("weights."))
    expected = sorted(model.state_dict())  # both names of the tie
    if names != expected:
        sys.exit(f"the input's weights do not match the model: {sorted(set(names) ^ set(expected))}")
    if not torch.equal(data["weights.lm_head.weight"], data["weights.transformer.wte.weight"]):
        sys.exit("weights.lm_head.weight differs from weights.transformer.wte.weight (they are tied)")
    with torch.no_grad():
        for name, p in model.named_parameters():  # the tied parameter once, as wte
            w = data["weights." + name]
            if w.shape != p.shape:
                sys.exit(f"weights.{name}: shape {tuple(w.shape)}, the model wants {tuple(p.shape)}")
            p.copy_(w.to(torch.float32))

    decay, no_decay, params = decay_split(model)
    optimizer = torch.optim.AdamW(
        [{"params": [params[n] for n in sorted(decay)], "weight_decay": weight_decay},
         {"params": [params[n] for n in sorted(no_decay)], "weight_decay": 0.0}],
        lr=learning_rate, betas=betas, eps=1e-8, foreach=False)

    lrs, losses, norms = [], [], []
    model.train()  # no dropout in this model
    for i in range(steps):
        inputs = data[f"batch.{i}.inputs"].to(torch.int64)
        padding = data[f"batch.{i}.padding"].to(torch.bool)
        target = data[f"batch.{i}.target"].to(torch.int64).view(-1)
        if not torch.equal(padding, inputs == pad):
            sys.exit(f"batch.{i}: padding differs from inputs == pad_token; the authors mask "
                     "every pad_token, so their step is not defined for this batch")
        if padding[:, -1].any():
            sys.exit(f"batch.{i}: a row ends in padding")
        lr = get_lr(i, learning_rate, min_lr, warmup_iters, lr_decay_iters)
        for group in optimizer.param_groups:
            group["lr"] = lr
        logits = model(inputs, padding)
        loss = F.cross_entropy(logits, target, ignore_index=-1)
        loss.backward()
        if grad_clip != 0.0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        else:
            norm = torch.norm(torch.stack([p.grad.norm(2) for p in model.parameters()]), 2)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        lrs.append(lr)
        losses.append(loss.item())
        norms.append(norm.item())
        print(f"step {i}: lr {lr:.6g} loss {loss.item():.6f} grad norm {norm.item():.6f}")

    out = dict(data)
    out["python.lr"] = torch.tensor(lrs, dtype=torch.float64)
    out["python.loss"] = torch.tensor(losses, dtype=torch.float64)
    out["python.grad_norm"] = torch.tensor(norms, dtype=torch.float64)
    out["python.decayed"] = torch.tensor([1 if n in decay else 0 for n in names], dtype=torch.int64)
    for name, p in model.state_dict().items():  # both names of the tie
        out["final." + name] = p.detach().clone().to(torch.float32)
    torch.save(out, sys.argv[2])
    print(f"{sys.argv[2]}: {steps} steps, {len(names)} parameters, "
          f"{int(out['python.decayed'].sum())} decayed")


if __name__ == "__main__":
    main()
