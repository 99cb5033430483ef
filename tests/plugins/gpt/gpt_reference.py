#!/usr/bin/python3
"""Reference side of test_gpt_parity.cpp: the peer's HeartGPT in PyTorch, given hlm's weights.

Loads the state dict hlm exported (torch.load), renames it to the peer's names, and saves with
torch.save: logits and next-token loss on batch 0, every parameter's gradient (under hlm's
names), the parameter count, and the losses of `--steps` AdamW steps on batches 0.. in turn.
"""
import argparse
import importlib.util
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def load_peer(path):
    spec = importlib.util.spec_from_file_location("torch_pretrain", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_peer_name(name):
    # The only naming difference: hlm's final LayerNorm is ln_f, the peer's is ln.
    return "ln." + name[len("ln_f."):] if name.startswith("ln_f.") else name


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--peer", required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--batches", required=True, help="dict with 'tokens' [steps, batch, context + 1]")
    p.add_argument("--out", required=True)
    for name in ("vocab", "context", "d-model", "layers", "heads", "ff", "steps"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight-decay", type=float, default=0.1)
    args = p.parse_args()
    torch.set_num_threads(1)

    peer = load_peer(args.peer)
    model = peer.HeartGPT(args.vocab, args.context, args.d_model, args.layers, args.heads, args.ff)
    ours = torch.load(args.weights)
    model.load_state_dict({to_peer_name(k): v for k, v in ours.items()}, strict=True)
    tokens = torch.load(args.batches)["tokens"]

    out = {"params": torch.tensor(sum(p.numel() for p in model.parameters()))}
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=args.weight_decay)
    named = dict(model.named_parameters())
    losses = []
    for step in range(args.steps):
        x, y = tokens[step][:, :-1], tokens[step][:, 1:]
        logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, args.vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if step == 0:
            out["logits"], out["loss"] = logits.detach(), loss.detach()
            for name in ours:
                out["grad." + name] = named[to_peer_name(name)].grad.detach().clone()
        opt.step()
        losses.append(loss.item())
    out["losses"] = torch.tensor(losses, dtype=torch.float64)
    torch.save(out, args.out)


if __name__ == "__main__":
    main()
