#!/usr/bin/env python3
"""Dev-only: what an engine release accepts, read from its source at a named commit.

Writes tests/data/engines/<engine>-<version>.json: the keys or flags the engine declares (with
type, choices, nargs, default where the source states them literally) and the cross-field checks
issue 25 names, each located in the upstream file (file, line, the text that was found), so a
check that disappears upstream fails the extraction instead of going stale.

    tools/engine_schema.py torchtitan GIT_DIR v0.2.2     > tests/data/engines/torchtitan-v0.2.2.json
    tools/engine_schema.py megatron   GIT_DIR core_v0.19.0
    tools/engine_schema.py deepspeed  GIT_DIR v0.19.5

GIT_DIR is a clone (bare is fine) of the engine's repository; REF a tag or commit in it. The
source is read with `git show REF:path` and parsed with Python's ast: nothing is imported or run.
The checker that reads these files is tests/cli/check_engine_conformance.py.
"""
import ast
import json
import subprocess
import sys

REPOS = {
    "torchtitan": "pytorch/torchtitan",
    "megatron": "NVIDIA/Megatron-LM",
    "deepspeed": "deepspeedai/DeepSpeed",
}


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True,
                          capture_output=True, text=True).stdout


def show(git_dir, ref, path):
    return git(git_dir, "show", f"{ref}:{path}")


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def type_info(annotation, enums):
    """(type name, choices, nargs) of a dataclass annotation, as argparse / the config sees it."""
    text = ast.unparse(annotation)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        # X | None
        parts = [annotation.left, annotation.right]
        parts = [p for p in parts if ast.unparse(p) != "None"]
        if len(parts) == 1:
            return type_info(parts[0], enums)
        return text, None, None
    if isinstance(annotation, ast.Subscript):
        outer = ast.unparse(annotation.value)
        inner = annotation.slice
        if outer in ("Optional", "typing.Optional"):
            return type_info(inner, enums)
        if outer in ("Literal", "typing.Literal"):
            values = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            choices = [literal(v) for v in values]
            kinds = {type(c).__name__ for c in choices}
            return (kinds.pop() if len(kinds) == 1 else "str"), choices, None
        if outer in ("list", "List", "typing.List"):
            name, choices, _ = type_info(inner, enums)
            return name, choices, "+"
        if outer in ("Union", "typing.Union"):
            values = [v for v in inner.elts if ast.unparse(v) != "None"]
            if len(values) == 1:
                return type_info(values[0], enums)
        return text, None, None
    if text in enums:
        return "str", enums[text], None
    return text, None, None


def enums_of(tree):
    """Enum classes of a module: name -> member names."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
                ast.unparse(b).endswith("Enum") for b in node.bases):
            out[node.name] = [t.id for s in node.body if isinstance(s, ast.Assign)
                              for t in s.targets if isinstance(t, ast.Name)]
    return out


def dataclass_fields(cls):
    """(name, annotation, default node, field() keywords) of a class body's annotated fields."""
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if ast.unparse(stmt.annotation).startswith("ClassVar"):
                continue
            value, keywords = stmt.value, {}
            if isinstance(value, ast.Call) and ast.unparse(value.func) in ("field", "Field",
                                                                          "dataclasses.field"):
                keywords = {k.arg: k.value for k in value.keywords if k.arg}
                value = keywords.get("default", value.args[0] if value.args else None)
            yield stmt.target.id, stmt.annotation, value, keywords


def classes_of(tree):
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}


def locate(git_dir, ref, path, text):
    """The 1-based line of `text` in the file, or exit: a check whose source moved is not kept."""
    source = show(git_dir, ref, path)
    at = source.find(text)
    if at < 0:
        sys.exit(f"{path}@{ref}: '{text}' not found; re-read the check before regenerating")
    return {"file": path, "line": source.count("\n", 0, at) + 1, "text": text}


# --- torchtitan: JobConfig's dataclasses are the TOML's tables and keys -----------------------

def torchtitan(git_dir, ref):
    path = "torchtitan/config/job_config.py"
    tree = ast.parse(show(git_dir, ref, path))
    classes, enums = classes_of(tree), enums_of(tree)
    keys = {}

    def walk(cls_name, prefix):
        for name, annotation, default, keywords in dataclass_fields(classes[cls_name]):
            factory = keywords.get("default_factory")
            nested = ast.unparse(factory) if factory is not None else None
            if nested in classes:
                walk(nested, f"{prefix}{name}.")
                continue
            kind, choices, nargs = type_info(annotation, enums)
            entry = {"type": kind}
            if choices is not None:
                entry["choices"] = choices
            if nargs or kind.startswith("list"):
                entry["list"] = True
            value = literal(default) if default is not None else None
            if value is not None or (default is not None and ast.unparse(default) == "None"):
                entry["default"] = value
            keys[prefix + name] = entry

    walk("JobConfig", "")
    # The converters model.converters may name: register_model_converter(Class, "name") calls.
    converters, where = [], None
    for line in git(git_dir, "grep", "-n", "register_model_converter(", ref, "--",
                    "torchtitan").splitlines():
        _, src, number, code = line.split(":", 3)
        call = ast.parse(code.strip()).body[0].value if code.strip().startswith(
            "register_model_converter(") else None
        if call is not None and len(call.args) == 2 and isinstance(literal(call.args[1]), str):
            converters.append(literal(call.args[1]))
            where = where or {"file": src, "line": int(number), "text": code.strip()}
    if not converters:
        sys.exit("no register_model_converter calls found")
    pp = "torchtitan/distributed/pipeline_parallel.py"
    checks = [
        {"id": "converter-registered",
         "rule": "all(c in converters for c in get('model.converters', []))",
         "source": where},
        {"id": "pipeline-stages-divide",
         "rule": "get('parallelism.pipeline_parallel_layers_per_stage') is None or "
                 "ceil((model_layers + get('parallelism.pipeline_parallel_first_stage_less_layers')"
                 " + get('parallelism.pipeline_parallel_last_stage_less_layers')) / "
                 "get('parallelism.pipeline_parallel_layers_per_stage')) % "
                 "get('parallelism.pipeline_parallel_degree') == 0",
         "source": locate(git_dir, ref, pp, "must be divisible by")},
    ]
    return {"kind": "toml", "keys": keys, "converters": sorted(set(converters)),
            "checks": checks}


# --- Megatron-LM: add_argument calls and the dataclass-generated groups ----------------------

def megatron(git_dir, ref):
    path = "megatron/training/arguments.py"
    tree = ast.parse(show(git_dir, ref, path))
    flags = {}

    def add(names, **info):
        entry = {k: v for k, v in info.items() if v is not None}
        for n in names:
            flags[n] = entry

    factories = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = ast.unparse(node.func)
        if func.endswith("add_argument"):
            names = [literal(a) for a in node.args if isinstance(literal(a), str)]
            names = [n for n in names if n.startswith("--")]
            if not names:
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            action = literal(kw["action"]) if "action" in kw else None
            add(names, dest=literal(kw["dest"]) if "dest" in kw else None,
                type=ast.unparse(kw["type"]) if "type" in kw else None,
                choices=literal(kw["choices"]) if "choices" in kw else None,
                nargs=literal(kw["nargs"]) if "nargs" in kw else None,
                action=action if isinstance(action, str) else None,
                switch=True if action in ("store_true", "store_false", "store_const") else None)
        elif func == "ArgumentGroupFactory" and node.args:
            exclude = []
            for k in node.keywords:
                if k.arg == "exclude":
                    value = literal(k.value)
                    if isinstance(value, list):
                        exclude = value
            factories.append((ast.unparse(node.args[0]), exclude))

    # The config classes the factories turn into flags (megatron/training/argument_utils.py):
    # --name-with-dashes; a bool is a switch, default True gives --no-NAME and --disable-NAME;
    # list[T] takes nargs "+"; an Enum or a Literal gives choices.
    sources = git(git_dir, "ls-tree", "-r", "--name-only", ref, "megatron").split()
    trees = {}

    def find_class(name):
        for src in sources:
            if not src.endswith(".py"):
                continue
            if src not in trees:
                text = show(git_dir, ref, src)
                trees[src] = ast.parse(text) if f"class {name}" in text else None
                if trees[src] is None:
                    trees.pop(src)
                    continue
            tree_ = trees[src]
            classes = classes_of(tree_)
            if name in classes:
                return classes[name], tree_
        return None, None

    all_enums = {}
    for cls_name, exclude in factories:
        seen = set()

        def fields_of(name):
            cls, module = find_class(name)
            if cls is None or name in seen:
                return []
            seen.add(name)
            all_enums.update(enums_of(module))
            out = []
            for base in cls.bases:
                out += fields_of(ast.unparse(base).split(".")[-1])
            return out + list(dataclass_fields(cls))

        for name, annotation, default, keywords in fields_of(cls_name):
            if name in exclude or name.startswith("_"):
                continue
            if "init" in keywords and literal(keywords["init"]) is False:
                continue
            kind, choices, nargs = type_info(annotation, all_enums)
            if choices is None and kind.isidentifier() and kind not in ("int", "float", "str",
                                                                         "bool"):
                enum_cls, enum_module = find_class(kind)
                if enum_cls is not None and kind in enums_of(enum_module):
                    kind, choices = "str", enums_of(enum_module)[kind]
            dashed = "--" + name.replace("_", "-")
            # field(metadata={"argparse_meta": {...}}) overrides what the type gives.
            meta = {}
            if isinstance(keywords.get("metadata"), ast.Dict):
                for k, v in zip(keywords["metadata"].keys, keywords["metadata"].values):
                    if literal(k) == "argparse_meta" and isinstance(v, ast.Dict):
                        for mk, mv in zip(v.keys, v.values):
                            value = literal(mv)
                            meta[literal(mk)] = value if value is not None else ast.unparse(mv)
            if meta:
                names = meta.pop("arg_names", [dashed])
                action = meta.get("action")
                add(names, dest=name, type=meta.get("type", None if kind == "bool" else kind),
                    choices=meta.get("choices", choices), nargs=meta.get("nargs", nargs),
                    action=action,
                    switch=True if (kind == "bool" and "type" not in meta) or action in (
                        "store_true", "store_false") else None)
                continue
            if kind == "bool":
                if default is not None and literal(default) is True:
                    add(["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")],
                        dest=name, action="store_false", switch=True)
                else:
                    add([dashed], dest=name, action="store_true", switch=True)
            else:
                add([dashed], dest=name, type=kind, choices=choices, nargs=nargs)

    checks = [
        {"id": "positions-cover-sequence",
         "rule": "get('seq_length') is None or get('max_position_embeddings') >= get('seq_length')",
         "source": locate(git_dir, ref, path, "assert args.max_position_embeddings >= args.seq_length")},
        {"id": "cpu-offload-needs-precision-aware-optimizer",
         "rule": "not get('optimizer_cpu_offload') or get('use_precision_aware_optimizer')",
         "source": locate(git_dir, ref, path, "assert args.use_precision_aware_optimizer")},
        {"id": "pipeline-split",
         "rule": "megatron_split_ok(get('num_layers'), get('pipeline_model_parallel_size', 1), "
                 "get('num_virtual_stages_per_pipeline_rank'), "
                 "get('decoder_first_pipeline_num_layers'), get('decoder_last_pipeline_num_layers'), "
                 "get('pipeline_model_parallel_layout'))",
         "source": locate(git_dir, ref, "megatron/core/transformer/transformer_config.py",
                          "must be divisible by")},
        {"id": "one-virtual-pipeline-form",
         "rule": "(get('num_layers_per_virtual_pipeline_stage') is not None) + "
                 "(get('num_virtual_stages_per_pipeline_rank') is not None) + "
                 "(get('pipeline_model_parallel_layout') is not None) <= 1",
         "source": locate(git_dir, ref, path, "No more than one of the following arguments")},
    ]
    return {"kind": "args", "flags": flags, "checks": checks}


# --- DeepSpeed: the pydantic sections Envelope writes and the top-level key constants ---------

def deepspeed(git_dir, ref):
    constants = ast.parse(show(git_dir, ref, "deepspeed/runtime/constants.py"))
    top = sorted({literal(n.value) for n in ast.walk(constants)
                  if isinstance(n, ast.Assign) and isinstance(literal(n.value), str)
                  and all(isinstance(t, ast.Name) and t.id.isupper() for t in n.targets)
                  and literal(n.value).replace("_", "").isalnum()
                  and literal(n.value).islower()})
    keys = {k: {"type": "any"} for k in top}
    sections = {
        "zero_optimization": ("deepspeed/runtime/zero/config.py", "DeepSpeedZeroConfig"),
        "zero_optimization.offload_optimizer": ("deepspeed/runtime/zero/offload_config.py",
                                                "DeepSpeedZeroOffloadOptimizerConfig"),
        "zero_optimization.offload_param": ("deepspeed/runtime/zero/offload_config.py",
                                            "DeepSpeedZeroOffloadParamConfig"),
        "bf16": ("deepspeed/runtime/precision_config.py", "DeepSpeedBF16Config"),
        "fp16": ("deepspeed/runtime/precision_config.py", "DeepSpeedFP16Config"),
        "activation_checkpointing": ("deepspeed/runtime/activation_checkpointing/config.py",
                                     None),
    }
    for section, (path, cls_name) in sections.items():
        tree = ast.parse(show(git_dir, ref, path))
        enums = enums_of(tree)
        keys[section] = {"type": "object"}
        if cls_name is None:
            # activation_checkpointing: its keys are the module's string constants.
            for n in ast.walk(tree):
                if isinstance(n, ast.Assign) and isinstance(literal(n.value), str) and all(
                        isinstance(t, ast.Name) and t.id.startswith("ACT_CHKPT_")
                        and not t.id.endswith("_DEFAULT") and t.id != "ACT_CHKPT"
                        for t in n.targets):
                    keys[f"{section}.{literal(n.value)}"] = {"type": "any"}
            continue
        for name, annotation, default, keywords in dataclass_fields(classes_of(tree)[cls_name]):
            kind, choices, _ = type_info(annotation, enums)
            entry = {"type": kind}
            if choices:
                entry["choices"] = [c.lower() for c in choices]
            alias = literal(keywords["alias"]) if "alias" in keywords else None
            keys[f"{section}.{alias or name}"] = entry
    keys["data_types.grad_accum_dtype"] = {"type": "str", "choices": ["fp32", "fp16", "bf16"]}
    engine = "deepspeed/runtime/engine.py"
    checks = [
        {"id": "bf16-fp32-accumulation-needs-zero",
         "rule": "not (get('bf16.enabled') and get('data_types.grad_accum_dtype') == 'fp32' "
                 "and get('zero_optimization.stage', 0) == 0)",
         "source": locate(git_dir, ref, engine, "unsupported mix of {model_dtype=} and {grad_accum_dtype=}")},
        {"id": "optimizer-offload-needs-zero",
         "rule": "get('zero_optimization.stage', 0) > 0 or "
                 "get('zero_optimization.offload_optimizer') is None",
         "source": locate(git_dir, ref, engine, "def zero_cpu_offload")},
        {"id": "batch-product",
         "rule": "get('train_batch_size') == get('train_micro_batch_size_per_gpu') * "
                 "get('gradient_accumulation_steps') * data_parallel",
         "source": locate(git_dir, ref, "deepspeed/runtime/config.py", "def _batch_assertion")},
    ]
    return {"kind": "json", "keys": keys, "checks": checks}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in REPOS:
        sys.exit(__doc__)
    engine, git_dir, ref = sys.argv[1:]
    body = {"torchtitan": torchtitan, "megatron": megatron, "deepspeed": deepspeed}[engine](
        git_dir, ref)
    out = {"format": "envelope.engine-schema", "version": 1, "engine": engine,
           "engine_version": ref, "repo": REPOS[engine],
           "commit": git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip(),
           "generated_by": "tools/engine_schema.py", **body}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
