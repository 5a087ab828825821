#!/usr/bin/env python3
"""torchtitan exports read back with Python's own TOML parser (tomllib, Python >= 3.11), so the
job file is TOML that torchtitan itself can load, not only TOML our reader accepts.

Usage: check_export_toml.py ENVELOPE_CLI DEFAULT_PLAN. Exit 77 (skipped) without tomllib."""
import subprocess
import sys

try:
    import tomllib
except ImportError:
    print("python3 has no tomllib (needs Python 3.11): skipped")
    sys.exit(77)

cli, plan = sys.argv[1], sys.argv[2]


def export(*sets):
    args = [cli, "export", plan, "--to", "torchtitan"]
    for s in sets:
        args += ["--set", s]
    return tomllib.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


# The default plan: Llama-2 7B, 8 GPUs, ZeRO-3, micro 1 x accumulation 8, 4096 tokens, 2e12 tokens.
job = export()
assert job["job"]["description"] == "Llama-2 7B SFT on 8x H100", job["job"]
assert job["training"]["local_batch_size"] == 1
assert job["training"]["global_batch_size"] == 64  # 1 x 8 x 8
assert job["training"]["seq_len"] == 4096
assert job["training"]["steps"] == 7629395  # ceil(2e12 / (64 x 4096))
assert job["parallelism"]["data_parallel_shard_degree"] == 8
assert job["parallelism"]["data_parallel_replicate_degree"] == 1
assert job["parallelism"]["fsdp_reshard_after_forward"] == "always"
assert job["activation_checkpoint"] == {"mode": "selective", "selective_ac_option": "op"}

# Llama 3 8B, tp 2 x pp 2 (2 chunks) x dp 2, every-2 recompute, FP8.
job = export('model="llama-3-8b"', "training.tp=2", "training.sequence_parallel=true",
             "training.pp=2", "training.virtual_stages=2", 'training.recompute="every-k"',
             "training.recompute_every=2", 'training.recipe="fp8-deepseek"')
assert job["model"] == {"name": "llama3", "flavor": "8B",
                        "converters": ["quantize.linear.float8"]}, job["model"]
assert "quantize" in job and "float8" not in job, list(job)
assert job["training"]["local_batch_size"] == 8  # 1 x 8 micro-batches through the pipeline
assert job["training"]["global_batch_size"] == 16  # 1 x 8 x dp 2
assert job["parallelism"]["pipeline_parallel_schedule"] == "Interleaved1F1B"
parts = job["parallelism"]["module_fqns_per_model_part"]  # 32 layers in 2 x 2 parts of 8
assert [len([m for m in p if m.startswith("layers.")]) for p in parts] == [8, 8, 8, 8], parts
assert parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "output"], parts
assert job["activation_checkpoint"]["selective_ac_option"] == "2"
print("torchtitan exports parse with tomllib")
