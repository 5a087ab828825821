#!/usr/bin/python3
"""Count the bytes autograd saves for backward in one transformer block, on the CPU.

Dev-only (issue 12, "How to measure without a GPU"); no test needs torch. Debian 12:
    apt-get install -y python3-torch
    /usr/bin/python3 tools/measure_saved_activations.py [--json OUT.json]

Blocks, written here at small sizes so nothing but torch is needed:
  * llama: an HF-style Llama decoder layer (transformers' modeling_llama, eager): RMSNorm with
    its fp32 upcast, q/k/v projections, rotary embeddings (rotate_half), grouped-query attention
    (repeat_kv), softmax in fp32 then cast back, o_proj, SwiGLU MLP (down(silu(gate) * up)).
    Attention either "eager" (matmul, softmax, matmul) or "sdpa"
    (torch.nn.functional.scaled_dot_product_attention, whose CPU kernel is flash-style).
  * gpt: a GPT-2/Megatron block: LayerNorm, fused QKV, causal softmax attention, output
    projection, LayerNorm, 4h GELU MLP; dropout 0 (modern LLMs) or 0.1 (Korthikanti's setting,
    with CUDA's 1-byte masks).

Policies:
  * none       every tensor autograd saves;
  * full       torch.utils.checkpoint over the whole block (reentrant, so the kept layer input
               passes through the hooks as save_for_backward);
  * selective  checkpoint over the attention core only (QK^T, softmax, dropout, AV), as
               Megatron's --recompute-granularity selective.

A tensor's bytes are its whole storage's (views of one storage, such as q, k, v cut from the
fused QKV output, count once); parameters are not activations and are left out.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


# ----------------------------------------------------------------------------- counting


def storage_of(t):
    """(data_ptr, bytes) of the storage under `t` (torch 2.x untyped_storage; 1.13 storage)."""
    if hasattr(t, "untyped_storage"):
        st = t.untyped_storage()
        return st.data_ptr(), st.nbytes()
    st = t.storage()
    return st.data_ptr(), st.size() * st.element_size()


def count_saved(run, params):
    """Bytes of the distinct storages autograd saves while `run()` builds the graph."""
    param_ptrs = {storage_of(p)[0] for p in params}
    seen = {}

    def pack(t):
        ptr, nbytes = storage_of(t)
        if ptr not in param_ptrs and ptr not in seen:
            seen[ptr] = (nbytes, tuple(t.shape), str(t.dtype).replace("torch.", ""))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run()
    # The graph must be usable: run the backward once.
    out.float().sum().backward()
    return sum(n for n, _, _ in seen.values()), sorted(seen.values(), reverse=True)


# ----------------------------------------------------------------------------- Llama block


class RMSNorm(nn.Module):
    """transformers LlamaRMSNorm: computes in fp32, casts back before the weight."""

    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rope(s, d, dtype):
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = torch.outer(torch.arange(s, dtype=torch.float32), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def repeat_kv(x, n):
    b, kv, s, d = x.shape
    if n == 1:
        return x
    return x[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)


def eager_attention(q, k, v, causal_mask, p_drop):
    d = q.shape[-1]
    scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d)
    scores = scores + causal_mask
    probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
    probs = F.dropout(probs, p=p_drop, training=True)
    return torch.matmul(probs, v)


class LlamaBlock(nn.Module):
    def __init__(self, h, heads, kv_heads, ffn, attention="eager"):
        super().__init__()
        self.h, self.heads, self.kv_heads, self.d = h, heads, kv_heads, h // heads
        self.attention = attention
        self.input_layernorm = RMSNorm(h)
        self.q_proj = nn.Linear(h, heads * self.d, bias=False)
        self.k_proj = nn.Linear(h, kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(h, kv_heads * self.d, bias=False)
        self.o_proj = nn.Linear(heads * self.d, h, bias=False)
        self.post_attention_layernorm = RMSNorm(h)
        self.gate_proj = nn.Linear(h, ffn, bias=False)
        self.up_proj = nn.Linear(h, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, h, bias=False)
        self.selective = False

    def core(self, q, k, v):
        n = self.heads // self.kv_heads
        k, v = repeat_kv(k, n), repeat_kv(v, n)
        if self.attention == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        s = q.shape[2]
        mask = torch.full((s, s), float("-inf"), dtype=q.dtype).triu(1)
        return eager_attention(q, k, v, mask, 0.0)

    def forward(self, x):
        b, s, _ = x.shape
        residual = x
        x = self.input_layernorm(x)
        q = self.q_proj(x).view(b, s, self.heads, self.d).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        cos, sin = rope(s, self.d, x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.selective:
            o = checkpoint(self.core, q, k, v, use_reentrant=True)
        else:
            o = self.core(q, k, v)
        o = o.transpose(1, 2).reshape(b, s, self.h)
        x = residual + self.o_proj(o)
        residual = x
        x = self.post_attention_layernorm(x)
        x = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return residual + x


# ----------------------------------------------------------------------------- GPT block


def dropout(x, p):
    """Dropout that keeps a 1-byte bool mask for backward, as CUDA's fused native_dropout does
    (and Korthikanti et al. count). torch's CPU F.dropout keeps its mask in the input dtype (2 B
    in bf16), which would read as 1 extra byte per masked element."""
    if p <= 0:
        return x
    keep = torch.rand(x.shape) >= p
    return torch.mul(x * keep, 1.0 / (1.0 - p))


class GptBlock(nn.Module):
    def __init__(self, h, heads, p_drop):
        super().__init__()
        self.h, self.heads, self.d, self.p = h, heads, h // heads, p_drop
        self.ln_1 = nn.LayerNorm(h)
        self.c_attn = nn.Linear(h, 3 * h)
        self.c_proj = nn.Linear(h, h)
        self.ln_2 = nn.LayerNorm(h)
        self.c_fc = nn.Linear(h, 4 * h)
        self.mlp_proj = nn.Linear(4 * h, h)
        self.selective = False

    def core(self, q, k, v):
        s = q.shape[2]
        mask = torch.full((s, s), float("-inf"), dtype=q.dtype).triu(1)
        d = q.shape[-1]
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d) + mask
        probs = dropout(F.softmax(scores, dim=-1), self.p)
        return torch.matmul(probs, v)

    def forward(self, x):
        b, s, _ = x.shape
        qkv = self.c_attn(self.ln_1(x)).view(b, s, 3, self.heads, self.d)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        if self.selective:
            o = checkpoint(self.core, q, k, v, use_reentrant=True)
        else:
            o = self.core(q, k, v)
        o = o.transpose(1, 2).reshape(b, s, self.h)
        x = x + dropout(self.c_proj(o), self.p)
        m = self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))
        return x + dropout(m, self.p)


# ----------------------------------------------------------------------------- runs


def measure(block, x, policy):
    block.selective = policy == "selective"
    if policy == "full":
        run = lambda: checkpoint(block, x, use_reentrant=True)
    else:
        run = lambda: block(x)
    total, storages = count_saved(run, list(block.parameters()))
    block.selective = False
    return total, storages


# ----------------------------------------------------------------------------- Envelope


def envelope_plan(row, framework):
    """An Envelope plan with the measured block as its one layer (no flash: eager attention)."""
    llama = row["block"] == "llama"
    model = {
        "name": "measured %s block" % row["block"], "layers": 1, "hidden": row["h"],
        "ffn_hidden": row["ffn"], "ffn": "swiglu" if llama else "gelu", "heads": row["heads"],
        "kv_heads": row["kv_heads"], "head_dim": row["h"] // row["heads"], "vocab": 1024,
        "norm": "rmsnorm" if llama else "layernorm", "qkv_bias": not llama,
        "max_positions": 4096, "dropout": row["dropout"],
    }
    return {
        "format": "envelope.plan", "version": 1, "name": "measured block", "model": model,
        "gpu": "h100-sxm", "cluster": {"gpus": 1, "gpus_per_node": 1},
        "training": {
            "recipe": "fp32" if row["dtype"] == "float32" else "bf16-mixed-16",
            "framework": framework, "zero_stage": 0, "micro_batch": row["b"], "grad_accum": 1,
            "seq_len": row["s"], "recompute": row["policy"],
            "flash_attention": row["attention"] == "sdpa",
        },
    }


def envelope_per_layer(cli, row, framework):
    """training.activation_bytes_per_layer of `envelope-cli estimate` on the equivalent plan."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plan.json")
        with open(path, "w") as f:
            json.dump(envelope_plan(row, framework), f)
        out = subprocess.run([cli, "estimate", path, "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
    return json.loads(out)["training"]["activation_bytes_per_layer"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the measured table here")
    parser.add_argument("--verbose", action="store_true", help="list every saved storage")
    parser.add_argument("--cli", help="envelope-cli: add Envelope's per-layer figure for each row "
                        "(generic profile, and hf for the Llama block)")
    args = parser.parse_args()
    torch.manual_seed(0)

    # Small, but with s > h / a so the s^2 terms are visible, and GQA 4:1 as Llama 3.
    b, s = 2, 256
    llama = dict(h=512, heads=8, kv_heads=2, ffn=1376)
    gpt = dict(h=512, heads=8)
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        cases = [("llama", "eager", 0.0, LlamaBlock(attention="eager", **llama))]
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
            cases.append(("llama", "sdpa", 0.0, LlamaBlock(attention="sdpa", **llama)))
        cases += [
            ("gpt", "eager", 0.0, GptBlock(p_drop=0.0, **gpt)),
            ("gpt", "eager", 0.1, GptBlock(p_drop=0.1, **gpt)),
        ]
        for name, attention, p_drop, block in cases:
            block = block.to(dtype)
            h = block.h
            for policy in ("none", "full", "selective"):
                x = torch.randn(b, s, h, dtype=dtype, requires_grad=True)
                total, storages = measure(block, x, policy)
                sbh = s * b * h
                row = dict(block=name, attention=attention, dropout=p_drop,
                           dtype=str(dtype).replace("torch.", ""), policy=policy,
                           s=s, b=b, h=h, heads=block.heads,
                           kv_heads=getattr(block, "kv_heads", block.heads),
                           ffn=getattr(block, "gate_proj", None) and block.gate_proj.out_features
                           or 4 * h,
                           bytes=total, bytes_per_sbh=total / sbh)
                rows.append(row)
                if args.verbose:
                    print(f"# {name} {attention} p={p_drop} {row['dtype']} {policy}")
                    for n, shape, dt in storages:
                        print(f"#   {n:>10} {dt:>8} {shape}")

    frameworks = ("generic", "hf")
    if args.cli:
        for r in rows:
            for fw in frameworks:
                if r["block"] == "llama" or fw == "generic":
                    r["envelope_" + fw] = envelope_per_layer(args.cli, r, fw)
    print(f"{'block':6} {'attn':5} {'drop':4} {'dtype':8} {'policy':9} {'bytes':>10} {'/sbh':>8}"
          + "".join(f" {'envelope ' + fw:>16} {'err':>7}" for fw in frameworks))
    for r in rows:
        line = (f"{r['block']:6} {r['attention']:5} {r['dropout']:<4} {r['dtype']:8} "
                f"{r['policy']:9} {r['bytes']:>10} {r['bytes_per_sbh']:>8.3f}")
        for fw in frameworks:
            e = r.get("envelope_" + fw)
            line += (f" {e:>16} {100.0 * (e / r['bytes'] - 1):>+6.1f}%" if e is not None
                     else f" {'':>16} {'':>7}")
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(torch=torch.__version__, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
