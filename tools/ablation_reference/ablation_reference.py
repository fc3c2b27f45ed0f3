"""An independent PyTorch reference for `nopescope-cli mechanism ablate`: the attention
ablations, computed again in plain PyTorch on the same weights and the same prompts.

1. Builds a NoPE nanoGPT-shaped model with its own weights (--layers, --heads, --dim, --context;
   seeded by --seed): nanoGPT's init (Linear and Embedding weights ~ N(0, 0.02), every c_proj
   weight ~ N(0, 0.02/sqrt(2*n_layer)), LayerNorm weights 1, eps 1e-5, no biases), GELU with the
   tanh approximation, the 96-character vocabulary, the output head tied to wte. Saves it as a
   nanoGPT ckpt.pt (`model` under nanoGPT's names, `model_args`) in --work (default: a new
   temporary folder), in the layout of tools/make_nanogpt_checkpoint/make_checkpoint.py.
2. Runs the tool on it: `nopescope-cli mechanism ablate --checkpoint WORK/ckpt.pt --task T
   --samples N --out WORK/tool [--as-authors]`, which writes WORK/tool/ablations.csv
   (ablation,point,layer,adjacency_mean,adjacency_std) and WORK/tool/tokens.csv (the N prompts it
   analysed, T token ids a line).
3. Computes the same table from tokens.csv with its own forward pass, prints both side by side
   (tool mean, reference mean, difference, ok) and a verdict; exits 1 when a row is outside its
   tolerance (or missing), 0 otherwise.

Hidden states: `embedding` (layer 0) is the input of block 0; `attn` at layer l (1-based) is the
attention output of block l, heads concatenated, before c_proj. Each ablation changes every
block's attention (scores s = q k^T / sqrt(head size), causal):
  softmax   the model's own (future scores -inf, softmax)
  nodiv     w = s on earlier-or-same tokens, 0 on future ones
  divsum    w = s / sum(s);  abs, relu, gelu, sigmoid: w = f(s) / sum f(s)   (sums over
            earlier-or-same tokens, future weights 0; a row summing to exactly 0 gets zeros)
  uniform   1/(i+1) on the i+1 earlier-or-same tokens of query i
  no_q, no_k, no_v    q (k, v) = a, the attention's input (ln_1's output), not its projection
  shrink_x  q = k = v = a / S (--shrink-x, default 10), softmax
  v_out     the attention returns a unchanged (no c_proj); a is that layer's `attn` capture
  eqx, randx, constant   the token embeddings are replaced by drawn inputs (one draw per prompt),
            which are the `embedding` row: eqx = T one-hot vectors at distinct random
            coordinates, plus 0.1, normalised to length 1, times 0.05; randx = uniform [0,1);
            constant = one uniform [0,1) vector at every position. Softmax attention.
With --as-authors (the original research code): the functions other than softmax see the scores
with future entries set to 0 (sigmoid then gives future tokens 0.5, and sums include them),
uniform is 1/T on all T tokens, and the division is plain (NaN when a sum is 0).

Score of one prompt: over its self-cosine matrix C (unit vectors, norms clamped at 1e-8), the
share of triples i < j < k with C[k][i] < C[k][j] strictly (NaN compares false); reported as the
mean and the population std over the prompts. Exact ties decide some rows (v_out: nothing mixes
positions, so equal tokens have equal states), so every Linear here maps equal rows to bitwise
equal outputs, as exact arithmetic does (see linear()).

Tolerance: |tool - reference| <= 0.005 for the ablations on the tokens; for eqx, randx and
constant (different draws) 4 * sqrt(sd_tool^2/N + sd_ref^2/N) + 0.005. Both NaN counts as equal.

Usage: run.sh [--cli PATH] [--task addition] [--samples 256] [--as-authors] [--work DIR]
              [--layers 6 --heads 6 --dim 384 --context 64] [--seed 0] [--shrink-x 10]
       run.sh --reference-only [--tokens FILE] ...   (no tool: the reference table alone, on
              tokens.csv-style FILE or on random addition prompts)
"""
import argparse
import collections
import csv
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

# The tool's character vocabulary (core/tasks/vocab.h): '\n', ' ', then '!'..'~'.
VOCAB = "\n " + "".join(chr(c) for c in range(33, 127))

ABLATIONS = ["softmax", "nodiv", "divsum", "abs", "relu", "gelu", "sigmoid", "uniform",
             "no_q", "no_k", "no_v", "shrink_x", "v_out", "eqx", "randx", "constant"]
DRAWN = {"eqx", "randx", "constant"}  # inputs drawn in place of the token embeddings
NORMALISED = {"divsum": lambda s: s, "abs": torch.abs, "relu": torch.relu,
              "gelu": lambda s: F.gelu(s, approximate="tanh"), "sigmoid": torch.sigmoid}
TOLERANCE = 0.005


# ---------------------------------------------------------------------------------------------
# The model: weights as a nanoGPT state dict, and a functional forward pass over it.

def make_weights(n_layer, n_head, n_embd, block_size, seed):
    """nanoGPT's init of a bias-free NoPE GPT, as an ordered state dict under nanoGPT's names
    (with PyTorch < 2.0's causal-mask buffer attn.bias, as nanoGPT saves it there)."""
    gen = torch.Generator().manual_seed(seed)
    proj_std = 0.02 / math.sqrt(2 * n_layer)

    def normal(rows, cols, std):
        return torch.randn(rows, cols, generator=gen) * std

    sd = collections.OrderedDict()
    sd["transformer.wte.weight"] = normal(len(VOCAB), n_embd, 0.02)
    mask = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)
    for layer in range(n_layer):
        p = "transformer.h.%d." % layer
        sd[p + "ln_1.weight"] = torch.ones(n_embd)
        sd[p + "attn.bias"] = mask.clone()
        sd[p + "attn.c_attn.weight"] = normal(3 * n_embd, n_embd, 0.02)
        sd[p + "attn.c_proj.weight"] = normal(n_embd, n_embd, proj_std)
        sd[p + "ln_2.weight"] = torch.ones(n_embd)
        sd[p + "mlp.c_fc.weight"] = normal(4 * n_embd, n_embd, 0.02)
        sd[p + "mlp.c_proj.weight"] = normal(n_embd, 4 * n_embd, proj_std)
    sd["transformer.ln_f.weight"] = torch.ones(n_embd)
    sd["lm_head.weight"] = sd["transformer.wte.weight"]  # tied: the same tensor, saved once
    return sd


def save_checkpoint(sd, model_args, path):
    """nanoGPT's ckpt.pt layout (as make_checkpoint.py writes it, without the optimizer)."""
    checkpoint = {"model": sd, "model_args": model_args, "iter_num": 0,
                  "best_val_loss": torch.tensor(float("inf")),
                  "config": dict(out_dir="out", dataset="nopescope", dtype="float32",
                                 compile=False, init_from="scratch")}
    torch.save(checkpoint, path)


def layer_norm(x, weight):
    return F.layer_norm(x, weight.shape, weight, None, 1e-5)


def linear(x, weight):
    """x W^T, computed once per distinct row of x and gathered back: equal rows (the same token
    where nothing mixes positions, as in v_out) get bitwise equal outputs, as in exact arithmetic.
    A plain x @ W^T may round a row differently by where it sits in the matrix, which breaks the
    exact ties of the adjacency count at random."""
    flat = x.reshape(-1, x.shape[-1])
    if not bool(torch.isfinite(flat).all()):
        return x @ weight.t()  # NaN rows (--as-authors) stay NaN either way
    rows, inverse = torch.unique(flat, dim=0, return_inverse=True)
    return (rows @ weight.t())[inverse].view(*x.shape[:-1], weight.shape[0])


def heads(t, n_head):
    B, T, C = t.shape
    return t.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, nh, T, hs)


def attention_weights(s, ablation, as_authors):
    """Weights (B, nh, T, T) from the scores s for one ablation of the weighting."""
    T = s.size(-1)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    if ablation not in ("nodiv", "uniform") and ablation not in NORMALISED:
        return torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
    if ablation == "uniform":
        if as_authors:
            return torch.full_like(s, 1.0 / T)
        w = causal.to(s.dtype) / torch.arange(1, T + 1, dtype=s.dtype).unsqueeze(1)
        return w.expand_as(s)
    zeroed = s.masked_fill(~causal, 0.0)
    if ablation == "nodiv":
        return zeroed
    if as_authors:  # the function sees the zeroed future scores; plain division
        f = NORMALISED[ablation](zeroed)
        return f / f.sum(-1, keepdim=True)
    f = NORMALISED[ablation](s).masked_fill(~causal, 0.0)
    total = f.sum(-1, keepdim=True)
    safe = torch.where(total == 0, torch.ones_like(total), total)
    return torch.where(total == 0, torch.zeros_like(f), f / safe)


def attention(a, sd, prefix, n_head, ablation, as_authors, shrink):
    """One block's attention on its input a (B, T, C): (output to the residual, capture)."""
    B, T, C = a.shape
    if ablation == "v_out":
        return a, a
    if ablation == "shrink_x":
        q = k = v = a / shrink
    else:
        q, k, v = linear(a, sd[prefix + "attn.c_attn.weight"]).split(C, dim=2)
        q = a if ablation == "no_q" else q
        k = a if ablation == "no_k" else k
        v = a if ablation == "no_v" else v
    q, k, v = heads(q, n_head), heads(k, n_head), heads(v, n_head)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(C // n_head)
    w = attention_weights(s, ablation, as_authors)
    y = (w @ v).transpose(1, 2).contiguous().view(B, T, C)  # heads side by side
    return linear(y, sd[prefix + "attn.c_proj.weight"]), y


def forward_captures(x, sd, n_layer, n_head, ablation, as_authors, shrink):
    """The captures of a forward pass from the block-0 input x (B, T, C):
    [embedding, attn 1, ..., attn L]."""
    captures = [x]
    for layer in range(n_layer):
        p = "transformer.h.%d." % layer
        out, y = attention(layer_norm(x, sd[p + "ln_1.weight"]), sd, p, n_head, ablation,
                           as_authors, shrink)
        captures.append(y)
        x = x + out
        h = linear(layer_norm(x, sd[p + "ln_2.weight"]), sd[p + "mlp.c_fc.weight"])
        x = x + linear(F.gelu(h, approximate="tanh"), sd[p + "mlp.c_proj.weight"])
    return captures


def drawn_inputs(ablation, N, T, C, gen):
    """The inputs that replace the token embeddings for eqx, randx and constant: (N, T, C)."""
    if ablation == "randx":
        return torch.rand(N, T, C, generator=gen)
    if ablation == "constant":
        return torch.rand(N, 1, C, generator=gen).expand(N, T, C).contiguous()
    if T > C:
        raise SystemExit("eqx needs T <= C distinct coordinates (T=%d, C=%d)" % (T, C))
    x = torch.zeros(N, T, C)
    for n in range(N):
        coords = torch.randperm(C, generator=gen)[:T]
        x[n, torch.arange(T), coords] = 1.0
    x = x + 0.1
    return x / x.norm(dim=-1, keepdim=True) * 0.05


# ---------------------------------------------------------------------------------------------
# The adjacency score.

def adjacency_scores(h):
    """Per-prompt adjacency score of the hidden states h (N, T, C): (N,) float64."""
    N, T, _ = h.shape
    unit = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    cos = unit @ unit.transpose(1, 2)  # (N, T, T); row k against columns i, j
    r = torch.arange(T)
    k, i, j = r.view(T, 1, 1), r.view(1, T, 1), r.view(1, 1, T)
    triple = (i < j) & (j < k)  # (k, i, j)
    nearer = cos.unsqueeze(3) < cos.unsqueeze(2)  # [n, k, i, j] = C[k][i] < C[k][j]; NaN: false
    hits = (nearer & triple).sum(dim=(1, 2, 3)).double()
    total = float(sum(t * (t - 1) // 2 for t in range(T)))
    return hits / total if total > 0 else torch.full((N,), float("nan"), dtype=torch.float64)


def reference_table(tokens, sd, cfg, as_authors, shrink, seed):
    """{(ablation, point, layer): (mean, std)} over the prompts tokens (N, T)."""
    gen = torch.Generator().manual_seed(seed + 1)
    N, T = tokens.shape
    table = collections.OrderedDict()
    with torch.no_grad():
        for ablation in ABLATIONS:
            if ablation in DRAWN:
                x = drawn_inputs(ablation, N, T, cfg["n_embd"], gen)
            else:
                x = sd["transformer.wte.weight"][tokens]
            captures = forward_captures(x, sd, cfg["n_layer"], cfg["n_head"], ablation,
                                        as_authors, shrink)
            for layer, h in enumerate(captures):
                scores = adjacency_scores(h)
                point = "embedding" if layer == 0 else "attn"
                table[(ablation, point, layer)] = (scores.mean().item(),
                                                   scores.std(unbiased=False).item())
    return table


# ---------------------------------------------------------------------------------------------
# Files, the tool, the comparison.

def read_tokens(path):
    with open(path) as f:
        rows = [[int(t) for t in line.strip().split(",")] for line in f if line.strip()]
    if not rows or len({len(r) for r in rows}) != 1:
        raise SystemExit("%s: expected N lines of T comma-separated token ids" % path)
    return torch.tensor(rows, dtype=torch.long)


def addition_prompts(N, gen):
    """Random addition prompts $a+b= left-padded with '\\n' to 9 characters (reference-only)."""
    ab = torch.randint(0, 1000, (N, 2), generator=gen).tolist()
    texts = [("$%d+%d=" % (a, b)).rjust(9, "\n") for a, b in ab]
    return torch.tensor([[VOCAB.index(c) for c in t] for t in texts], dtype=torch.long)


def read_tool_table(path):
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        expected = ["ablation", "point", "layer", "adjacency_mean", "adjacency_std"]
        if header != expected:
            raise SystemExit("%s: header %s, expected %s" % (path, header, expected))
        table = collections.OrderedDict()
        for row in reader:
            if row:
                table[(row[0], row[1], int(row[2]))] = (float(row[3]), float(row[4]))
    return table


def run_tool(args, work):
    out = os.path.join(work, "tool")
    command = [args.cli, "mechanism", "ablate", "--checkpoint", os.path.join(work, "ckpt.pt"),
               "--task", args.task, "--samples", str(args.samples), "--out", out]
    if args.as_authors:
        command.append("--as-authors")
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command)
    if result.returncode != 0:
        raise SystemExit("the tool failed with exit status %d" % result.returncode)
    return out


def compare(tool, ref, N):
    """Prints the side-by-side table; returns the number of rows that fail."""
    keys = list(tool) + [k for k in ref if k not in tool]
    fmt = "%-9s %-9s %5s %10s %10s %10s %10s  %s"
    print(fmt % ("ablation", "point", "layer", "tool", "reference", "difference", "tolerance",
                 "ok"))
    failures = 0
    for key in keys:
        t, r = tool.get(key), ref.get(key)
        if t is None or r is None:
            failures += 1
            print(fmt % (key[0], key[1], key[2], "-" if t is None else "%.4f" % t[0],
                         "-" if r is None else "%.4f" % r[0], "", "", "MISSING"))
            continue
        if key[0] in DRAWN:
            tol = 4 * math.sqrt(t[1] ** 2 / N + r[1] ** 2 / N) + TOLERANCE
        else:
            tol = TOLERANCE
        both_nan = math.isnan(t[0]) and math.isnan(r[0])
        diff = t[0] - r[0]
        ok = both_nan or abs(diff) <= tol  # one NaN: the comparison is false
        failures += 0 if ok else 1
        print(fmt % (key[0], key[1], key[2], "%.4f" % t[0], "%.4f" % r[0],
                     "%+.4f" % diff, "%.4f" % tol, "yes" if ok else "NO"))
    return failures


def print_reference(ref):
    fmt = "%-9s %-9s %5s %10s %10s"
    print(fmt % ("ablation", "point", "layer", "mean", "std"))
    for (ablation, point, layer), (mean, std) in ref.items():
        print(fmt % (ablation, point, layer, "%.4f" % mean, "%.4f" % std))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(here, "..", "..", "build", "app",
                                                  "nopescope-cli"))
    ap.add_argument("--task", default="addition")
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--as-authors", action="store_true")
    ap.add_argument("--work", default=None, help="folder for ckpt.pt and tool/ (default: a "
                    "new temporary folder, kept)")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shrink-x", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reference-only", action="store_true",
                    help="skip the tool; print the reference table alone")
    ap.add_argument("--tokens", default=None,
                    help="with --reference-only: a tokens.csv to analyse (default: random "
                         "addition prompts, --samples of them)")
    args = ap.parse_args()
    if args.dim % args.heads:
        raise SystemExit("--dim must be a multiple of --heads")
    torch.set_num_threads(args.threads)

    work = args.work or tempfile.mkdtemp(prefix="ablation_reference_")
    os.makedirs(work, exist_ok=True)
    cfg = dict(n_layer=args.layers, n_head=args.heads, n_embd=args.dim,
               block_size=args.context, bias=False, vocab_size=len(VOCAB), dropout=0.0)
    sd = make_weights(args.layers, args.heads, args.dim, args.context, args.seed)
    save_checkpoint(sd, cfg, os.path.join(work, "ckpt.pt"))
    mode = "as the authors' code" if args.as_authors else "causal kept"
    print("model: %d layers, %d heads, width %d, context %d, seed %d; %s; work folder %s"
          % (args.layers, args.heads, args.dim, args.context, args.seed, mode, work), flush=True)

    if args.reference_only:
        if args.tokens:
            tokens = read_tokens(args.tokens)
        else:
            tokens = addition_prompts(args.samples, torch.Generator().manual_seed(args.seed))
        print("prompts: %d of %d tokens" % tuple(tokens.shape))
        print_reference(reference_table(tokens, sd, cfg, args.as_authors, args.shrink_x,
                                        args.seed))
        return 0

    out = run_tool(args, work)
    tokens = read_tokens(os.path.join(out, "tokens.csv"))
    tool = read_tool_table(os.path.join(out, "ablations.csv"))
    N = tokens.shape[0]
    print("prompts: %d of %d tokens (%s)" % (N, tokens.shape[1], os.path.join(out,
                                                                             "tokens.csv")))
    ref = reference_table(tokens, sd, cfg, args.as_authors, args.shrink_x, args.seed)
    failures = compare(tool, ref, N)
    if failures:
        print("verdict: FAIL, %d of %d rows outside tolerance or missing" % (
            failures, len(set(tool) | set(ref))))
        return 1
    print("verdict: OK, all %d rows within tolerance" % len(ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
