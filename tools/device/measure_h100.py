#!/usr/bin/env python3
"""Dev-only: measure kernel times, training step time and peak memory on a lent GPU.

Runs on the device machine (PyTorch, transformers and peft are in its image); nothing here runs
in the product or in CI. It writes $OUT/measured.json and prints a short table; the figures go
into docs/validation.md ("Measured on a lent H100") and tests/data/validation/device/ by hand.

What it measures, each at points that Envelope's tables or plans can state exactly:
  - GEMM C[m,n] = A[m,k] B[k,n] (bf16 F.linear, fp8 tensor-wise torch._scaled_mm) at axis points
    of presets/kernels/h100-sxm.json, weights rotated through > 2x the L2 so small-m GEMMs read HBM;
  - FlashAttention through SDPA, causal, head dim 128: forward and forward+backward, kv_ratio 1 and 8;
  - decode attention through SDPA (q length 1) over a contiguous KV cache (not a paged kernel);
  - HBM: device copy, RMSNorm, SiLU-and-multiply, residual add (bytes read + written / time);
  - training steps of Llama-3.2-1B/3B shapes (random weights, HF transformers, SDPA) at seq 4096:
    step time (median of timed steps) and torch.cuda.max_memory_allocated / reserved.
"""
import contextlib
import gc
import json
import math
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
DEV = torch.device("cuda")
res = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def save():
    with open(os.path.join(OUT, "measured.json"), "w") as f:
        json.dump(res, f, indent=1)


def section(name):
    def wrap(fn):
        def run():
            t0 = time.time()
            try:
                fn()
            except Exception:
                res.setdefault("errors", {})[name] = traceback.format_exc()[-2000:]
                print(f"[{name}] FAILED\n{traceback.format_exc()[-1500:]}", flush=True)
            res.setdefault("section_seconds", {})[name] = round(time.time() - t0, 1)
            save()
            torch.cuda.synchronize()
            gc.collect()
            torch.cuda.empty_cache()
        return run
    return wrap


def timed_events(fn, iters, reps=5):
    """Median over reps of (time for iters back-to-back calls) / iters, in microseconds."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(reps):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) * 1e3 / iters)
    return statistics.median(out)


def timed_graph(fns, reps=7):
    """Capture the list of calls in one CUDA graph; median replay time / len(fns), microseconds."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for f in fns[:3]:
            f()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns:
            f()
    g.replay()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(reps):
        start.record()
        g.replay()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) * 1e3 / len(fns))
    del g
    return statistics.median(out)


@section("device")
def device_info():
    p = torch.cuda.get_device_properties(0)
    res["device"] = {
        "name": p.name,
        "sms": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }
    try:
        import transformers
        import peft
        res["device"]["transformers"] = transformers.__version__
        res["device"]["peft"] = peft.__version__
    except Exception as e:  # recorded, the training sections will fail on their own
        res["device"]["import_error"] = repr(e)
    q = os.popen("nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,"
                 "power.limit,memory.total --format=csv,noheader").read().strip()
    res["device"]["nvidia_smi"] = q
    print(res["device"], flush=True)


GEMM_M = [1, 16, 64, 256, 1024, 4096, 16384]
GEMM_NK = [(4096, 4096), (6144, 4096), (12288, 4096), (4096, 12288), (8192, 8192), (2048, 2048)]
L2_BYTES = 50 * 2**20


def time_rotating(fns, big):
    """One GEMM over rotating weight copies: a large one timed back to back on the first copy
    (compute-bound, the cache does not matter), a small one as ~48 launches in one CUDA graph
    cycling through the copies so that the weights come from HBM, not the L2."""
    if big:
        return timed_events(fns[0], iters=10)
    return timed_graph(fns * max(1, 48 // len(fns)))


@section("gemm")
def gemm():
    rows = []
    fp8 = getattr(torch, "float8_e4m3fn", None)
    for n, k in GEMM_NK:
        wbytes = n * k * 2
        copies = max(1, min(16, math.ceil(4 * L2_BYTES / wbytes)))
        ws = [torch.randn(n, k, device=DEV, dtype=torch.bfloat16) * 0.02 for _ in range(copies)]
        w8 = [(w * 8).to(fp8) for w in ws] if fp8 is not None else []
        one = torch.ones((), device=DEV, dtype=torch.float32)
        for m in GEMM_M:
            x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
            flops = 2.0 * m * n * k
            big = flops > 2e11
            row = {"m": m, "n": n, "k": k}
            row["bf16_us"] = time_rotating([(lambda w=w: F.linear(x, w)) for w in ws], big)
            row["bf16_tflops"] = flops / row["bf16_us"] / 1e6
            if w8 and m % 16 == 0:
                try:
                    x8 = (x * 8).to(fp8)
                    row["fp8_us"] = time_rotating(
                        [(lambda w=w: torch._scaled_mm(x8, w.t(), scale_a=one, scale_b=one,
                                                       out_dtype=torch.bfloat16)) for w in w8], big)
                    row["fp8_tflops"] = flops / row["fp8_us"] / 1e6
                except Exception as e:
                    row["fp8_error"] = repr(e)[:200]
            rows.append(row)
        del ws, w8
        torch.cuda.empty_cache()
    res["gemm"] = rows
    for r in rows:
        print(f"gemm m={r['m']:>6} n={r['n']:>6} k={r['k']:>6}  bf16 {r['bf16_us']:9.1f} us "
              f"{r['bf16_tflops']:6.1f} TF   fp8 {r.get('fp8_us', float('nan')):9.1f} us "
              f"{r.get('fp8_tflops', float('nan')):6.1f} TF", flush=True)


@section("attention")
def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    d = 128
    for kv_ratio in (1, 8):
        for seq in (1024, 4096, 8192, 16384):
            for batch, heads in ((1, 32), (2, 32), (4, 32)):
                if seq * batch > 32768:
                    continue
                q = torch.randn(batch, heads, seq, d, device=DEV, dtype=torch.bfloat16,
                                requires_grad=True)
                kvh = heads // kv_ratio
                kk = torch.randn(batch, kvh, seq, d, device=DEV, dtype=torch.bfloat16,
                                 requires_grad=True)
                vv = torch.randn(batch, kvh, seq, d, device=DEV, dtype=torch.bfloat16,
                                 requires_grad=True)
                go = torch.randn(batch, heads, seq, d, device=DEV, dtype=torch.bfloat16)
                kw = {"enable_gqa": True} if kv_ratio > 1 else {}
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    def fwd():
                        return F.scaled_dot_product_attention(q, kk, vv, is_causal=True, **kw)

                    def fwd_bwd():
                        o = fwd()
                        torch.autograd.grad(o, (q, kk, vv), go)

                    try:
                        fwd()
                    except RuntimeError:  # no GQA in this flash kernel: same FLOPs on expanded KV
                        kk = kk.detach().repeat_interleave(kv_ratio, 1).requires_grad_()
                        vv = vv.detach().repeat_interleave(kv_ratio, 1).requires_grad_()
                        kw = {}
                        fwd()
                    fwd_us = timed_events(lambda: fwd(), iters=5)
                    fb_us = timed_events(fwd_bwd, iters=3)
                flops = 2.0 * batch * heads * seq * seq * d  # table convention (causal half)
                row = {"kv_ratio": kv_ratio, "seq": seq, "batch": batch, "heads": heads,
                       "batch_heads": batch * heads, "fwd_us": fwd_us,
                       "bwd_us": fb_us - fwd_us, "fwd_tflops": flops / fwd_us / 1e6,
                       "bwd_tflops_2_5x": 2.5 * flops / (fb_us - fwd_us) / 1e6}
                rows.append(row)
                print(f"attn r={kv_ratio} s={seq:>6} bh={batch*heads:>4} fwd {fwd_us:9.1f} us "
                      f"{row['fwd_tflops']:6.1f} TF  bwd {row['bwd_us']:9.1f} us "
                      f"(bwd/fwd {row['bwd_us']/fwd_us:4.2f})", flush=True)
                del q, kk, vv, go
    res["attention_prefill"] = rows


@section("decode_attention")
def decode_attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    for batch in (1, 16, 64, 256):
        for kv_len in (1024, 4096):
            caches = max(1, min(8, math.ceil(4 * L2_BYTES / (2 * batch * 8 * kv_len * 128 * 2))))
            q = torch.randn(batch, 32, 1, 128, device=DEV, dtype=torch.bfloat16)
            kvs = [(torch.randn(batch, 8, kv_len, 128, device=DEV, dtype=torch.bfloat16),
                    torch.randn(batch, 8, kv_len, 128, device=DEV, dtype=torch.bfloat16))
                   for _ in range(caches)]
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                fns = [(lambda k=k, v=v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
                       for k, v in kvs]
                us = timed_graph(fns * max(1, 16 // len(fns)))
            kv_bytes = 2 * batch * 8 * kv_len * 128 * 2
            rows.append({"batch": batch, "kv_len": kv_len, "us": us,
                         "kv_gbps": kv_bytes / us / 1e3})
            print(f"decode-attn b={batch:>4} kv={kv_len:>5} {us:8.1f} us "
                  f"{kv_bytes/us/1e3:7.1f} GB/s", flush=True)
            del kvs
    res["attention_decode_sdpa"] = rows


@section("hbm")
def hbm():
    n = 512 * 2**20  # 1 GiB of bf16
    x = torch.randn(n, device=DEV, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    rows = {}
    us = timed_events(lambda: y.copy_(x), iters=10)
    rows["copy_gbps"] = 2 * n * 2 / us / 1e3
    tokens, h = 16384, 4096
    a = x[: tokens * h].view(tokens, h)
    wt = torch.ones(h, device=DEV, dtype=torch.bfloat16)
    us = timed_events(lambda: F.rms_norm(a, (h,), wt, 1e-5), iters=10)
    rows["rms_norm_gbps"] = 2 * tokens * h * 2 / us / 1e3
    g = x[: tokens * 14336].view(tokens, 14336)
    u = y[: tokens * 14336].view(tokens, 14336)
    us = timed_events(lambda: F.silu(g) * u, iters=10)
    rows["silu_mul_unfused_gbps"] = 3 * tokens * 14336 * 2 / us / 1e3  # minimal bytes
    b = y[: tokens * h].view(tokens, h)
    us = timed_events(lambda: a + b, iters=10)
    rows["add_gbps"] = 3 * tokens * h * 2 / us / 1e3
    res["hbm"] = rows
    print("hbm", {k: round(v, 1) for k, v in rows.items()}, flush=True)


def llama_config(size):
    from transformers import LlamaConfig
    if size == "1b":
        dims = dict(num_hidden_layers=16, hidden_size=2048, intermediate_size=8192,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=64)
    else:
        dims = dict(num_hidden_layers=28, hidden_size=3072, intermediate_size=8192,
                    num_attention_heads=24, num_key_value_heads=8, head_dim=128)
    return LlamaConfig(vocab_size=128256, max_position_embeddings=131072, rms_norm_eps=1e-5,
                       tie_word_embeddings=True, attention_bias=False,
                       mlp_bias=False, hidden_act="silu", **dims)


def classify_kernel(name):
    n = name.lower()
    if "flash" in n or "fmha" in n or "attention" in n:
        return "attention"
    if "adam" in n:
        return "optimizer"
    if any(t in n for t in ("gemm", "nvjet", "xmma", "cutlass", "cublas", "sm90_", "sm80_")):
        return "gemm"
    if any(t in n for t in ("log_softmax", "nll_loss", "cross_entropy", "softmax")):
        return "loss"
    return "elementwise"


def profile_step(step):
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    by_class, by_name = {}, {}
    kernels = 0
    for e in prof.events():
        if e.device_type != DeviceType.CUDA:
            continue
        us = e.time_range.elapsed_us()
        kernels += 1
        c = classify_kernel(e.name)
        by_class[c] = by_class.get(c, 0.0) + us
        by_name[e.name] = by_name.get(e.name, 0.0) + us
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:40]
    return {"wall_s": wall, "kernels": kernels, "busy_s": sum(by_class.values()) / 1e6,
            "by_class_s": {k: v / 1e6 for k, v in by_class.items()},
            "top_kernels_us": [[n[:160], round(v, 1)] for n, v in top]}


def train_case(name, size, mode, mbs, seq=4096, ckpt=False, steps=4, warm=2, compiled=False,
               profiled=False):
    from transformers import LlamaForCausalLM
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    baseline = torch.cuda.memory_allocated()
    cfg = llama_config(size)
    try:
        cfg._attn_implementation = "sdpa"
    except Exception:
        pass
    torch.manual_seed(0)
    with torch.device(DEV):
        model = LlamaForCausalLM(cfg)
    if mode == "mixed":  # fp32 weights, grads, Adam moments; bf16 autocast
        model = model.float()
    else:
        model = model.to(torch.bfloat16)
    params_total = sum(p.numel() for p in model.parameters())
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if mode == "lora":
        from peft import LoraConfig, get_peft_model
        lcfg = LoraConfig(r=64, lora_alpha=128, lora_dropout=0.0,
                          target_modules=["q_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                          "down_proj"])
        model = get_peft_model(model, lcfg, autocast_adapter_dtype=False)
    model.config.use_cache = False
    model.train()
    fwd_model = torch.compile(model) if compiled else model
    params = [p for p in model.parameters() if p.requires_grad]
    trainable = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    ids = torch.randint(0, 128256, (mbs, seq), device=DEV)

    def step():
        precision = (torch.autocast("cuda", dtype=torch.bfloat16) if mode == "mixed"
                     else contextlib.nullcontext())
        with precision:
            loss = fwd_model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    after_warm_alloc = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    prof = profile_step(step) if profiled else None
    row = {"name": name, "model": size, "mode": mode, "micro_batch": mbs, "seq_len": seq,
           "compiled": compiled, "baseline_allocated_bytes": baseline,
           "recompute": "full" if ckpt else "none", "params": params_total,
           "attn_implementation": getattr(cfg, "_attn_implementation", None),
           "trainable_params": trainable, "step_s": statistics.median(times),
           "step_s_all": [round(t, 4) for t in times],
           "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
           "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
           "steady_allocated_bytes": after_warm_alloc,
           "tokens_per_s": mbs * seq / statistics.median(times)}
    if prof:
        row["profile"] = prof
    res.setdefault("training", []).append(row)
    print(f"train {name:<28} step {row['step_s']*1e3:8.1f} ms  peak alloc "
          f"{row['peak_allocated_bytes']/1e9:6.2f} GB reserved {row['peak_reserved_bytes']/1e9:6.2f}"
          f" GB  steady {after_warm_alloc/1e9:6.2f} GB  {row['tokens_per_s']:8.0f} tok/s",
          flush=True)
    if prof:
        print("   profile: wall %.1f ms busy %.1f ms kernels %d %s" % (
            prof["wall_s"] * 1e3, prof["busy_s"] * 1e3, prof["kernels"],
            {k: round(v * 1e3, 1) for k, v in prof["by_class_s"].items()}), flush=True)
    del model, fwd_model, opt, params, ids
    gc.collect()
    torch.cuda.empty_cache()
    save()


@section("training")
def training():
    cases = [
        ("1b-mixed-mbs2", "1b", "mixed", 2, False, False),
        ("1b-mixed-mbs2-ckpt", "1b", "mixed", 2, True, False),
        ("1b-pure-mbs2", "1b", "pure", 2, False, False),
        ("1b-pure-mbs2-compiled", "1b", "pure", 2, False, True),
        ("3b-bf16pure-mbs2-ckpt", "3b", "pure", 2, True, False),
        ("3b-bf16pure-mbs1", "3b", "pure", 1, False, False),
        ("3b-lora-mbs2-ckpt", "3b", "lora", 2, True, False),
        ("3b-lora-mbs1", "3b", "lora", 1, False, False),
    ]
    for name, size, mode, mbs, ckpt, compiled in cases:
        try:
            train_case(name, size, mode, mbs, ckpt=ckpt, compiled=compiled, profiled=True)
        except Exception:
            res.setdefault("errors", {})[name] = traceback.format_exc()[-2000:]
            print(f"[{name}] FAILED\n{traceback.format_exc()[-1500:]}", flush=True)
            gc.collect()
            torch.cuda.empty_cache()


@section("eager_modules")
def eager_modules():
    """HF's eager RMSNorm, RoPE and loss against one fused kernel, forward + backward."""
    from transformers.models.llama import modeling_llama as ml
    rows = {}
    tokens, h = 8192, 2048
    x = torch.randn(1, tokens, h, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    gx = torch.randn_like(x)
    norm = ml.LlamaRMSNorm(h, eps=1e-5).to(DEV, torch.bfloat16)
    wt = norm.weight

    def hf_norm():
        torch.autograd.grad(norm(x), (x, wt), gx)

    def fused_norm():
        torch.autograd.grad(F.rms_norm(x, (h,), wt, 1e-5), (x, wt), gx)
    rows["rmsnorm_hf_us"] = timed_events(hf_norm, iters=10)
    rows["rmsnorm_fused_us"] = timed_events(fused_norm, iters=10)
    rows["rmsnorm_elements"] = tokens * h
    q = torch.randn(1, 32, tokens, 64, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(1, 8, tokens, 64, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    ang = torch.randn(1, tokens, 64, device=DEV, dtype=torch.float32)
    cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
    gq, gk = torch.randn_like(q), torch.randn_like(k)

    def hf_rope():
        qo, ko = ml.apply_rotary_pos_emb(q, k, cos, sin)
        torch.autograd.grad((qo, ko), (q, k), (gq, gk))
    rows["rope_hf_us"] = timed_events(hf_rope, iters=10)
    rows["rope_elements"] = tokens * (32 + 8) * 64
    g = torch.randn(tokens, 8192, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    u = torch.randn(tokens, 8192, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    go = torch.randn(tokens, 8192, device=DEV, dtype=torch.bfloat16)

    def swiglu():
        torch.autograd.grad(F.silu(g) * u, (g, u), go)
    rows["swiglu_eager_us"] = timed_events(swiglu, iters=10)
    rows["swiglu_elements"] = tokens * 8192
    del q, k, g, u, go
    logits = torch.randn(tokens, 128256, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, 128256, (tokens,), device=DEV)

    def hf_loss():
        loss = F.cross_entropy(logits.float(), labels)
        torch.autograd.grad(loss, (logits,))
    rows["loss_hf_us"] = timed_events(hf_loss, iters=5)
    rows["loss_logits"] = tokens * 128256
    res["eager_modules"] = rows
    print("eager", {k: round(v, 1) for k, v in rows.items()}, flush=True)


def decode_step_rows(L, h, heads, kvh, d, ffn, vocab, shapes, label):
    """One decode step of a dense GQA model (random bf16 weights), the whole step in one CUDA
    graph the way engines replay it: per layer F.rms_norm, the fused QKV GEMM, SDPA with one query
    over a contiguous KV cache of kv_len tokens (flash / memory-efficient kernels), the O GEMM, the
    residual, F.rms_norm, the fused gate-up GEMM, silu * mul, the down GEMM, the residual; the
    final norm and the LM head. No RoPE, sampling, scheduler, cache writes or collectives: the GPU
    work of an engine's step (of one tensor-parallel rank), not its overheads."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    bf = torch.bfloat16
    g = torch.Generator(device=DEV).manual_seed(0)

    def w(*shape):
        return (torch.randn(*shape, device=DEV, dtype=bf, generator=g) * 0.02)
    layers = [dict(qkv=w((heads + 2 * kvh) * d, h), o=w(h, heads * d), gu=w(2 * ffn, h),
                   down=w(h, ffn), n1=torch.ones(h, device=DEV, dtype=bf),
                   n2=torch.ones(h, device=DEV, dtype=bf)) for _ in range(L)]
    head = w(vocab, h)
    rows = []
    for batch, kv_len in shapes:
        kv_bytes = 2 * L * batch * kvh * kv_len * d * 2
        if kv_bytes > 40e9:
            continue
        caches = [(torch.randn(batch, kvh, kv_len, d, device=DEV, dtype=bf, generator=g),
                   torch.randn(batch, kvh, kv_len, d, device=DEV, dtype=bf, generator=g))
                  for _ in range(L)]
        x0 = torch.randn(batch, h, device=DEV, dtype=bf, generator=g)

        def step():
            x = x0
            for lw, (kc, vc) in zip(layers, caches):
                y = F.rms_norm(x, (h,), lw["n1"], 1e-5)
                qkv = F.linear(y, lw["qkv"])
                q = qkv[:, : heads * d].view(batch, heads, 1, d)
                a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)
                x = x + F.linear(a.reshape(batch, heads * d), lw["o"])
                y = F.rms_norm(x, (h,), lw["n2"], 1e-5)
                gu = F.linear(y, lw["gu"])
                x = x + F.linear(F.silu(gu[:, :ffn]) * gu[:, ffn:], lw["down"])
            return F.linear(F.rms_norm(x, (h,), layers[0]["n1"], 1e-5), head)

        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            us = timed_graph([step], reps=10)
        weight_bytes = 2 * (L * (((heads + 2 * kvh) * d + heads * d) * h + 3 * ffn * h) + vocab * h)
        rows.append({"batch": batch, "kv_len": kv_len, "step_us": us,
                     "weight_bytes": weight_bytes, "kv_bytes": kv_bytes,
                     "gbps": (weight_bytes + kv_bytes) / us / 1e3})
        print(f"decode-step {label} b={batch:>4} kv={kv_len:>5} {us/1e3:7.3f} ms "
              f"{(weight_bytes + kv_bytes)/us/1e3:7.1f} GB/s", flush=True)
        del caches
        torch.cuda.empty_cache()
    return rows


@section("decode_step")
def decode_step():
    """One decode step of a Llama-3.1-8B shape (32 layers, hidden 4096, 32 / 8 heads of 128, FFN
    14336, vocabulary 128256): decode_step_rows at 1 to 128 sequences over 1k to 4k tokens."""
    res["decode_step_llama8b"] = decode_step_rows(
        32, 4096, 32, 8, 128, 14336, 128256,
        ((1, 1024), (8, 1024), (32, 1024), (64, 1024), (128, 1024),
         (1, 4096), (32, 4096), (64, 4096), (128, 2048)), "8B")


@section("kernel_floor")
def kernel_floor():
    """What a tiny kernel costs inside a CUDA graph (the floor under the decode step's ~380
    small kernels): 64 back-to-back launches of one op on a [batch, 4096] bf16 tensor."""
    rows = {}
    for batch in (1, 64):
        x = torch.randn(batch, 4096, device=DEV, dtype=torch.bfloat16)
        r = torch.randn_like(x)
        wt = torch.ones(4096, device=DEV, dtype=torch.bfloat16)
        rows[f"add_b{batch}_us"] = timed_graph([lambda: x + r] * 64)
        rows[f"rms_norm_b{batch}_us"] = timed_graph([lambda: F.rms_norm(x, (4096,), wt, 1e-5)] * 64)
        g = torch.randn(batch, 2 * 14336, device=DEV, dtype=torch.bfloat16)
        rows[f"silu_mul_b{batch}_us"] = timed_graph([lambda: F.silu(g[:, :14336]) * g[:, 14336:]] * 32) / 2
    res["kernel_floor"] = rows
    print("kernel floor (us per kernel)", {k: round(v, 2) for k, v in rows.items()}, flush=True)


@section("kernel_sweep")
def kernel_sweep():
    """Memory-bound kernels from one row to 32k rows, each 64 back to back in one CUDA graph: a
    residual add (pointwise), F.rms_norm and softmax (row reductions) on [rows, 4096] and
    [rows, 8192] bf16, silu(gate) * up on [rows, 2 x 14336] (two pointwise kernels). Bytes read
    + written per kernel beside each time: what Envelope times as launch floor + bytes / HBM."""
    rows = []
    for width in (4096, 8192):
        for n in (1, 8, 64, 512, 4096, 32768):
            x = torch.randn(n, width, device=DEV, dtype=torch.bfloat16)
            r = torch.randn_like(x)
            wt = torch.ones(width, device=DEV, dtype=torch.bfloat16)
            e = n * width * 2
            for kind, reduction, fn, nbytes in (
                    ("add", False, lambda: x + r, 3 * e),
                    ("rms_norm", True, lambda: F.rms_norm(x, (width,), wt, 1e-5), 2 * e),
                    ("softmax", True, lambda: torch.softmax(x, dim=-1), 2 * e)):
                us = timed_graph([fn] * 64)
                rows.append({"kernel": kind, "reduction": reduction, "rows": n, "width": width,
                             "bytes": nbytes, "us": us})
            del x, r
    for n in (1, 8, 64, 512, 4096, 16384):
        g = torch.randn(n, 2 * 14336, device=DEV, dtype=torch.bfloat16)
        us = timed_graph([lambda: F.silu(g[:, :14336]) * g[:, 14336:]] * 32) / 2
        # silu reads the gate and writes its output, mul reads both and writes one: 5 tensors
        # of [n, 14336] over the two kernels, 2.5 per kernel.
        rows.append({"kernel": "silu_mul", "reduction": False, "rows": n, "width": 14336,
                     "bytes": 2.5 * n * 14336 * 2, "us": us})
        del g
    torch.cuda.empty_cache()
    res["kernel_sweep"] = rows
    for row in rows:
        print(f"sweep {row['kernel']:>8} {row['rows']:>6} x {row['width']:>5}: {row['us']:8.2f} us "
              f"{row['bytes'] / row['us'] / 1e3:7.0f} GB/s", flush=True)


@section("decode_step_70b")
def decode_step_70b():
    """One tensor-parallel rank's decode step of Llama-3.1-70B at TP 4 (80 layers, hidden 8192,
    16 query and 2 KV heads of 128, FFN 7168 and vocabulary 32,064 per rank; random bf16
    weights, 34 GB): decode_step_rows without the rank's two all-reduces per layer."""
    res["decode_step_llama70b_tp4"] = decode_step_rows(
        80, 8192, 16, 2, 128, 7168, 128256 // 4,
        ((1, 1024), (8, 1024), (32, 1024), (64, 2048), (128, 2048)), "70B/tp4")


# Routed-expert shapes per EP rank (hidden, expert FFN, local experts), from the models' configs:
# Qwen3-30B-A3B (2048, 768, 128 experts / EP 8), Qwen3-235B-A22B (4096, 1536, 128 / EP 8),
# gpt-oss-120b (2880, 2880, 128 / EP 8), DeepSeek-V3 (7168, 2048, 256 / EP 64).
MOE_SHAPES = [("qwen3-30b-a3b", 2048, 768, 16), ("qwen3-235b-a22b", 4096, 1536, 16),
              ("gpt-oss-120b", 2880, 2880, 16), ("deepseek-v3", 7168, 2048, 4)]
MOE_M = [16, 64, 256, 1024, 4096]


@section("grouped_gemm")
def grouped_gemm():
    """Expert GEMMs of one EP rank, each expert receiving m tokens: torch._grouped_mm (one
    launch, CUTLASS grouped GEMM) against one cuBLAS GEMM of all rows stacked (what Envelope times
    a grouped GEMM as) and against a loop of per-expert cuBLAS GEMMs. Up (gate+up, n = 2f) and down
    projections, forward, and forward+backward through autograd (input and weight gradients)."""
    rows = []
    for name, h, f, experts in MOE_SHAPES:
        for proj, n, k in (("up", 2 * f, h), ("down", h, f)):
            w = (torch.randn(experts, n, k, device=DEV, dtype=torch.bfloat16) * 0.02).requires_grad_()
            ws = w.detach().reshape(experts * n, k)[:n]  # one expert's matrix for the stacked GEMM
            for m in MOE_M:
                total = m * experts
                x = torch.randn(total, k, device=DEV, dtype=torch.bfloat16).requires_grad_()
                offs = torch.arange(1, experts + 1, device=DEV, dtype=torch.int32) * m
                flops = 2.0 * total * n * k
                row = {"model": name, "proj": proj, "m_per_expert": m, "experts": experts, "n": n, "k": k,
                       "flops": flops, "weight_bytes": experts * n * k * 2}
                iters = 20 if flops < 5e11 else 5
                xd = x.detach()
                row["stacked_us"] = timed_events(lambda: F.linear(xd, ws), iters)
                chunks = list(xd.split(m))
                wd = w.detach()
                row["loop_us"] = timed_events(lambda: [F.linear(c, wd[e]) for e, c in enumerate(chunks)], iters)
                try:
                    row["grouped_us"] = timed_events(
                        lambda: torch._grouped_mm(xd, wd.transpose(-2, -1), offs=offs), iters)
                    gy = torch.randn(total, n, device=DEV, dtype=torch.bfloat16)

                    def fb():
                        y = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
                        torch.autograd.grad(y, (x, w), gy)
                    row["grouped_fwd_bwd_us"] = timed_events(fb, max(2, iters // 4))
                    xs = xd.clone().requires_grad_()
                    wsg = ws.clone().requires_grad_()

                    def fbs():
                        torch.autograd.grad(F.linear(xs, wsg), (xs, wsg), gy)
                    row["stacked_fwd_bwd_us"] = timed_events(fbs, max(2, iters // 4))
                except Exception as e:
                    row["grouped_error"] = repr(e)[:300]
                fp8 = getattr(torch, "float8_e4m3fn", None)
                if fp8 is not None and hasattr(torch, "_scaled_grouped_mm"):
                    try:
                        x8 = xd.to(fp8)
                        w8 = wd.to(fp8)
                        sa = torch.ones(total, device=DEV, dtype=torch.float32)
                        sb = torch.ones(experts, n, device=DEV, dtype=torch.float32)
                        row["fp8_grouped_us"] = timed_events(lambda: torch._scaled_grouped_mm(
                            x8, w8.transpose(-2, -1), sa, sb, offs=offs, out_dtype=torch.bfloat16,
                            use_fast_accum=True), iters)
                        w8s = w8[0]
                        row["fp8_stacked_us"] = timed_events(lambda: torch._scaled_mm(
                            x8, w8s.t(), scale_a=sa.view(-1, 1), scale_b=sb[0].view(1, -1),
                            out_dtype=torch.bfloat16, use_fast_accum=True), iters)
                    except Exception as e:
                        row["fp8_error"] = repr(e)[:300]
                rows.append(row)
                print(f"grouped {name:16} {proj:4} m/e={m:5} E={experts:3}  stacked {row['stacked_us']:8.1f}  "
                      f"grouped {row.get('grouped_us', float('nan')):8.1f}  loop {row['loop_us']:8.1f} us  "
                      f"fwd+bwd g/s {row.get('grouped_fwd_bwd_us', float('nan')):8.1f}/"
                      f"{row.get('stacked_fwd_bwd_us', float('nan')):8.1f}  fp8 g/s "
                      f"{row.get('fp8_grouped_us', float('nan')):7.1f}/{row.get('fp8_stacked_us', float('nan')):7.1f}",
                      flush=True)
                del x
            del w
            torch.cuda.empty_cache()
    res["grouped_gemm"] = rows


@section("moe_layer")
def moe_layer():
    """One EP rank's routed-expert block of Qwen3-30B-A3B in eager PyTorch (router, softmax,
    top-8, sort by expert, gather, grouped gate-up GEMM, SiLU*up, grouped down GEMM, weighted
    scatter-add back), forward + backward, at 8,192 tokens (mbs 2 x 4096) and at 512 and 64
    tokens. Balanced routing stands in for the EP all-to-all (each of the 16 local experts gets
    tokens x 8 / 16 rows). Measured: wall time, GPU kernel time and kernel count from the
    profiler, with and without a device-to-host copy of the per-expert counts (Megatron's
    alltoall token dispatcher reads them on the host every layer)."""
    out = []
    H, FF, E, K, EL = 2048, 768, 128, 8, 16
    for tokens in (8192, 512, 64):
        x = (torch.randn(tokens, H, device=DEV, dtype=torch.bfloat16)).requires_grad_()
        router = (torch.randn(E, H, device=DEV, dtype=torch.bfloat16) * 0.02).requires_grad_()
        w1 = (torch.randn(EL, 2 * FF, H, device=DEV, dtype=torch.bfloat16) * 0.02).requires_grad_()
        w2 = (torch.randn(EL, H, FF, device=DEV, dtype=torch.bfloat16) * 0.02).requires_grad_()
        balanced = (torch.arange(tokens * K, device=DEV) % EL).view(tokens, K)

        def layer(sync):
            logits = F.linear(x, router)
            probs = torch.softmax(logits.float(), dim=-1)
            topv, topi = probs.topk(K, dim=-1)
            topv = topv / topv.sum(-1, keepdim=True)
            local = balanced + 0 * topi  # the routing's data dependence, balanced counts
            flat = local.flatten()
            order = flat.argsort(stable=True)
            counts = torch.bincount(flat, minlength=EL)
            if sync:
                counts.tolist()
            offs = counts.cumsum(0).to(torch.int32)
            tok = order // K
            xp = x.index_select(0, tok)
            h1 = torch._grouped_mm(xp, w1.transpose(-2, -1), offs=offs)
            g, u = h1.chunk(2, dim=-1)
            a = F.silu(g) * u
            h2 = torch._grouped_mm(a, w2.transpose(-2, -1), offs=offs)
            h2 = h2 * topv.flatten()[order].unsqueeze(-1).to(h2.dtype)
            y = torch.zeros_like(x).index_add(0, tok, h2)
            y.float().square().mean().backward()

        for sync in (True, False):
            for _ in range(3):
                layer(sync)
            torch.cuda.synchronize()
            walls = []
            for _ in range(10):
                t0 = time.perf_counter()
                layer(sync)
                torch.cuda.synchronize()
                walls.append(time.perf_counter() - t0)
            prof = profile_step(lambda: layer(sync))
            row = {"tokens": tokens, "host_sync": sync, "wall_us": statistics.median(walls) * 1e6,
                   "gpu_busy_us": prof["busy_s"] * 1e6, "kernels": prof["kernels"],
                   "by_class_us": {k: v * 1e6 for k, v in prof["by_class_s"].items()},
                   "top_kernels_us": prof["top_kernels_us"][:12]}
            out.append(row)
            print(f"moe layer tokens={tokens:5} sync={sync}: wall {row['wall_us']:8.1f} us, GPU busy "
                  f"{row['gpu_busy_us']:8.1f} us, {row['kernels']} kernels", flush=True)
        del x, router, w1, w2
        torch.cuda.empty_cache()
    res["moe_layer"] = out


@section("sustained")
def sustained():
    """A GEMM in a short burst (what a kernel table times) against the same GEMM run back to back
    for seconds (what a training step does): achieved TFLOP/s of each, with the SM clock and
    power nvidia-smi reads at the end of the sustained run. Shapes of training steps: Llama 8B
    and 70B MLPs at 4k-16k tokens, GPT-1T's QKV under TP 8 at 2k tokens, a square 8k."""
    import subprocess
    rows = []
    shapes = [(4096, 8192, 8192), (8192, 28672, 8192), (8192, 8192, 28672), (2048, 9600, 25600),
              (16384, 14336, 4096), (4096, 4096, 4096)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        fn = lambda: F.linear(a, w)
        flops = 2.0 * m * n * k
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        time.sleep(1.0)  # let the clock recover before the burst
        burst_us = timed_events(fn, iters=5, reps=3)
        # Sustained: back to back for ~4 s, timed over the last ~1 s.
        per_call = max(burst_us * 1e-6, 1e-6)
        calls = int(3.0 / per_call) + 1
        for _ in range(calls):
            fn()
        sustained_us = timed_events(fn, iters=max(int(1.0 / per_call), 5), reps=1)
        smi = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                              "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
        torch.cuda.synchronize()
        row = {"m": m, "n": n, "k": k, "burst_us": burst_us, "burst_tflops": flops / burst_us / 1e6,
               "sustained_us": sustained_us, "sustained_tflops": flops / sustained_us / 1e6,
               "nvidia_smi_after": smi}
        rows.append(row)
        print(f"sustained {m}x{n}x{k}: burst {row['burst_tflops']:.0f} TFLOP/s, sustained "
              f"{row['sustained_tflops']:.0f} ({smi})", flush=True)
        del a, w
    res["sustained"] = rows


if __name__ == "__main__":
    table = {"device": device_info, "hbm": hbm, "gemm": gemm, "attention": attention,
             "decode_attention": decode_attention, "training": training,
             "eager_modules": eager_modules, "decode_step": decode_step,
             "kernel_floor": kernel_floor, "sustained": sustained,
             "grouped_gemm": grouped_gemm, "moe_layer": moe_layer,
             "kernel_sweep": kernel_sweep, "decode_step_70b": decode_step_70b}
    order = sys.argv[1:] or ["hbm", "gemm", "attention", "decode_attention", "training",
                             "eager_modules"]
    device_info()
    for name in order:
        table[name]()
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save()
    print("done", res.get("section_seconds"), "errors:", list(res.get("errors", {})), flush=True)
