"""PyTorch reference for `nopescope-cli bench`: the same model and training step in Python.

Times training steps of a nanoGPT-style NoPE model (by default 6 layers, 6 heads, width 384,
dropout 0.2, no biases, tied head, the 96-token vocabulary, batch 64 of 32 tokens; --layers,
--dim, --heads, --dropout, --batch and --window as `nopescope-cli bench` takes them): forward,
cross-entropy, backward, gradient clipping at 1.0 and AdamW, in fp32 and under bf16 CPU
autocast. Prints tokens per second, the median over the timed steps after warm-up, like the C++
bench (--json: one object with fp32_tokens_per_s and bf16_tokens_per_s).

Not part of the build: it needs Debian's python3-torch (see tools/python_reference/run.sh).
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, None, 1e-5)


class Attention(nn.Module):
    def __init__(self, dim, heads, dropout, context):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim, bias=False)
        self.c_proj = nn.Linear(dim, dim, bias=False)
        self.heads = heads
        self.dropout = dropout
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.dropout(F.softmax(att, dim=-1), self.dropout, self.training)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return F.dropout(self.c_proj(y), self.dropout, self.training)


class Mlp(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim, bias=False)
        self.c_proj = nn.Linear(4 * dim, dim, bias=False)
        self.dropout = dropout

    def forward(self, x):
        return F.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")), self.dropout, self.training)


class Block(nn.Module):
    def __init__(self, dim, heads, dropout, context):
        super().__init__()
        self.ln_1 = LayerNorm(dim)
        self.attn = Attention(dim, heads, dropout, context)
        self.ln_2 = LayerNorm(dim)
        self.mlp = Mlp(dim, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    def __init__(self, vocab=96, dim=384, heads=6, layers=6, dropout=0.2, context=256):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.drop = dropout
        self.h = nn.ModuleList([Block(dim, heads, dropout, context) for _ in range(layers)])
        self.ln_f = LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx, targets):
        x = F.dropout(self.wte(idx), self.drop, self.training)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.view(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per precision")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--precisions", default="fp32,bf16",
                        help="comma-separated, of fp32 and bf16: on a CPU without bf16 instructions "
                             "PyTorch's bf16 products run 20 to 40 times slower than fp32")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (fp32_tokens_per_s, bf16_tokens_per_s)")
    args = parser.parse_args()
    precisions = [p for p in args.precisions.split(",") if p]
    if not precisions or any(p not in ("fp32", "bf16") for p in precisions):
        parser.error(f"--precisions: '{args.precisions}' is not a comma-separated list of fp32, bf16")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Gpt(dim=args.dim, heads=args.heads, layers=args.layers, dropout=args.dropout,
                context=max(256, args.window))
    decay = [p for n, p in model.named_parameters() if any(k in n for k in ("c_attn", "c_proj", "c_fc"))]
    rest = [p for n, p in model.named_parameters() if not any(k in n for k in ("c_attn", "c_proj", "c_fc"))]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                                  lr=1e-4, betas=(0.9, 0.99))
    x = torch.randint(0, 96, (args.batch, args.window))
    y = torch.randint(0, 96, (args.batch, args.window))
    result = {"layers": args.layers, "dim": args.dim, "heads": args.heads, "batch": args.batch,
              "window": args.window, "dropout": args.dropout, "threads": args.threads}
    for precision in precisions:
        times = []
        for i in range(args.warmup + args.steps):
            start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
                loss = model(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if i >= args.warmup:
                times.append(time.perf_counter() - start)
        median = statistics.median(times)
        result[f"{precision}_tokens_per_s"] = args.batch * args.window / median
        result[f"{precision}_step_ms"] = median * 1e3
        if not args.json:
            print(f"{precision}  {args.batch * args.window / median:8.0f} tokens/s   "
                  f"(median step {median * 1e3:.0f} ms)", flush=True)
    if args.json:
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
