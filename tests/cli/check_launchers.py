#!/usr/bin/env python3
"""Every launcher file of every model preset (issue 25: `export --launcher`), parsed as the tools
that run it parse it.

For presets/default-plan.json with each model preset on 16 GPUs (2 nodes of 8) and each training
and serving engine, the k8s manifest (it embeds the export's text), and for four models also the
slurm and torchrun scripts and TRL's colocated RL job under all three, are written with
`-o DIR/ --launcher L`, and:
  - launch.sh and job.sbatch pass `bash -n`, and so does the command srun runs in it;
  - job.yaml loads as YAML: a ConfigMap whose data are the export's files byte for byte, then a
    PyTorchJob (training: one Master, nodes - 1 Workers, each pod a node's GPUs) or a Deployment
    and a Service (serving: cluster.gpus / serving.tp engines of serving.tp GPUs), every mounted
    file present in the ConfigMap.

Usage: check_launchers.py ENVELOPE_CLI SOURCE_DIR. Exit 77 (skipped) without PyYAML or bash.
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("python3 has no yaml module (Debian: python3-yaml): skipped")
    sys.exit(77)
if not shutil.which("bash"):
    print("no bash: skipped")
    sys.exit(77)

cli, source = sys.argv[1], sys.argv[2]
presets = os.path.join(source, "presets")
default_plan = json.load(open(os.path.join(presets, "default-plan.json")))
models = [m["id"] for m in json.load(open(os.path.join(presets, "models.json")))["models"]]
TRAINING = ["deepspeed", "torchtitan", "megatron", "hf"]
SERVING = ["vllm", "sglang", "trtllm"]
GPUS, PER_NODE = 16, 8
failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def bash_syntax(where, text):
    r = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    if r.returncode != 0:
        fail(where, f"bash -n: {r.stderr.strip()}")


def check_yaml(where, text, files, serving, tp):
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        fail(where, f"not YAML: {e}")
        return
    kinds = [d.get("kind") for d in docs]
    want = ["ConfigMap", "Deployment", "Service"] if serving else ["ConfigMap", "PyTorchJob"]
    if kinds != want:
        fail(where, f"kinds {kinds}, want {want}")
        return
    data = docs[0]["data"]
    for name, content in files.items():
        if data.get(name) != content:
            fail(where, f"ConfigMap {name} differs from the exported file")
    pods = []
    if serving:
        spec = docs[1]["spec"]
        if spec["replicas"] != GPUS // tp:
            fail(where, f"replicas {spec['replicas']}, want {GPUS // tp}")
        pods.append((spec["template"]["spec"], tp))
    else:
        replicas = docs[1]["spec"]["pytorchReplicaSpecs"]
        nodes = replicas["Master"]["replicas"] + replicas.get("Worker", {}).get("replicas", 0)
        if replicas["Master"]["replicas"] != 1 or nodes != GPUS // PER_NODE:
            fail(where, f"{nodes} replicas, want {GPUS // PER_NODE} (one Master)")
        for role in replicas.values():
            pods.append((role["template"]["spec"], PER_NODE))
    for pod, gpus in pods:
        container = pod["containers"][0]
        if container["resources"]["limits"]["nvidia.com/gpu"] != gpus:
            fail(where, f"a pod has {container['resources']['limits']} GPUs, want {gpus}")
        for mount in container["volumeMounts"]:
            if mount["name"] == "files" and mount["subPath"] not in data:
                fail(where, f"mounts {mount['subPath']}, not in the ConfigMap")
        command = container["command"]
        if command[:2] != ["bash", "-c"]:
            fail(where, f"command {command}")
        else:
            bash_syntax(where + " (container command)", command[2])


def run(plan, engine, launcher, where):
    with tempfile.TemporaryDirectory() as tmp:
        plan_path = os.path.join(tmp, "plan.json")
        json.dump(plan, open(plan_path, "w"))
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        r = subprocess.run([cli, "export", plan_path, "--to", engine, "--launcher", launcher,
                            "-o", out + "/", "--report", "json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(where, f"exit {r.returncode}: {r.stderr.strip()[:300]}")
            return
        report = json.loads(r.stderr)
        files = {os.path.basename(p): open(p).read() for p in report["files"]}
        launcher_file = {"torchrun": "launch.sh", "slurm": "job.sbatch", "k8s": "job.yaml"}[launcher]
        if launcher_file not in files:
            fail(where, f"{launcher_file} not written ({sorted(files)})")
            return
        text = files.pop(launcher_file)
        if launcher == "k8s":
            check_yaml(where, text, files, engine in SERVING, plan["serving"]["tp"])
        else:
            bash_syntax(where, text)
            for line in text.splitlines():
                if line.startswith("srun ") and "bash -c '" in line:
                    inner = shlex.split(line)[-1]
                    bash_syntax(where + " (srun command)", inner)


# The manifest embeds each export's text, so every model goes through k8s with every engine; the
# shell scripts depend on the engine and the layout only, so a few models cover them (the
# sanitizer build runs this too: 540 exports there took 212 s).
SCRIPT_MODELS = {"llama-2-7b", "deepseek-v3", "gpt2", "qwen3-235b-a22b"}
checked = 0
for model in models:
    plan = json.loads(json.dumps(default_plan))
    plan["model"] = model
    plan["cluster"]["gpus"] = GPUS
    plan["cluster"]["gpus_per_node"] = PER_NODE
    plan.setdefault("serving", {})["tp"] = 4
    for engine in TRAINING + SERVING:
        launchers = ["k8s"]
        if model in SCRIPT_MODELS:
            launchers += ["slurm"] + (["torchrun"] if engine in TRAINING else [])
        for launcher in launchers:
            run(plan, engine, launcher, f"{model} {engine} {launcher}")
            checked += 1
    # TRL's colocated plan is one torchrun job of every GPU (its disjoint pools are refused).
    if model in SCRIPT_MODELS:
        colocated = json.loads(json.dumps(plan))
        colocated["rl"]["placement"] = "colocated"
        for launcher in ["k8s", "slurm", "torchrun"]:
            run(colocated, "trl", launcher, f"{model} trl (colocated) {launcher}")
            checked += 1

print(f"{checked} launcher files checked: {len(failures)} failures")
for f in failures[:50]:
    print("  " + f)
sys.exit(1 if failures else 0)
