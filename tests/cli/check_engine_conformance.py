#!/usr/bin/env python3
"""Every export of every preset plan and hard plan, checked against what the pinned engine
release accepts (issue 25): tests/data/engines/*.json, written by tools/engine_schema.py from the
engines' sources at a named commit.

For each plan -- presets/default-plan.json with each model preset, and tests/data/plans/hard/* --
and each engine with a description, `envelope-cli export PLAN --to ENGINE` is parsed as the engine
parses it (json, tomllib, a shell-split argument list) and checked: every key or flag exists in
that release, switches take no value, typed values parse, choices hold, and every cross-field
check of the description passes. A command-line engine's description names its program (`vllm
serve`, `python -m sglang.launch_server`): the NAME=value words before it are its environment
(VLLM_ALLOW_LONG_MAX_MODEL_LEN, SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN), and the vLLM
export's commented RL rollout engine block is checked as a second command. The model's
positions for the checks are the plan's `model.max_positions`, else the preset's.

A YAML engine (TRL: `python -m trl.scripts.grpo --config trl_grpo.yaml`) is exported with
`--report json` for its companions: every top-level key of the YAML is a field of the release's
dataclasses (TrlParser drops unknown ones silently), typed and within its choices, the keys of its
`deepspeed` section are DeepSpeed's (tests/data/engines/deepspeed-*.json), and trl_grpo.sh passes
`bash -n`; its torchrun line gives the world size the checks use, the `--key value` words after
`--config` are fields too, and its `trl vllm-serve` line is checked against the server's flags.

Usage: check_engine_conformance.py ENVELOPE_CLI SOURCE_DIR. Exit 77 (skipped) without tomllib;
without PyYAML the YAML engines are left out (said on the last line).
"""
import glob
import json
import math
import os
import re
import shlex
import subprocess
import sys

try:
    import tomllib
except ImportError:
    print("python3 has no tomllib (needs Python 3.11): skipped")
    sys.exit(77)

try:
    import yaml
except ImportError:
    yaml = None

cli, source = sys.argv[1], sys.argv[2]
presets = os.path.join(source, "presets")
default_plan = json.load(open(os.path.join(presets, "default-plan.json")))
models = {m["id"]: m["architecture"] for m in json.load(open(os.path.join(presets, "models.json")))["models"]}
schemas = {}
skipped = []
for path in sorted(glob.glob(os.path.join(source, "tests/data/engines/*.json"))):
    s = json.load(open(path))
    if s["kind"] == "yaml" and yaml is None:
        skipped.append(s["engine"])
        continue
    schemas[s["engine"]] = s

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def merged(plan):
    """The plan over the default plan (sections the plan leaves out keep the defaults)."""
    out = json.loads(json.dumps(default_plan))
    for key, value in plan.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


def flatten(table, prefix=""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from flatten(value, prefix + key + ".")
        else:
            yield prefix + key, value


TYPES = {"int": int, "float": (int, float), "str": str, "bool": bool}


def typed_ok(kind, value):
    if kind.startswith("list[") and kind.endswith("]"):  # a list of lists: each item a list
        return isinstance(value, list) and all(typed_ok(kind[5:-1], v) for v in value)
    expected = TYPES.get(kind)
    if expected is None:
        return True
    if kind == "int" and isinstance(value, bool):
        return False
    return isinstance(value, expected)


def layout_stages(layout):
    """Megatron's pipeline_parallel_layer_layout.py parse_str_to_list: the chunks' layer kinds."""
    text = layout.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        text = re.sub(pattern, lambda m: m.group(1) * int(m.group(2)), text)
    return text.split("|")


def megatron_split_ok(layers, pp, virtual, first, last, layout=None):
    """Megatron-LM's pipeline split rules (arguments.py validate_args, TransformerConfig, the
    layout's validate_layer_layout)."""
    if layout is not None:
        stages = layout_stages(layout)
        flat = "".join(stages)
        return (len(stages) % pp == 0 and flat.startswith("E") and flat.endswith("L")
                and flat.count("E") == 1 and flat.count("L") == 1
                and set(flat) <= set("ELtm") and flat.count("t") == layers)
    if layers is None or pp <= 1:
        return True
    v = virtual or 1
    if first is None and last is None:
        return layers % pp == 0 and (layers // pp) % v == 0
    middle_layers, middle_stages = layers, pp
    for count in (first, last):
        if count is not None:
            if count <= 0 or count % v:
                return False
            middle_layers -= count
            middle_stages -= 1
    if bool(middle_layers) != bool(middle_stages):
        return False
    return not middle_stages or (middle_layers % middle_stages == 0
                                 and (middle_layers // middle_stages) % v == 0)


def run_checks(where, schema, values, extra):
    def get(key, default=None):
        value = values.get(key)
        return default if value is None else value
    namespace = {"get": get, "ceil": math.ceil, "megatron_split_ok": megatron_split_ok,
                 "all": all, **extra}
    for check in schema["checks"]:
        try:
            # The rules come from tests/data/engines (our data); one namespace, so that
            # comprehensions in a rule see its names.
            ok = eval(check["rule"], {"__builtins__": {}, **namespace})
        except Exception as e:  # a rule that cannot be evaluated is a failure, named
            ok = False
            check = dict(check, id=f"{check['id']} ({type(e).__name__}: {e})")
        if not ok:
            fail(where, f"{check['id']} fails ({check['source']['file']}:{check['source']['line']})")


def check_toml(where, schema, text, plan):
    job = tomllib.loads(text)
    values = {k: v.get("default") for k, v in schema["keys"].items()}
    for key, value in flatten(job):
        spec = schema["keys"].get(key)
        if spec is None:
            fail(where, f"{key} is not a torchtitan {schema['engine_version']} key")
            continue
        items = value if spec.get("list") and isinstance(value, list) else [value]
        for item in items:
            if not typed_ok(spec["type"], item):
                fail(where, f"{key} = {item!r} is not {spec['type']}")
            if "choices" in spec and item not in spec["choices"]:
                fail(where, f"{key} = {item!r} is not one of {spec['choices']}")
        values[key] = value
    model = plan["model"] if isinstance(plan["model"], str) else plan["model"].get("preset")
    run_checks(where, schema, values, {"converters": schema.get("converters", []),
                                       "model_layers": models[model]["layers"]})


def check_json(where, schema, text, plan):
    config = json.loads(text)
    values = {}
    for key, value in flatten(config):
        values[key] = value
        if key not in schema["keys"] and key.split(".")[0] not in schema["keys"]:
            fail(where, f"{key} is not a DeepSpeed {schema['engine_version']} key")
    for section in ("zero_optimization.offload_optimizer", "zero_optimization.offload_param"):
        values[section] = {} if any(k.startswith(section + ".") for k in values) else None
    t = plan["training"]
    dp = plan["cluster"]["gpus"] // (t.get("tp", 1) * t.get("pp", 1) * t.get("cp", 1))
    run_checks(where, schema, values, {"data_parallel": dp})


ENGINE_NAMES = {"megatron": "Megatron-LM", "vllm": "vLLM", "sglang": "SGLang"}
ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def env_true(env):
    """vLLM's and SGLang's boolean environment variables: "1" or "true", any case."""
    return lambda name: env.get(name, "0").strip().lower() in ("1", "true")


def model_positions(plan):
    """The positions the plan's model states (the plan's own, else its preset's), or None."""
    model = plan["model"]
    if isinstance(model, dict) and model.get("max_positions"):
        return model["max_positions"]
    preset = model if isinstance(model, str) else model.get("preset")
    return models.get(preset, {}).get("max_positions")


def commands(text):
    """The command lines of an export: the active one (lines not starting with '#') and, for
    vLLM, the commented RL rollout engine block (the '# '-prefixed lines after its header)."""
    active = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    out = [("", active)]
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# RL rollout engine"):
            block = []
            for follow in lines[i + 1:]:
                if not follow.startswith("# "):
                    break
                block.append(follow[2:])
                if not follow.endswith("\\"):
                    break
            out.append((" (rollout block)", "\n".join(block)))
    return out


def is_flag(word):
    if not word.startswith("-"):
        return False
    try:
        float(word)
        return False
    except ValueError:
        return True


def check_value(where, flag, spec, g):
    """One value of a flag against its description; the parsed value (or None)."""
    kind = spec.get("type")
    if spec.get("nullable") and g == "None":
        return None
    if kind in ("json", "json.loads"):
        try:
            value = json.loads(g)
        except ValueError:
            fail(where, f"{flag} {g!r} is not JSON")
            return None
        fields = spec.get("fields")
        if fields is not None and isinstance(value, dict):
            for key, item in value.items():
                if key not in fields:
                    fail(where, f"{flag}: {key!r} is not a field of it")
                elif "choices" in fields[key] and item not in fields[key]["choices"]:
                    fail(where, f"{flag}: {key} = {item!r} is not one of {fields[key]['choices']}")
        return value
    try:
        value = int(g) if kind == "int" else float(g) if kind == "float" else g
    except ValueError:
        fail(where, f"{flag} {g!r} is not {kind}")
        return None
    if "choices" in spec and g not in [str(c) for c in spec["choices"]]:
        fail(where, f"{flag} {g!r} is not one of {spec['choices']}")
    for bound, ok in (("ge", lambda a, b: a >= b), ("gt", lambda a, b: a > b),
                      ("le", lambda a, b: a <= b), ("lt", lambda a, b: a < b)):
        if bound in spec and isinstance(value, (int, float)) and not ok(value, spec[bound]):
            fail(where, f"{flag} {g} is not {bound} {spec[bound]}")
    return value


def check_command(where, schema, words, plan):
    name = ENGINE_NAMES.get(schema["engine"], schema["engine"])
    env = {}
    program = schema.get("program")
    if program:
        # NAME=value words before the program are its environment.
        while words and ENV_WORD.match(words[0]):
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        expected = program.split()
        got = words[:len(expected)]
        python = expected[0] == "python" and got and re.fullmatch(r"python[0-9.]*", got[0])
        if got != expected and not (python and got[1:] == expected[1:]):
            fail(where, f"the command is not `{program} ...`: {' '.join(got)!r}")
            return
        words = words[len(expected):]
        for _ in schema.get("positionals", []):
            if words and not is_flag(words[0]):
                words = words[1:]
    values, i = {}, 0
    while i < len(words):
        flag = words[i]
        i += 1
        spec = schema["flags"].get(flag)
        given = []
        while i < len(words) and not is_flag(words[i]):
            given.append(words[i])
            i += 1
        if spec is None:
            fail(where, f"{flag} is not a {name} {schema['engine_version']} flag")
            continue
        dest = spec.get("dest") or flag[2:].replace("-", "_")
        if spec.get("switch"):
            if given:
                fail(where, f"{flag} is a switch, given {given}")
            values[dest] = spec.get("action") != "store_false"
            continue
        if not given or (len(given) > 1 and spec.get("nargs") not in ("+", "*")):
            fail(where, f"{flag} takes one value, given {given}")
            continue
        parsed = [check_value(where, flag, spec, g) for g in given]
        values[dest] = parsed if spec.get("nargs") in ("+", "*") else parsed[0]
    run_checks(where, schema, values, {"model_positions": model_positions(plan),
                                       "env_true": env_true(env)})


def check_args(where, schema, text, plan):
    blocks = commands(text) if schema.get("program") else [("", "\n".join(
        l for l in text.splitlines() if not l.startswith("#")))]
    for suffix, command in blocks:
        # A backslash before a newline continues the line, as in the shell.
        check_command(where + suffix, schema, shlex.split(command.replace("\\\n", " ")), plan)


def override_ok(kind, text):
    """A Hydra override value against the type of the key's default (OmegaConf converts the
    text: True/False/true/false for bools, integers for ints, numbers for floats)."""
    if kind == "bool":
        return text in ("True", "False", "true", "false")
    if kind == "int":
        return re.fullmatch(r"-?[0-9]+", text) is not None
    if kind == "float":
        try:
            return math.isfinite(float(text))
        except ValueError:
            return False
    if kind == "list":
        return text.startswith("[") and text.endswith("]")
    return True


def check_overrides(where, schema, text, plan):
    """verl: `python3 -m verl.trainer.main_ppo key=value ...`; every key exists in the composed
    config (Hydra refuses others without a '+'), its value parses as the default's type."""
    lines = [l for l in text.splitlines() if not l.startswith("#")]
    words = shlex.split("\n".join(lines).replace("\\\n", " "))
    program = schema["program"].split()
    at = next((i for i in range(len(words)) if words[i:i + len(program)] == program), None)
    if at is None:
        fail(where, f"no `{schema['program']}` command")
        return
    values = {}
    for word in words[at + len(program):]:
        key, eq, value = word.partition("=")
        if not eq:
            fail(where, f"{word!r} is not key=value")
            continue
        spec = schema["keys"].get(key)
        if spec is None:
            fail(where, f"{key} is not a verl {schema['engine_version']} config key")
            continue
        if key in values:
            fail(where, f"{key} given twice")
        if not override_ok(spec["type"], value):
            fail(where, f"{key}={value!r} is not {spec['type']}")
        values[key] = int(value) if spec["type"] == "int" and override_ok("int", value) else value
    run_checks(where, schema, values, {})


def model_moe(plan):
    """Whether the plan's model has experts (its own architecture, else its preset's)."""
    model = plan["model"]
    if isinstance(model, dict) and model.get("moe"):
        return True
    preset = model if isinstance(model, str) else model.get("preset")
    return bool(models.get(preset, {}).get("moe"))


def check_typed(where, name, spec, value):
    items = value if spec.get("list") and isinstance(value, list) else [value]
    if spec.get("list") and not isinstance(value, list):
        fail(where, f"{name} = {value!r} is not a list")
    for item in items:
        if item is None and spec.get("default", "required") is None:
            continue
        if not typed_ok(spec["type"], item):
            fail(where, f"{name} = {item!r} is not {spec['type']}")
        if "choices" in spec and item not in spec["choices"]:
            fail(where, f"{name} = {item!r} is not one of {spec['choices']}")


def shell_commands(text):
    """The script's command lines as words (continuations joined, comments and '&' dropped)."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            out.append(["<unparsable>", str(e)])
            continue
        out.append([w for w in words if w != "&"])
    return out


def check_yaml(where, schema, text, plan, report):
    """TRL: trl_grpo.yaml's keys against the dataclasses grpo.py parses, trl_grpo.sh's trainer
    and server lines, then the release's checks."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as e:
        fail(where, f"not YAML: {e}")
        return
    if not isinstance(config, dict):
        fail(where, "the YAML is not a mapping")
        return
    name = schema["engine"].upper()
    values = {}
    deepspeed = next((s for s in schemas.values() if s["engine"] == "deepspeed"), None)
    for key, value in config.items():
        spec = schema["keys"].get(key)
        if spec is None:
            fail(where, f"{key} is not a {name} {schema['engine_version']} field")
            continue
        if key == "deepspeed" and isinstance(value, dict) and deepspeed is not None:
            # Trainer fills "auto" from its own arguments; the keys are DeepSpeed's.
            for ds_key, _ in flatten(value):
                if ds_key not in deepspeed["keys"]:
                    fail(where, f"deepspeed.{ds_key} is not a DeepSpeed "
                                f"{deepspeed['engine_version']} key")
        else:
            check_typed(where, key, spec, value)
        values[key] = value
    companions = {c["file_name"]: c["text"] for c in report.get("companions", [])}
    script = companions.get("trl_grpo.sh")
    if script is None:
        fail(where, "no trl_grpo.sh")
        return
    bash = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    if bash.returncode != 0:
        fail(where, f"trl_grpo.sh: bash -n: {bash.stderr.strip()}")
    world, serve = None, None
    serve_program = schema["serve"]["program"].split()
    for words in shell_commands(script):
        if "torchrun" in words:
            run = words[words.index("torchrun"):]

            def option(flag, default):
                return int(run[run.index(flag) + 1]) if flag in run else default
            world = option("--nnodes", 1) * option("--nproc-per-node", 1)
            module = run.index("-m") + 1 if "-m" in run else len(run)
            if run[module:module + 1] != ["trl.scripts.grpo"]:
                fail(where, f"trl_grpo.sh: torchrun does not run trl.scripts.grpo: {run}")
            after = run[run.index("--config") + 2:] if "--config" in run else []
            for flag, value in zip(after[::2], after[1::2]):
                spec = schema["keys"].get(flag[2:])
                if not flag.startswith("--") or spec is None:
                    fail(where, f"trl_grpo.sh: {flag} is not a {name} field")
        at = next((i for i in range(len(words)) if words[i:i + len(serve_program)]
                   == serve_program), None)
        if at is not None:
            serve = {}
            flags = words[at + len(serve_program):]
            for flag, value in zip(flags[::2], flags[1::2]):
                spec = schema["serve"]["flags"].get(flag)
                if spec is None:
                    fail(where, f"trl_grpo.sh: {flag} is not a trl vllm-serve flag")
                    continue
                serve[spec["dest"]] = check_value(where + " (trl vllm-serve)", flag, spec, value)
            if len(flags) % 2:
                fail(where, f"trl_grpo.sh: trl vllm-serve {flags[-1]} has no value")
            if "model" not in serve:
                fail(where, "trl_grpo.sh: trl vllm-serve without --model")
    if world is None:
        fail(where, "trl_grpo.sh has no torchrun line")
        return
    run_checks(where, schema, values, {"world_size": world, "serve": serve,
                                       "model_moe": model_moe(plan)})


CHECKERS = {"toml": check_toml, "json": check_json, "args": check_args,
            "overrides": check_overrides, "yaml": check_yaml}

plans = [(f"default plan, model {m}", os.path.join(presets, "default-plan.json"),
          [f'model="{m}"'], merged({"model": m})) for m in models]
for path in sorted(glob.glob(os.path.join(source, "tests/data/plans/hard/*.json"))):
    plans.append((os.path.basename(path), path, [], merged(json.load(open(path)))))
# The settings issue 25 found refused, on the default plan.
VARIANTS = [
    ['model="llama-3-70b"', "cluster.gpus=64", "training.pp=4", "training.virtual_stages=2"],
    ['model="deepseek-v3"', "cluster.gpus=128", "training.pp=16", "training.ep=8"],
    ['model="deepseek-v3"', "cluster.gpus=256", "training.pp=16", "training.ep=8",
     'training.recipe="fp8-te"', 'training.recompute="none"',
     'training.recompute_ops=["norm", "mla_up", "swiglu"]', 'training.framework="megatron"'],
    ['model="deepseek-v3"', "cluster.gpus=64", "training.pp=4", "training.virtual_stages=2",
     "training.ep=8"],
    ['model="llama-3-8b"', 'training.recipe="fp8-deepseek"'],
    ['model="llama-3-8b"', 'training.recipe="fp8-te"', "training.pp=2", "training.tp=2",
     "training.virtual_stages=2"],
    ['model="llama-3-8b"', "training.seq_len=131072"],
    ["training.zero_stage=0", 'training.recipe="bf16-mixed-18"', "training.offload_optimizer=true"],
    ["training.zero_stage=1", "training.offload_optimizer=true"],
    ['name="evil\\n--num-layers 1\\n[job]"'],
]
default_path = os.path.join(presets, "default-plan.json")
for sets in VARIANTS:
    plan = merged({})
    for s in sets:
        key, value = s.split("=", 1)
        node, parts = plan, key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = json.loads(value)
    plans.append(("default plan, " + " ".join(sets), default_path, sets, plan))

# One export per `--to` target; a target with several schemas (verl: main_ppo, and the
# fully_async recipe for an asynchronous disjoint plan, "export_to": "verl") is checked against
# the one whose program the export runs.
targets = {}
for engine, schema in schemas.items():
    targets.setdefault(schema.get("export_to", engine), []).append(schema)

exports = 0
for label, path, sets, plan in plans:
    for engine, group in targets.items():
        schema = next((s for s in group if s["engine"] == engine), group[0])
        args = [cli, "export", path, "--to", engine]
        for s in sets:
            args += ["--set", s]
        # A YAML engine's companions (its launch script) come in the JSON report.
        yaml_kind = schema["kind"] == "yaml"
        if yaml_kind:
            args += ["--report", "json"]
        r = subprocess.run(args, capture_output=True, text=True)
        where = f"{label} -> {engine} {schema['engine_version']}"
        if r.returncode != 0:
            fail(where, f"export exited {r.returncode}: {r.stderr.strip()[:300]}")
            continue
        if len(group) > 1:
            schema = next((s for s in group if s.get("program") and s["program"] in r.stdout), schema)
            where = f"{label} -> {schema['engine']} {schema['engine_version']}"
        exports += 1
        extra = {"report": json.loads(r.stderr)} if yaml_kind else {}
        CHECKERS[schema["kind"]](where, schema, r.stdout, plan, **extra)

for f in failures:
    print(f)
print(f"{exports} exports of {len(plans)} plans checked against "
      f"{', '.join(s['engine'] + ' ' + s['engine_version'] for s in schemas.values())}: "
      f"{len(failures)} failures"
      + (f" (no PyYAML: {', '.join(skipped)} left out)" if skipped else ""))
sys.exit(1 if failures or exports == 0 else 0)
