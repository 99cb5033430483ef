#!/usr/bin/env python3
"""The reference model (spec hlm-gpt-small) trained on one GPU: step time, phases and MFU.

The scaling study's `cluster` block predicts GPU step times from an MFU (model FLOP
utilisation) that is assumed unless measured. This measures it for the model the study
trains, the way a PyTorch user would run it on a GPU: eager mode, AdamW, fp32 (TF32 off, as
PyTorch defaults for matmuls) or bf16 autocast; and a "tuned" row per point with PyTorch's
fused attention and fused AdamW; and a "graph" row, the peer's whole step captured in a CUDA
graph and replayed, to show how much of a small step is launching kernels.

  python3 tools/bench/gpu-reference-model.py [--steps 40] [--json FILE]

Needs a CUDA PyTorch (any 2.x). MFU = tokens/s x flops_per_token / peak, with the spec's
flops_per_token and the peak of a large GEMM measured in the same run (and the datasheet's
when --datasheet-tflops is given). Phases are timed with CUDA events around forward,
backward and the optimizer step; the step is the median over timed steps.
With --device cpu it runs the same code on the CPU (small sizes) to check the script.
"""
import argparse, json, math, statistics, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F

SPEC = dict(vocab=512, d=256, layers=4, heads=4, ff=1024, params=3323392)
SPEC_CONTEXT_FOR_PARAMS = 128  # the spec's parameter count includes 128 learned positions


class Block(nn.Module):
    def __init__(self, d, heads, ff, fused_attention):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, ff), nn.Linear(ff, d)
        self.heads, self.fused_attention = heads, fused_attention

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.fused_attention:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # the peer's attention, as written in ../shared/peers/torch_pretrain.py
            att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
            y = att.masked_fill(mask[:t, :t], float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class HeartGPT(nn.Module):
    """Pre-LayerNorm decoder, learned positions, output head tied to the token embedding."""

    def __init__(self, context, fused_attention, device):
        super().__init__()
        d = SPEC["d"]
        self.tok, self.pos = nn.Embedding(SPEC["vocab"], d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(
            Block(d, SPEC["heads"], SPEC["ff"], fused_attention) for _ in range(SPEC["layers"]))
        self.ln = nn.LayerNorm(d)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
        self.register_buffer("mask", torch.triu(torch.ones(context, context, dtype=torch.bool), 1),
                             persistent=False)
        self.register_buffer("positions", torch.arange(context), persistent=False)
        self.to(device)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(self.positions[:t])
        for blk in self.blocks:
            x = blk(x, self.mask)
        return self.ln(x) @ self.tok.weight.t()


def flops_per_token(context):
    """The spec's count: 6 x (non-embedding parameters + vocab x d) + 6 x layers x context x d."""
    d, layers, vocab = SPEC["d"], SPEC["layers"], SPEC["vocab"]
    non_embedding = SPEC["params"] - vocab * d - SPEC_CONTEXT_FOR_PARAMS * d
    return 6 * (non_embedding + vocab * d) + 6 * layers * context * d


class Clock:
    """CUDA events on a GPU (the work is asynchronous), the wall clock on a CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def seconds(self, a, b):
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b) / 1e3
        return b - a


def spec_model(context, fused_attention, device):
    """The spec's model at this window, seeded; refused if its parameters are not the spec's."""
    torch.manual_seed(0)
    model = HeartGPT(context, fused_attention=fused_attention, device=device)
    params = sum(p.numel() for p in model.parameters()) - (context - SPEC_CONTEXT_FOR_PARAMS) * SPEC["d"]
    assert params == SPEC["params"], f"not the spec's model: {params} parameters"
    return model


def point_result(context, batch, bf16, variant, step_s, phases, losses):
    """One measured point, as printed and written: medians, throughput and MFU's numerator."""
    if not all(math.isfinite(l) for l in losses):
        raise SystemExit(f"{variant}: non-finite loss at context {context} batch {batch}: {losses}")
    tokens_per_s = batch * context / step_s
    return dict(context=context, batch=batch, bf16=bf16, tuned=variant == "tuned", variant=variant,
                step_s=step_s, forward_s=phases.get("forward", float("nan")),
                backward_s=phases.get("backward", float("nan")),
                optimizer_s=phases.get("optimizer", float("nan")), tokens_per_s=tokens_per_s,
                flops_per_token=flops_per_token(context),
                achieved_tflops=tokens_per_s * flops_per_token(context) / 1e12,
                loss_first=losses[0], loss_last=losses[-1])


def measure_point(device, context, batch, bf16, tuned, steps, warmup):
    model = spec_model(context, fused_attention=tuned, device=device)
    fused = dict(fused=True) if tuned and device.type == "cuda" else {}
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, **fused)
    g = torch.Generator(device="cpu").manual_seed(1234)
    clock = Clock(device)
    phases = {"forward": [], "backward": [], "optimizer": [], "step": []}
    losses = []
    for step in range(warmup + steps):
        seq = torch.randint(0, SPEC["vocab"], (batch, context + 1), generator=g).to(device)
        x, y = seq[:, :-1], seq[:, 1:]
        t0 = clock.mark()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, SPEC["vocab"]), y.reshape(-1))
        t1 = clock.mark()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t2 = clock.mark()
        opt.step()
        t3 = clock.mark()
        if step >= warmup:
            phases["forward"].append(clock.seconds(t0, t1))
            phases["backward"].append(clock.seconds(t1, t2))
            phases["optimizer"].append(clock.seconds(t2, t3))
            phases["step"].append(clock.seconds(t0, t3))
        losses.append(loss)
    median = {k: statistics.median(v) for k, v in phases.items()}
    return point_result(context, batch, bf16, "tuned" if tuned else "peer", median.pop("step"),
                        median, [l.item() for l in (losses[0], losses[-1])])


def measure_graph_point(device, context, batch, bf16, steps, warmup):
    """The peer's model and step captured whole in a CUDA graph and replayed: one launch per
    step, so what the eager step spends launching kernels one by one disappears."""
    model = spec_model(context, fused_attention=False, device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, capturable=True)
    g = torch.Generator(device="cpu").manual_seed(1234)
    seq = torch.randint(0, SPEC["vocab"], (batch, context + 1), generator=g).to(device)
    x, y = seq[:, :-1].contiguous(), seq[:, 1:].contiguous()

    def step():
        opt.zero_grad(set_to_none=True)
        # autocast's cache of cast weights must not outlive a capture
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, SPEC["vocab"]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the graph, as capture requires
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = step()
    clock = Clock(device)
    times, losses = [], []
    for i in range(warmup + steps):
        fresh = torch.randint(0, SPEC["vocab"], (batch, context + 1), generator=g).to(device)
        x.copy_(fresh[:, :-1])
        y.copy_(fresh[:, 1:])
        t0 = clock.mark()
        graph.replay()
        t1 = clock.mark()
        if i >= warmup:
            times.append(clock.seconds(t0, t1))
        losses.append(loss.item())
    return point_result(context, batch, bf16, "graph", statistics.median(times), {}, losses)


def gemm_peak_tflops(device, dtype, n, repeats=10):
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    clock = Clock(device)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(repeats):
        t0 = clock.mark()
        a @ b
        t1 = clock.mark()
        times.append(clock.seconds(t0, t1))
    return 2 * n ** 3 / statistics.median(times) / 1e12


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--contexts", default="128,256,512,1024")
    p.add_argument("--batches", default="16,64,256")
    p.add_argument("--variants", default="peer,tuned",
                   help="peer, tuned (needs PyTorch 2), graph (the peer's step in a CUDA graph)")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--gemm", type=int, default=8192, help="side of the peak-measuring GEMM")
    p.add_argument("--json", help="write every point here")
    args = p.parse_args()
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default since 1.12
    info = {"torch": torch.__version__, "device": str(device)}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    peaks = {"bf16": gemm_peak_tflops(device, torch.bfloat16, args.gemm),
             "fp32": gemm_peak_tflops(device, torch.float32, args.gemm)}
    torch.backends.cuda.matmul.allow_tf32 = True
    peaks["tf32"] = gemm_peak_tflops(device, torch.float32, args.gemm)
    torch.backends.cuda.matmul.allow_tf32 = False
    info["gemm_peak_tflops"] = peaks
    print(json.dumps(info), flush=True)
    points = []
    for context in map(int, args.contexts.split(",")):
        for batch in map(int, args.batches.split(",")):
            for bf16 in (False, True):
                for variant in args.variants.split(","):
                    if variant == "graph":
                        pt = measure_graph_point(device, context, batch, bf16, args.steps,
                                                 args.warmup)
                    else:
                        pt = measure_point(device, context, batch, bf16, variant == "tuned",
                                           args.steps, args.warmup)
                    pt["mfu_of_measured_peak"] = pt["achieved_tflops"] / peaks["bf16" if bf16 else "fp32"]
                    points.append(pt)
                    print(json.dumps(pt), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "points": points}, f, indent=1)
    print(f"\n{info.get('gpu', info['device'])}, torch {info['torch']}; GEMM peak TFLOP/s: "
          + ", ".join(f"{k} {v:.1f}" for k, v in peaks.items()))
    print(f"{'context':>7} {'batch':>5} {'prec':>4} {'variant':>6} {'step ms':>8} {'fwd':>6} "
          f"{'bwd':>6} {'opt':>6} {'Mtok/s':>7} {'TFLOP/s':>7} {'MFU':>6}")
    for pt in points:
        print(f"{pt['context']:>7} {pt['batch']:>5} {'bf16' if pt['bf16'] else 'fp32':>4} "
              f"{pt['variant']:>6} {pt['step_s'] * 1e3:8.2f} "
              f"{pt['forward_s'] * 1e3:6.2f} {pt['backward_s'] * 1e3:6.2f} "
              f"{pt['optimizer_s'] * 1e3:6.2f} {pt['tokens_per_s'] / 1e6:7.2f} "
              f"{pt['achieved_tflops']:7.2f} {pt['mfu_of_measured_peak']:6.3f}")


if __name__ == "__main__":
    sys.exit(main())
