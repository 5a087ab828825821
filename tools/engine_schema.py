#!/usr/bin/env python3
"""Dev-only: what an engine release accepts, read from its source at a named commit.

Writes tests/data/engines/<engine>-<version>.json: the keys or flags the engine declares (with
type, choices, nargs, default where the source states them literally) and the cross-field checks
issue 25 names, each located in the upstream file (file, line, the text that was found), so a
check that disappears upstream fails the extraction instead of going stale.

    tools/engine_schema.py torchtitan GIT_DIR v0.2.2     > tests/data/engines/torchtitan-v0.2.2.json
    tools/engine_schema.py megatron   GIT_DIR core_v0.19.0
    tools/engine_schema.py deepspeed  GIT_DIR v0.19.5
    tools/engine_schema.py verl       GIT_DIR v0.7.0
    tools/engine_schema.py verl-fully-async GIT_DIR v0.7.0
    tools/engine_schema.py openrlhf   GIT_DIR v0.11.0
    tools/engine_schema.py trl        GIT_DIR v1.9.0

    tools/engine_schema.py vllm       GIT_DIR v0.19.0
    tools/engine_schema.py sglang     GIT_DIR v0.5.4

GIT_DIR is a clone (bare is fine) of the engine's repository; REF a tag or commit in it. The
source is read with `git show REF:path` and parsed with Python's ast: nothing is imported or run.
The checker that reads these files is tests/cli/check_engine_conformance.py.

vLLM (`vllm serve`): the flags are the add_argument calls of EngineArgs.add_cli_args and
AsyncEngineArgs.add_cli_args (vllm/engine/arg_utils.py), of make_arg_parser and the frontend
dataclasses' add_cli_args (vllm/entrypoints/openai/cli_args.py) and of the serve subcommand
(vllm/entrypoints/cli/serve.py, when present). `**X_kwargs["field"]` with
`X_kwargs = get_kwargs(ConfigClass)`, and `for key, value in X_kwargs.items()` loops, are
expanded as arg_utils._compute_kwargs does at run time, from the field's annotation: a dataclass
type takes JSON (its field names and literal choices are kept, one level deep), a bool is
--NAME / --no-NAME (BooleanOptionalAction), a Literal gives choices (none when str is also
allowed, as vLLM makes them a metavar), list/tuple/set take nargs "+", then int, float,
dict (JSON), str or any other class (str); Optional adds the value "None". Type aliases are
followed through module-level assignments anywhere under vllm/. Approximations: kwargs set by
explicit keywords of the add_argument call or by `X_kwargs["f"]["k"] = literal` assignments
override the computed ones, but non-literal ones (custom parser actions, type= functions) are
recorded by their source text; pydantic Field(ge/gt/le/lt=...) bounds are kept as "ge"/...;
human_readable_int (max_num_batched_tokens, kv_cache_memory_bytes, max_model_len) is recorded as
int, so "1k" would be refused here though vLLM takes it; flags that plugins or platforms add at
run time are not seen.

SGLang (`python -m sglang.launch_server`): the add_argument calls of ServerArgs.add_cli_args
(python/sglang/srt/server_args.py); choices given as a module-level constant of that file are
resolved when the constant is a literal list (choices that helper functions append at run time,
for plugin backends, are not seen); BooleanOptionalAction gives --NAME and --no-NAME.

TRL (`python -m trl.scripts.grpo --config trl_grpo.yaml`): the fields of the dataclasses
trl/scripts/grpo.py's make_parser hands TrlParser (GRPOScriptArguments, GRPOConfig, ModelConfig,
DatasetMixtureConfig) and of their bases in TRL's own files (ScriptArguments, _BaseConfig): the
YAML's top-level keys. GRPOConfig's root is transformers' TrainingArguments, which TRL does not
pin (pyproject.toml: a floor only) and which is not read here: the few of its keys the export
writes are listed by hand in TRAINING_ARGUMENTS, marked "listed_by_hand". `trl vllm-serve`'s
flags are the fields of trl/scripts/vllm_serve.py's ScriptArguments, as --field_name.
"""
import ast
import json
import subprocess
import sys

REPOS = {
    "torchtitan": "pytorch/torchtitan",
    "megatron": "NVIDIA/Megatron-LM",
    "deepspeed": "deepspeedai/DeepSpeed",
    "vllm": "vllm-project/vllm",
    "sglang": "sgl-project/sglang",
    "verl": "volcengine/verl",
    "verl-fully-async": "volcengine/verl",
    "openrlhf": "OpenRLHF/OpenRLHF",
    "trl": "huggingface/trl",
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
            name, choices, nested = type_info(inner, enums)
            if nested:  # a list of lists (module_fqns_per_model_part): each item is a list
                return f"list[{name}]", None, "+"
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


# --- shared by vLLM and SGLang: a located rule, wherever the file now lives ---------------------

def locate_in(git_dir, ref, under, text):
    """`text` in the first file under `under` that has it (git grep), or exit."""
    try:
        hits = git(git_dir, "grep", "-n", "-F", text, ref, "--", under).splitlines()
    except subprocess.CalledProcessError:
        hits = []
    if not hits:
        sys.exit(f"{under}@{ref}: '{text}' not found; re-read the check before regenerating")
    _, path, number, _ = hits[0].split(":", 3)
    return {"file": path, "line": int(number), "text": text}


def add_argument_names(call):
    return [literal(a) for a in call.args if isinstance(literal(a), str)
            and literal(a).startswith("-")]


def is_add_argument(node):
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("add_argument")


# --- vLLM: EngineArgs' groups, generated from the config dataclasses -------------------------

class VllmSource:
    """The modules of one vLLM release, parsed on demand; classes and type aliases by name."""

    def __init__(self, git_dir, ref):
        self.git_dir, self.ref, self.trees = git_dir, ref, {}

    def tree(self, path):
        if path not in self.trees:
            self.trees[path] = ast.parse(show(self.git_dir, self.ref, path))
        return self.trees[path]

    def grep(self, pattern):
        try:
            out = git(self.git_dir, "grep", "-l", "-E", pattern, self.ref, "--", "vllm")
        except subprocess.CalledProcessError:
            return []
        return [line.split(":", 1)[1] for line in out.splitlines() if line.endswith(".py")]

    def find_class(self, name):
        for path in self.grep(rf"^class {name}\b"):
            for node in self.tree(path).body:
                if isinstance(node, ast.ClassDef) and node.name == name:
                    return node, path
        return None, None

    def find_alias(self, name, near=None):
        """The right-hand side of a module-level `name = ...` / `name: TypeAlias = ...`."""
        paths = ([near] if near else []) + self.grep(rf"^{name}\s*(:[^=]*)?="
                                                     )
        for path in paths:
            for node in self.tree(path).body:
                if isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == name for t in node.targets):
                    return node.value, path
                if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                        and node.target.id == name and node.value is not None):
                    return node.value, path
        return None, None

    def fields(self, name):
        """The dataclass fields of class `name` and its bases, base first; (fields, path)."""
        cls, path = self.find_class(name)
        if cls is None:
            return [], None
        out = []
        for base in cls.bases:
            base_fields, _ = self.fields(ast.unparse(base).split(".")[-1])
            out += base_fields
        for f in dataclass_fields(cls):
            if not ast.unparse(f[1]).startswith("InitVar"):
                out = [g for g in out if g[0] != f[0]] + [(*f, path)]
        return out, path

    def is_dataclass(self, name):
        cls, _ = self.find_class(name)
        return cls is not None and any(
            "dataclass" in ast.unparse(d) or ast.unparse(d).split("(")[0] == "config"
            for d in cls.decorator_list)


BUILTIN = {"int", "float", "str", "bool", "dict", "list", "tuple", "set", "bytes", "type"}


def vllm_hints(src, node, path, depth=0):
    """get_type_hints(): the set of a field's types, unions and Annotated flattened, aliases
    followed. Each hint: (kind, detail) with kind in bool/int/float/str/None/literal/list/
    tuple/set/dict/dataclass/class/other."""
    if depth > 20 or node is None:
        return [("other", None)]
    text = ast.unparse(node)
    if isinstance(node, ast.Constant) and node.value is None or text == "None":
        return [("None", None)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a forward reference
        return vllm_hints(src, ast.parse(node.value, mode="eval").body, path, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return (vllm_hints(src, node.left, path, depth + 1)
                + vllm_hints(src, node.right, path, depth + 1))
    if isinstance(node, ast.Subscript):
        outer = ast.unparse(node.value).split(".")[-1]
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if outer in ("Annotated", "SkipValidation"):
            return vllm_hints(src, args[0], path, depth + 1)
        if outer == "Union":
            return [h for a in args for h in vllm_hints(src, a, path, depth + 1)]
        if outer == "Optional":
            return vllm_hints(src, args[0], path, depth + 1) + [("None", None)]
        if outer == "Literal":
            values = []
            for a in args:
                value = literal(a)
                if value is None and not (isinstance(a, ast.Constant) and a.value is None):
                    # Literal[OtherLiteral, ...]: an alias nested in the literal.
                    for kind, detail in vllm_hints(src, a, path, depth + 1):
                        if kind == "literal":
                            values += detail
                else:
                    values.append(value)
            return [("literal", values)]
        if outer in ("list", "List", "Sequence", "tuple", "Tuple", "set", "Set"):
            kind = {"List": "list", "Sequence": "list", "Tuple": "tuple", "Set": "set"}.get(
                outer, outer)
            return [(kind, (args, path))]
        if outer in ("dict", "Dict", "Mapping"):
            return [("dict", None)]
        if outer == "type":
            return [("other", None)]
        return vllm_hints(src, node.value, path, depth + 1)
    name = text.split(".")[-1]
    if name in BUILTIN:
        return [(name if name in ("int", "float", "str", "bool", "dict") else
                 {"list": "list", "tuple": "tuple", "set": "set"}.get(name, "other"), None)]
    if name in ("Any", "Callable"):
        return [("class", name)]
    alias, alias_path = src.find_alias(name, path)
    if alias is not None and not (isinstance(alias, ast.Call)
                                  and ast.unparse(alias.func).endswith("TypeVar")):
        if isinstance(alias, ast.Call) and ast.unparse(alias.func).endswith("NewType"):
            alias = alias.args[1]
        return vllm_hints(src, alias, alias_path, depth + 1)
    if src.is_dataclass(name):
        return [("dataclass", name)]
    return [("class", name)]


def sorted_options(options):
    """literal_to_kwargs sorts the options (one type, so sorted() works)."""
    try:
        return sorted(options)
    except TypeError:
        return sorted(options, key=str)


def vllm_field_kwargs(src, name, annotation, default, keywords, path, dataclass_fields_too=True):
    """arg_utils._compute_kwargs for one field, as far as the source says it literally."""
    hints = vllm_hints(src, annotation, path)
    kinds = {k for k, _ in hints}
    entry = {"dest": name}
    dataclass_name = next((d for k, d in hints if k == "dataclass"), None)
    if dataclass_name is not None:
        entry["type"] = "json"
        if dataclass_fields_too:
            inner = {}
            for fname, fann, fdef, fkw, fpath in src.fields(dataclass_name)[0]:
                sub = vllm_field_kwargs(src, fname, fann, fdef, fkw, fpath, False)
                inner[fname] = {k: v for k, v in sub.items() if k in ("type", "choices")}
            entry["fields"] = inner
    elif "bool" in kinds:
        entry["action"] = "BooleanOptionalAction"
        entry["switch"] = True
    elif "literal" in kinds:
        options = [v for k, d in hints if k == "literal" for v in d]
        entry["type"] = type(options[0]).__name__ if options else "str"
        if "str" not in kinds:
            entry["choices"] = sorted_options(options)
    elif kinds & {"tuple", "list", "set"}:
        args, apath = next(d for k, d in hints if k in ("tuple", "list", "set"))
        elem = vllm_hints(src, args[0], apath) if args else [("str", None)]
        elem_kinds = {k for k, _ in elem}
        if len(elem_kinds - {"None"}) > 1:
            entry["type"] = "str"
        elif "literal" in elem_kinds:
            options = [v for k, d in elem if k == "literal" for v in d]
            entry["type"] = type(options[0]).__name__ if options else "str"
            entry["choices"] = sorted_options(options)
        else:
            entry["type"] = {"int": "int", "float": "float"}.get(next(iter(elem_kinds)), "str")
        fixed = next(k for k, _ in hints if k in ("tuple", "list", "set")) == "tuple" and not any(
            isinstance(a, ast.Constant) and a.value is Ellipsis for a in args)
        entry["nargs"] = len(args) if fixed else "+"
    elif "int" in kinds:
        entry["type"] = "int"
    elif "float" in kinds:
        entry["type"] = "float"
    elif "dict" in kinds and ("str" in kinds or "class" in kinds):
        entry["type"] = "json-or-str"
    elif "dict" in kinds:
        entry["type"] = "json"
    else:
        entry["type"] = "str"
    if "None" in kinds and "bool" not in kinds:
        entry["nullable"] = True
        if "choices" in entry:
            entry["choices"].append("None")
    for bound in ("ge", "gt", "le", "lt"):
        if bound in keywords and isinstance(literal(keywords[bound]), (int, float)):
            entry[bound] = literal(keywords[bound])
    return entry


def vllm(git_dir, ref):
    src = VllmSource(git_dir, ref)
    flags = {}
    files = {
        "vllm/engine/arg_utils.py": ("EngineArgs.add_cli_args", "AsyncEngineArgs.add_cli_args"),
        "vllm/entrypoints/openai/cli_args.py": ("make_arg_parser", "*.add_cli_args"),
        "vllm/entrypoints/cli/serve.py": ("*.subparser_init",),
    }
    positionals = []

    def functions(tree, wanted):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in wanted:
                yield None, node
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and (
                            f"{node.name}.{item.name}" in wanted or f"*.{item.name}" in wanted):
                        yield node.name, item

    def add(names, entry):
        for n in names:
            flags[n] = dict(entry)
        if entry.get("action") == "BooleanOptionalAction":
            for n in names:
                if n.startswith("--"):
                    flags["--no-" + n[2:]] = dict(entry, action="store_false")

    for path, wanted in files.items():
        try:
            tree = src.tree(path)
        except subprocess.CalledProcessError:
            if path == "vllm/engine/arg_utils.py":
                raise
            continue
        for owner, func in functions(tree, wanted):
            kwargs_of, overrides, deleted = {}, {}, set()
            for node in ast.walk(func):
                # X_kwargs = get_kwargs(ConfigClass)  (cls / self's class for a classmethod)
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and ast.unparse(node.value.func).endswith("get_kwargs")
                        and node.value.args and isinstance(node.targets[0], ast.Name)):
                    cls_name = ast.unparse(node.value.args[0])
                    kwargs_of[node.targets[0].id] = owner if cls_name == "cls" else cls_name
                # X_kwargs["field"]["key"] = value
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Subscript)
                                and isinstance(t.value.value, ast.Name)):
                            field_name, key = literal(t.value.slice), literal(t.slice)
                            value = literal(node.value)
                            overrides.setdefault((t.value.value.id, field_name), {})[key] = (
                                value if value is not None else ast.unparse(node.value))
                elif isinstance(node, ast.Delete):
                    for t in node.targets:
                        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                            deleted.add((t.value.id, literal(t.slice)))
                        elif (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Subscript)
                              and isinstance(t.value.value, ast.Name)):
                            overrides.setdefault((t.value.value.id, literal(t.value.slice)),
                                                 {})[literal(t.slice)] = None

            field_cache = {}

            def field_entry(var, field_name):
                cls_name = kwargs_of.get(var)
                if cls_name is None:
                    sys.exit(f"{path}@{ref}: {var} is not a get_kwargs(...) result")
                if cls_name not in field_cache:
                    field_cache[cls_name] = {f[0]: f for f in src.fields(cls_name)[0]}
                    if not field_cache[cls_name]:
                        sys.exit(f"{path}@{ref}: no dataclass {cls_name} found")
                f = field_cache[cls_name].get(field_name)
                if f is None:
                    sys.exit(f"{path}@{ref}: {cls_name} has no field {field_name}")
                entry = vllm_field_kwargs(src, *f)
                apply(entry, overrides.get((var, field_name), {}))
                return entry

            def apply(entry, extra):
                for key, value in extra.items():
                    if key == "type":
                        entry["type"] = value if value in ("int", "float", "str") else (
                            "json" if value in ("json.loads", "parse_type(json.loads)")
                            else str(value))
                        entry.pop("fields", None)
                    elif key == "choices":
                        if value is None or isinstance(value, str):
                            entry.pop("choices", None)
                        else:
                            entry["choices"] = list(value)
                    elif key == "action":
                        if isinstance(value, str) and value.startswith("argparse."):
                            value = value[len("argparse."):]
                        entry["action"] = value
                        switch = value in ("store_true", "store_false", "store_const",
                                           "BooleanOptionalAction",
                                           "argparse.BooleanOptionalAction")
                        if switch:
                            entry["switch"] = True
                            entry.pop("type", None)
                        else:
                            entry.pop("switch", None)
                    elif key == "nargs":
                        if value is None:
                            entry.pop("nargs", None)
                        else:
                            entry["nargs"] = value
                    elif key == "dest":
                        entry["dest"] = value

            for node in ast.walk(func):
                if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and (
                        isinstance(node.iter.func, ast.Attribute)
                        and node.iter.func.attr == "items"
                        and isinstance(node.iter.func.value, ast.Name)
                        and node.iter.func.value.id in kwargs_of):
                    var = node.iter.func.value.id
                    for field_name in list(field_cache.get(kwargs_of[var], {})) or [
                            f[0] for f in src.fields(kwargs_of[var])[0]]:
                        if (var, field_name) in deleted:
                            continue
                        entry = field_entry(var, field_name)
                        if entry.get("action") == "BooleanOptionalAction" or entry.get("switch"):
                            entry.setdefault("switch", True)
                        add(["--" + field_name.replace("_", "-")], entry)
                    continue
                if not is_add_argument(node):
                    continue
                names = add_argument_names(node)
                if not names:
                    first = literal(node.args[0]) if node.args else None
                    if isinstance(first, str):
                        positionals.append(first)
                    continue
                entry = {"dest": next((n for n in names if n.startswith("--")),
                                      names[0]).lstrip("-").replace("-", "_")}
                explicit = {}
                for k in node.keywords:
                    if k.arg is None:
                        # **X_kwargs["field"], or **{**X_kwargs["field"], "key": value}
                        parts = [k.value]
                        if isinstance(k.value, ast.Dict):
                            parts = []
                            for dk, dv in zip(k.value.keys, k.value.values):
                                if dk is None:
                                    parts.append(dv)
                                else:
                                    value = literal(dv)
                                    explicit[literal(dk)] = (value if value is not None
                                                             else ast.unparse(dv))
                        for part in parts:
                            if (isinstance(part, ast.Subscript)
                                    and isinstance(part.value, ast.Call)
                                    and ast.unparse(part.value.func).endswith("get_kwargs")):
                                # **get_kwargs(ConfigClass)["field"]
                                inline = "_inline_" + ast.unparse(part.value.args[0])
                                kwargs_of[inline] = ast.unparse(part.value.args[0])
                                part = ast.Subscript(value=ast.Name(id=inline), slice=part.slice)
                            if (isinstance(part, ast.Subscript)
                                    and isinstance(part.value, ast.Name)):
                                entry = field_entry(part.value.id, literal(part.slice))
                                # argparse's dest: the first long name, not the field's.
                                entry["dest"] = next((n for n in names if n.startswith("--")),
                                                     names[0]).lstrip("-").replace("-", "_")
                    else:
                        value = literal(k.value)
                        explicit[k.arg] = value if value is not None else ast.unparse(k.value)
                if "type" in explicit and explicit["type"] not in ("int", "float", "str"):
                    text = explicit["type"]
                    explicit["type"] = ("int" if "human_readable_int" in text else
                                        "json" if "json.loads" in text else text)
                apply(entry, explicit)
                add(names, entry)

    # The cross-field checks issue 25 names.
    checks = [
        {"id": "batched-tokens-cover-seqs",
         "rule": "get('max_num_batched_tokens') is None or get('max_num_seqs') is None or "
                 "get('max_num_batched_tokens') >= get('max_num_seqs')",
         "source": locate_in(git_dir, ref, "vllm/config",
                             "self.max_num_batched_tokens < self.max_num_seqs")},
        {"id": "max-model-len-within-positions",
         "rule": "model_positions is None or get('max_model_len') is None or "
                 "get('max_model_len') <= model_positions or "
                 "env_true('VLLM_ALLOW_LONG_MAX_MODEL_LEN')",
         "source": locate_in(git_dir, ref, "vllm/config",
                             "envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN")},
    ]
    return {"kind": "args", "program": "vllm serve", "positionals": positionals,
            "flags": flags, "checks": checks}


# --- SGLang: ServerArgs.add_cli_args ---------------------------------------------------------

def argparse_flags(node, constants):
    """Every parser.add_argument(...) under `node`: flag -> dest, type, choices (literal, or a
    module constant), nargs, action, switch; BooleanOptionalAction adds the --no- form."""
    flags = {}
    for call in ast.walk(node):
        if not is_add_argument(call):
            continue
        names = add_argument_names(call)
        if not names:
            continue
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        action = ast.unparse(kw["action"]).split(".")[-1].strip("'\"") if "action" in kw else None
        choices = None
        if "choices" in kw:
            choices = literal(kw["choices"])
            if choices is None and isinstance(kw["choices"], ast.Name):
                choices = constants.get(kw["choices"].id)
            if choices is not None and not isinstance(choices, (list, tuple)):
                choices = None
        kind = ast.unparse(kw["type"]) if "type" in kw else None
        if kind is not None and kind.endswith("json.loads"):
            kind = "json"
        switch = action in ("store_true", "store_false", "store_const", "BooleanOptionalAction")
        entry = {k: v for k, v in {
            "dest": literal(kw["dest"]) if "dest" in kw else names[0].lstrip("-").replace("-", "_"),
            "type": kind, "choices": list(choices) if choices is not None else None,
            "nargs": literal(kw["nargs"]) if "nargs" in kw else None,
            "action": action, "switch": True if switch else None}.items() if v is not None}
        for n in names:
            flags[n] = entry
        if action == "BooleanOptionalAction":
            for n in names:
                if n.startswith("--"):
                    flags["--no-" + n[2:]] = dict(entry, action="store_false")
    return flags


def module_constants(tree):
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            constants[node.targets[0].id] = literal(node.value)
    return constants


def sglang(git_dir, ref):
    path = "python/sglang/srt/server_args.py"
    tree = ast.parse(show(git_dir, ref, path))
    constants = module_constants(tree)
    server_args = classes_of(tree).get("ServerArgs")
    add_cli_args = next((f for f in server_args.body if isinstance(f, ast.FunctionDef)
                         and f.name == "add_cli_args"), None) if server_args else None
    if add_cli_args is None:
        sys.exit(f"{path}@{ref}: no ServerArgs.add_cli_args")
    flags = argparse_flags(add_cli_args, constants)
    checks = [
        {"id": "context-length-within-positions",
         "rule": "model_positions is None or get('context_length') is None or "
                 "get('context_length') <= model_positions or "
                 "env_true('SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN')",
         "source": locate_in(git_dir, ref, "python/sglang/srt/configs",
                             "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN")},
    ]
    return {"kind": "args", "program": "python -m sglang.launch_server", "positionals": [],
            "flags": flags, "checks": checks}


# --- OpenRLHF: train_ppo_ray's argparse flags ----------------------------------------------------

def openrlhf(git_dir, ref):
    path = "openrlhf/cli/train_ppo_ray.py"
    tree = ast.parse(show(git_dir, ref, path))
    flags = argparse_flags(tree, module_constants(tree))
    checks = [
        {"id": "colocated-engines-fill-the-actor",
         "rule": "not get('train.colocate_all') or get('train.async_enable') or "
                 "get('actor.num_nodes', 1) * get('actor.num_gpus_per_node', 8) == "
                 "get('vllm.num_engines', 0) * get('vllm.tensor_parallel_size', 1)",
         "source": locate(git_dir, ref, path,
                          "f\"actor_num_nodes * actor_num_gpus_per_node must be equal to \"")},
        {"id": "colocated-reference-matches-actor",
         "rule": "not (get('train.colocate_all') or get('train.colocate_actor_ref')) or "
                 "get('algo.kl.init_coef', 0.01) == 0 or "
                 "(get('actor.num_nodes', 1) == get('ref.num_nodes', 1) and "
                 "get('actor.num_gpus_per_node', 8) == get('ref.num_gpus_per_node', 8))",
         "source": locate(git_dir, ref, path,
                          "num_nodes and num_gpus_per_node must be the same when colocate actor and ref model.")},
        {"id": "sample-batches-cover-actor-ranks",
         "rule": "get('rollout.n_samples_per_prompt', 1) * get('rollout.batch_size', 1024) // "
                 "get('rollout.micro_batch_size', 1) >= get('actor.num_nodes', 1) * "
                 "get('actor.num_gpus_per_node', 8) // get('ds.ring_attn_size', 1) // "
                 "get('ds.tensor_parallel_size', 1)",
         "source": locate(git_dir, ref, path,
                          "The number of sample batches must be greater than or equal to the effective number of actor processes.")},
        {"id": "group-estimators-need-samples",
         "rule": "get('algo.advantage.estimator', 'gae') not in ('rloo', 'reinforce_baseline', "
                 "'group_norm', 'dr_grpo') or get('rollout.n_samples_per_prompt', 1) > 1",
         "source": locate(git_dir, ref, path, "requires n_samples_per_prompt > 1")},
    ]
    return {"kind": "args", "program": "python3 -m openrlhf.cli.train_ppo_ray", "positionals": [],
            "flags": flags, "checks": checks}


# --- TRL: the dataclasses trl/scripts/grpo.py reads its YAML into ------------------------------

# transformers' TrainingArguments (GRPOConfig's root class, outside TRL's source): the keys the trl
# export writes or a check reads, by hand from src/transformers/training_args.py, where each has
# been a field since before TRL v1.9.0's floor (transformers>=4.56.2). Not checked from source.
TRAINING_ARGUMENTS = {
    "per_device_train_batch_size": {"type": "int"},
    "gradient_accumulation_steps": {"type": "int"},
    "fp16": {"type": "bool"},
    "optim": {"type": "str"},
    "deepspeed": {"type": "dict | str"},
    "auto_find_batch_size": {"type": "bool"},
}


def trl_fields(git_dir, ref, files, root):
    """The fields of class `root` and of its bases among `files`' classes (a subclass's field
    replaces its base's): name -> {type, list, choices, default, class}."""
    classes = {}
    for path in files:
        for name, node in classes_of(ast.parse(show(git_dir, ref, path))).items():
            classes.setdefault(name, (path, node))
    keys = {}

    def walk(name):
        path, node = classes[name]
        for base in node.bases:
            if ast.unparse(base) in classes:
                walk(ast.unparse(base))
        for field, annotation, default, keywords in dataclass_fields(node):
            kind, choices, nargs = type_info(annotation, {})
            metadata = literal(keywords["metadata"]) if "metadata" in keywords else None
            if isinstance(metadata, dict) and isinstance(metadata.get("choices"), list):
                choices = metadata["choices"]
            entry = {"type": kind, "class": name}
            if choices is not None:
                entry["choices"] = choices
            if nargs:
                entry["list"] = True
            value = literal(default) if default is not None else None
            if value is not None or (default is not None and ast.unparse(default) == "None"):
                entry["default"] = value
            keys[field] = entry

    walk(root)
    return keys


def trl(git_dir, ref):
    grpo = "trl/scripts/grpo.py"
    # The YAML fills exactly these dataclasses; a change here must be re-read.
    parser = locate(git_dir, ref, grpo, "dataclass_types = (GRPOScriptArguments, GRPOConfig, "
                                        "ModelConfig, DatasetMixtureConfig)")
    files = [grpo, "trl/scripts/utils.py", "trl/trainer/grpo_config.py",
             "trl/trainer/base_config.py", "trl/trainer/model_config.py"]
    keys = {}
    for root in ("GRPOScriptArguments", "GRPOConfig", "ModelConfig", "DatasetMixtureConfig"):
        for name, entry in trl_fields(git_dir, ref, files, root).items():
            if name in keys:
                sys.exit(f"{name}: a field of two of grpo.py's dataclasses")
            keys[name] = entry
    for name, entry in TRAINING_ARGUMENTS.items():
        if name in keys:
            sys.exit(f"{name}: TRL declares it; drop it from TRAINING_ARGUMENTS")
        keys[name] = dict(entry, **{"class": "TrainingArguments", "listed_by_hand": True})
    serve_path = "trl/scripts/vllm_serve.py"
    serve = {f"--{name}": {"dest": name, **{k: v for k, v in entry.items() if k != "class"}}
             for name, entry in trl_fields(git_dir, ref, [serve_path], "ScriptArguments").items()}
    config, generation = "trl/trainer/grpo_config.py", "trl/generation/vllm_generation.py"
    # world_size: the trainer's processes (torchrun --nnodes x --nproc-per-node of trl_grpo.sh);
    # serve: the flags of its trl vllm-serve line, or None; model_moe: the plan's model has experts.
    generation_batch = ("(get('generation_batch_size') or get('per_device_train_batch_size', 8) "
                        "* world_size * (get('steps_per_generation') or "
                        "get('gradient_accumulation_steps', 1)))")
    checks = [
        {"id": "generation-batch-holds-whole-groups",
         "rule": f"{generation_batch} % get('num_generations', 8) == 0",
         "source": locate(git_dir, ref, config, "must be divisible by num_generations")},
        {"id": "generation-batch-divides-into-steps",
         "rule": "get('generation_batch_size') is None or get('steps_per_generation') is not None "
                 "or get('generation_batch_size') % (get('per_device_train_batch_size', 8) * "
                 "world_size) == 0",
         "source": locate(git_dir, ref, config, "must be divisible by the global batch size")},
        {"id": "generation-batch-or-steps",
         "rule": "get('generation_batch_size') is None or get('steps_per_generation') is None",
         "source": locate(git_dir, ref, config, "can not be both configured at the same time")},
        {"id": "at-least-two-generations",
         "rule": "get('num_generations', 8) >= 2",
         "source": locate(git_dir, ref, config, "GRPO requires at least 2 generations per prompt")},
        {"id": "no-auto-find-batch-size",
         "rule": "not get('auto_find_batch_size', False)",
         "source": locate(git_dir, ref, config, "auto_find_batch_size is not supported by GRPO")},
        {"id": "vllm-mode-known",
         "rule": "get('vllm_mode', 'colocate') in ('server', 'colocate')",
         "source": locate(git_dir, ref, generation,
                          "vllm_mode must be either 'server' or 'colocate'")},
        {"id": "colocated-tp-divides-world",
         "rule": "not get('use_vllm', False) or get('vllm_mode', 'colocate') != 'colocate' or "
                 "world_size % get('vllm_tensor_parallel_size', 1) == 0",
         "source": locate(git_dir, ref, generation, "must divide world size")},
        {"id": "colocated-base-not-8bit",
         "rule": "not (get('use_vllm', False) and get('vllm_mode', 'colocate') == 'colocate' and "
                 "get('load_in_8bit', False))",
         "source": locate(git_dir, ref, generation,
                          "vLLM does not support in-flight 8-bit quantization.")},
        {"id": "one-base-quantization",
         "rule": "not (get('load_in_8bit', False) and get('load_in_4bit', False))",
         "source": locate(git_dir, ref, "trl/trainer/model_config.py",
                          "You can't use 8 bit and 4 bit precision at the same time")},
        {"id": "server-mode-has-a-server",
         "rule": "not get('use_vllm', False) or get('vllm_mode', 'colocate') != 'server' or "
                 "serve is not None",
         "source": locate(git_dir, ref, config, "a TRL vLLM server is running (start with "
                                                 "`trl vllm-serve`)")},
        {"id": "dense-server-one-engine",
         "rule": "serve is None or serve.get('data_parallel_size', 1) == 1 or model_moe",
         "source": locate(git_dir, ref, serve_path,
                          "`1` for dense models is not supported/useful and will error out")},
    ]
    return {"kind": "yaml", "program": "python -m trl.scripts.grpo --config", "parser": parser,
            "keys": keys, "serve": {"program": "trl vllm-serve", "flags": serve},
            "checks": checks}


# --- verl: the composed main_ppo config, every key a Hydra override may name ------------------

def yaml_keys(node, prefix, keys):
    """Every leaf of a Hydra YAML as a dotted key, typed by its default: null and ${...}
    interpolations take any value."""
    for k, v in node.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            yaml_keys(v, key, keys)
            continue
        kind = ("bool" if isinstance(v, bool) else "int" if isinstance(v, int)
                else "float" if isinstance(v, float) else "list" if isinstance(v, list)
                else "str" if isinstance(v, str) and "${" not in v else "any")
        keys[key] = {"type": kind}


def verl(git_dir, ref):
    """verl/trainer/config/_generated_ppo_trainer.yaml is the whole config main_ppo composes
    (generated from the defaults tree and checked in): Hydra refuses an override of a key it does
    not have. Each key's type is its default's; null and ${...} interpolations take any value."""
    import yaml  # dev-only (python3-yaml); the checker does not need it
    path = "verl/trainer/config/_generated_ppo_trainer.yaml"
    config = yaml.safe_load(show(git_dir, ref, path))
    keys = {}
    yaml_keys(config, "", keys)
    checks = [
        {"id": "batch-divides-gpus",
         "rule": "get('data.train_batch_size') * get('actor_rollout_ref.rollout.n', 1) % "
                 "(get('trainer.n_gpus_per_node', 8) * get('trainer.nnodes', 1)) == 0",
         "source": locate(git_dir, ref, "verl/utils/config.py",
                          "assert real_train_batch_size % minimal_bsz == 0")},
        {"id": "mini-batch-within-batch",
         "rule": "get('data.train_batch_size') >= get('actor_rollout_ref.actor.ppo_mini_batch_size', 256)",
         "source": locate(git_dir, ref, "verl/workers/config/actor.py",
                          "if train_batch_size < self.ppo_mini_batch_size:")},
        {"id": "rollout-engine-registered",
         "rule": "get('actor_rollout_ref.rollout.name') in ('vllm', 'sglang')",
         "source": locate(git_dir, ref, "verl/workers/rollout/replica.py",
                          'RolloutReplicaRegistry.register("sglang", _load_sglang)')},
    ]
    return {"kind": "overrides", "program": "python3 -m verl.trainer.main_ppo", "keys": keys,
            "checks": checks}


# --- verl's recipe/fully_async_policy: main_ppo's config and the recipe's own -----------------

def verl_fully_async(git_dir, ref):
    """`python3 -m recipe.fully_async_policy.fully_async_main` (run from verl's source tree: its
    Hydra searchpath is file://verl/trainer/config) composes ppo_trainer and then
    recipe/fully_async_policy/config/fully_async_ppo_trainer.yaml: main_ppo's keys plus the
    recipe's async_training, rollout (its own pool) and data.gen_batch_size. `envelope-cli export
    --to verl` writes it for a disjoint plan with bounded staleness, partial rollouts or streamed
    updates ("export_to"). The checks are the recipe's own asserts at start."""
    import yaml  # dev-only (python3-yaml)
    body = verl(git_dir, ref)
    keys = body["keys"]
    path = "recipe/fully_async_policy/config/fully_async_ppo_trainer.yaml"
    recipe = yaml.safe_load(show(git_dir, ref, path))
    recipe.pop("hydra", None)
    recipe.pop("defaults", None)
    yaml_keys(recipe, "", keys)
    # rollout.total_rollout_steps: null means the dataset x epochs (fully_async_rollouter.py).
    keys["rollout.total_rollout_steps"] = {"type": "any"}
    rollouter = "recipe/fully_async_policy/fully_async_rollouter.py"
    checks = [
        {"id": "no-hybrid-engine",
         "rule": "get('actor_rollout_ref.hybrid_engine') == 'False'",
         "source": locate(git_dir, ref, rollouter, "assert not self.hybrid_engine")},
        {"id": "train-batch-zero",
         "rule": "get('data.train_batch_size') == 0",
         "source": locate(git_dir, ref, rollouter,
                          'assert self.config.data.train_batch_size == 0, "train_batch_size must be zero"')},
        {"id": "gen-batch-one",
         "rule": "get('data.gen_batch_size', 1) == 1",
         "source": locate(git_dir, ref, rollouter,
                          'assert self.config.data.gen_batch_size == 1, "gen_batch_size must be one"')},
        {"id": "sync-step-at-least-one",
         "rule": "get('async_training.trigger_parameter_sync_step', 4) >= 1",
         "source": locate(git_dir, ref, rollouter,
                          "assert self.config.async_training.trigger_parameter_sync_step >= 1")},
        {"id": "rollout-log-probs",
         "rule": "get('actor_rollout_ref.rollout.calculate_log_probs') == 'True'",
         "source": locate(git_dir, ref, rollouter,
                          'assert self.config.actor_rollout_ref.rollout.calculate_log_probs, "must rollout calculate log_probs"')},
        {"id": "async-rollout",
         "rule": "get('actor_rollout_ref.rollout.mode') == 'async'",
         "source": locate(git_dir, ref, rollouter,
                          'assert self.config.actor_rollout_ref.rollout.mode == "async"')},
        body["checks"][2],  # rollout-engine-registered
    ]
    return {"kind": "overrides", "export_to": "verl",
            "program": "python3 -m recipe.fully_async_policy.fully_async_main", "keys": keys,
            "checks": checks}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in REPOS:
        sys.exit(__doc__)
    engine, git_dir, ref = sys.argv[1:]
    body = {"torchtitan": torchtitan, "megatron": megatron, "deepspeed": deepspeed,
            "vllm": vllm, "sglang": sglang, "verl": verl, "verl-fully-async": verl_fully_async,
            "openrlhf": openrlhf, "trl": trl}[engine](git_dir, ref)
    out = {"format": "envelope.engine-schema", "version": 1, "engine": engine,
           "engine_version": ref, "repo": REPOS[engine],
           "commit": git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip(),
           "generated_by": "tools/engine_schema.py", **body}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
