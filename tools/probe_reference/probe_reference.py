"""An independent implementation of the position probes in plain PyTorch, written from the
description of the authors' public notebook (see docs/method.md, "The position probes"), to check
`nopescope-cli probe` against: the same weights (a run folder's weights.pt and config.json), the
same protocol (random strings over 5678 to train and 1234 to test, the 4-layer probe with SELU,
exp, SELU, MSE, AdamW at PyTorch's defaults, batches of 128 strings shuffled each epoch, 20
epochs), each probe trained alone in fp32 with PyTorch's own DataLoader and nn.Linear.

Usage: probe_reference.py RUN_FOLDER [--seed S] [--features vector,variance,norm,cosine]
Prints one line per attention layer with the Pearson R of each feature's probe.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "make_nanogpt_checkpoint"))
from make_checkpoint import GPT, VOCAB  # noqa: E402  the minimal nanoGPT of the test files


class Probe(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.l1, self.l2 = nn.Linear(dim, 512), nn.Linear(512, 384)
        self.l3, self.l4 = nn.Linear(384, 128), nn.Linear(128, 1)

    def forward(self, x):
        x = torch.selu(self.l1(x))
        x = torch.exp(self.l2(x))
        x = torch.selu(self.l3(x))
        return self.l4(x).squeeze(-1)


def strings(chars, count, length, gen):
    ids = torch.tensor([VOCAB.index(c) for c in chars])
    return ids[torch.randint(len(chars), (count, length), generator=gen)]


def features(h, feature):
    """h (N, T, C) -> inputs (N, T, F) and targets (N, T)."""
    N, T, _ = h.shape
    pos = torch.arange(T, dtype=torch.float32).expand(N, T)
    if feature == "vector":
        return h, pos
    if feature == "variance":
        return h.var(-1, unbiased=False, keepdim=True), pos
    if feature == "norm":
        return h.norm(dim=-1, keepdim=True), pos
    unit = h / h.norm(dim=-1, keepdim=True)
    cos_last = (unit @ unit[:, -1:, :].transpose(1, 2))  # (N, T, 1)
    return cos_last, (T - 1) - pos


def pearson(a, b):
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / (a.norm() * b.norm()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--features", default="vector,variance,norm,cosine")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    config = json.load(open(os.path.join(args.run, "config.json")))["model"]
    cfg = dict(n_layer=config["n_layer"], n_head=config["n_head"], n_embd=config["n_embd"],
               block_size=config["block_size"], bias=config["bias"], vocab_size=96)
    model = GPT(cfg)
    for block in model.transformer.h:
        block.mlp.approximate = "tanh"  # the tool's GELU
    state = torch.load(os.path.join(args.run, "weights.pt"))
    missing = model.load_state_dict({k: v for k, v in state.items()}, strict=False)
    assert not [k for k in missing.missing_keys if not k.endswith("attn.bias")], missing
    model.eval()

    gen = torch.Generator().manual_seed(args.seed)
    train, test = strings("5678", 1000, 16, gen), strings("1234", 500, 16, gen)
    with torch.no_grad():
        rec_train, rec_test = [], []
        model(train, rec_train)
        model(test, rec_test)
    feats = args.features.split(",")
    print("layer " + " ".join("%10s" % f for f in feats))
    torch.manual_seed(args.seed)
    for layer in range(cfg["n_layer"]):
        row = []
        for feature in feats:
            x, y = features(rec_train[layer], feature)
            xt, yt = features(rec_test[layer], feature)
            probe = Probe(x.shape[-1])
            optimizer = torch.optim.AdamW(probe.parameters())
            loader = DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True)
            for _ in range(20):
                for data, target in loader:
                    optimizer.zero_grad()
                    nn.functional.mse_loss(probe(data), target).backward()
                    optimizer.step()
            with torch.no_grad():
                row.append(pearson(probe(xt).flatten(), yt.flatten()))
        print("%5d " % (layer + 1) + " ".join("%10.3f" % r for r in row), flush=True)


if __name__ == "__main__":
    main()
