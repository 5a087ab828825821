#!/usr/bin/env node
// Dev-only converter: aiconfigurator's measured per-op kernel tables (parquet)
// -> compact Envelope kernel tables, presets/kernels/<preset-id>.json.
//
//   node tools/kernels/convert.mjs --aic <aiconfigurator checkout or bare git dir> --out presets/kernels
//       [--samples-md <file>]   also write the sanity-check sample table (markdown)
//
// Conventions, the GPU mapping and the choice of backend/version are described
// in docs/kernel-tables.md. The output is deterministic: the same input gives
// byte-identical files (no timestamps, every list sorted, fixed number format).

import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

const DATA_ROOT = 'aic-core/src/aiconfigurator_core/systems/data';
const BACKEND_PREFERENCE = ['vllm', 'sglang', 'trtllm'];

// Envelope preset id -> aiconfigurator system folder. Dense peaks (TFLOP/s, no
// sparsity) are only used for the sanity check: a measured point above the peak
// of its dtype is reported and dropped (then refilled like a missing point).
const GPUS = [
  { id: 'a100-80gb', aic: 'a100_sxm', peak: { bf16: 312 } },
  { id: 'a100-40gb', aic: 'a100_sxm', peak: { bf16: 312 }, aliasOf: 'a100-80gb',
    note: 'a100-40gb is converted from the same a100_sxm data as a100-80gb (measured on A100-SXM4-80GB): same SXM4 chip, clocks and tensor cores; only HBM capacity (and 1.56 vs 2.04 TB/s bandwidth) differ, so memory-bound points (small-m GEMM, decode attention) may be slightly optimistic for the 40 GB part.' },
  { id: 'h100-sxm', aic: 'h100_sxm', peak: { bf16: 989.4, fp8: 1978.9 } },
  { id: 'h800', aic: 'h100_sxm', peak: { bf16: 989.4, fp8: 1978.9 }, aliasOf: 'h100-sxm', collectives: false,
    note: 'h800 is converted from the h100_sxm data without its collectives: the H800 SXM5 is the H100 SXM5\'s GH100 die at the same clocks, 700 W and 3.35 TB/s HBM3 (NVIDIA H800 datasheet), so GEMM and attention kernels run alike; its NVLink is cut to 400 GB/s (900 on the H100), so the H100\'s NCCL curves do not apply and collectives are timed from the GPU preset\'s link bandwidth (a spec estimate).' },
  { id: 'h200', aic: 'h200_sxm', peak: { bf16: 989.4, fp8: 1978.9 } },
  { id: 'b200', aic: 'b200_sxm', peak: { bf16: 2250, fp8: 4500, fp4: 9000 } },
  { id: 'b300', aic: 'b300_sxm', peak: { bf16: 2500, fp8: 5000, fp4: 15000 } },
  { id: 'gb200', aic: 'gb200', peak: { bf16: 2500, fp8: 5000, fp4: 10000 } },
  { id: 'gb300', aic: 'gb300', peak: { bf16: 2500, fp8: 5000, fp4: 15000 } },
  { id: 'l40s', aic: 'l40s', peak: { bf16: 362, fp8: 733 } },
];

// aic gemm_dtype -> Envelope dtype, the peak class it is checked against, and
// an optional check that the rows really are that kind of GEMM.
const GEMM_DTYPES = [
  { aic: ['bfloat16'], id: 'bf16', peak: 'bf16' },
  { aic: ['fp8'], id: 'fp8', peak: 'fp8' },
  { aic: ['fp8_block'], id: 'fp8_block', peak: 'fp8' },
  { aic: ['mxfp8'], id: 'mxfp8', peak: 'fp8' },
  { aic: ['nvfp4'], id: 'nvfp4', peak: 'fp4' },
  // Weight-only: only TensorRT-LLM's WeightOnlyQuantMatmul rows qualify. SGLang
  // 0.5.6-era tables also carry an "int8_wo" label, but that collector quantized
  // the activations per token and ran int8_scaled_mm (W8A8), so it is refused.
  { aic: ['int8_wo'], id: 'int8_wo', peak: 'bf16', kernelMustMatch: /WeightOnly/i },
  { aic: ['int4_wo'], id: 'int4_wo', peak: 'bf16', kernelMustMatch: /WeightOnly/i },
];

const KERNEL_GLOSS = {
  'torch.nn.functional.linear': 'torch F.linear = cuBLAS',
  vllm_default: "vLLM's unquantized linear = torch F.linear = cuBLAS",
  CutlassFP8ScaledMMLinearKernel: 'CUTLASS fp8 scaled_mm, per-tensor weight scale, dynamic activation quantization included',
  DeepGemmFp8BlockScaledMMKernel: 'DeepGEMM, 128x128 weight blocks, 1x128 activation groups',
  FlashInferFp8BlockScaledMMKernel: 'FlashInfer block-scaled fp8',
  CutlassFp8BlockScaledMMKernel: 'CUTLASS block-scaled fp8',
  TritonFp8BlockScaledMMKernel: 'Triton block-scaled fp8',
  FlashInferCuteDslNvFp4LinearKernel: 'FlashInfer CuTe-DSL NVFP4, activation FP4 quantization included',
  vllm_flash_attn_fa2: 'FlashAttention-2 via vLLM',
  vllm_flash_attn_fa3: 'FlashAttention-3 via vLLM',
  vllm_flash_attn_fa4: 'FlashAttention-4 (CuTe) via vLLM',
  vllm_flash_attn: 'vLLM FlashAttention backend',
  vllm_flashinfer: 'vLLM FlashInfer backend',
  vllm_flashinfer_trtllmprefill: 'FlashInfer TRT-LLM-gen prefill kernel',
  vllm_flashinfer_trtllmdecode: 'FlashInfer TRT-LLM-gen decode kernel',
  vllm_flashinfer_fiprefill: 'FlashInfer native prefill',
  vllm_flashinfer_fidecode: 'FlashInfer native decode',
  vllm_triton_attn: 'vLLM Triton attention',
};

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const a = { aic: null, out: null, samplesMd: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--aic') a.aic = argv[++i];
    else if (k === '--out') a.out = argv[++i];
    else if (k === '--samples-md') a.samplesMd = argv[++i];
    else if (k === '-h' || k === '--help') {
      console.log('usage: node tools/kernels/convert.mjs --aic <aiconfigurator checkout or git dir> --out presets/kernels [--samples-md file]');
      process.exit(0);
    } else throw new Error(`unknown argument ${k}`);
  }
  if (!a.aic || !a.out) throw new Error('both --aic and --out are required (see --help)');
  return a;
}

// ---------------------------------------------------------------- source access

// Reads either a working checkout (files on disk) or a git directory (bare or
// not) through `git show HEAD:<path>`.
class AicSource {
  constructor(p) {
    this.root = path.resolve(p);
    if (fs.existsSync(path.join(this.root, DATA_ROOT))) {
      this.mode = 'dir';
      this.files = [];
      const walk = (rel) => {
        for (const e of fs.readdirSync(path.join(this.root, DATA_ROOT, rel), { withFileTypes: true })) {
          const r = rel ? `${rel}/${e.name}` : e.name;
          if (e.isDirectory()) walk(r);
          else this.files.push(r);
        }
      };
      walk('');
      // Only trust HEAD when the checkout is itself the top of a git work tree.
      const top = this.tryGit(['rev-parse', '--show-toplevel']);
      this.commit = top && path.resolve(top) === this.root ? this.tryGit(['rev-parse', 'HEAD']) : null;
    } else {
      this.mode = 'git';
      const out = this.git(['ls-tree', '-r', '--name-only', 'HEAD', '--', DATA_ROOT]).toString('utf8');
      this.files = out.split('\n').filter(Boolean).map((f) => f.slice(DATA_ROOT.length + 1));
      this.commit = this.git(['rev-parse', 'HEAD']).toString('utf8').trim();
    }
    this.files.sort();
    this.fileSet = new Set(this.files);
    if (this.files.length === 0) throw new Error(`no files under ${DATA_ROOT} in ${this.root}`);
  }
  gitArgs(args) {
    return this.mode === 'dir' ? ['-C', this.root, ...args] : [`--git-dir=${this.root}`, ...args];
  }
  git(args) {
    return execFileSync('git', this.gitArgs(args), { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  }
  tryGit(args) {
    try { return this.git(args).toString('utf8').trim(); } catch { return null; }
  }
  has(rel) { return this.fileSet.has(rel); }
  read(rel) {
    if (this.mode === 'dir') return fs.readFileSync(path.join(this.root, DATA_ROOT, rel));
    return this.git(['show', `HEAD:${DATA_ROOT}/${rel}`]);
  }
  // Immediate child names of a folder under the data root.
  children(rel) {
    const pre = rel + '/';
    const s = new Set();
    for (const f of this.files) if (f.startsWith(pre)) s.add(f.slice(pre.length).split('/')[0]);
    return [...s].sort();
  }
}

const parquetCache = new Map();
async function readRows(src, rel) {
  if (parquetCache.has(rel)) return parquetCache.get(rel);
  const buf = src.read(rel);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const raw = await parquetReadObjects({ file: ab, compressors });
  const rows = raw.map((r) => {
    const o = {};
    for (const [k, v] of Object.entries(r)) o[k] = typeof v === 'bigint' ? Number(v) : v;
    return o;
  });
  parquetCache.set(rel, rows);
  return rows;
}

// ---------------------------------------------------------------- versions

// "1.3.0rc20" < "1.3.0" < "0.5.6.post2"-style post releases; "2.27" < "2.27.3".
function parseVersion(v) {
  const m = /^(\d+(?:\.\d+)*)(?:\.?(rc|post|dev|a|b)(\d+))?/.exec(v);
  if (!m) return { nums: [], tag: 0, tagNum: 0, raw: v };
  const tagRank = { dev: -3, a: -2, b: -1, rc: -0.5, post: 1 };
  return { nums: m[1].split('.').map(Number), tag: m[2] ? tagRank[m[2]] : 0, tagNum: m[3] ? Number(m[3]) : 0, raw: v };
}
function compareVersions(x, y) {
  const a = parseVersion(x), b = parseVersion(y);
  const n = Math.max(a.nums.length, b.nums.length);
  for (let i = 0; i < n; i++) {
    const d = (a.nums[i] ?? 0) - (b.nums[i] ?? 0);
    if (d) return d;
  }
  if (a.tag !== b.tag) return a.tag - b.tag;
  if (a.tagNum !== b.tagNum) return a.tagNum - b.tagNum;
  return x < y ? -1 : x > y ? 1 : 0;
}

// Minimal readers for the two small YAML files a version folder may hold.
function reuseTargets(src, dir) {
  const rel = `${dir}/reuse.yaml`;
  if (!src.has(rel)) return {};
  const out = {};
  let table = null;
  for (const line of src.read(rel).toString('utf8').split('\n')) {
    let m = /^\s*-\s*table:\s*(\S+)/.exec(line);
    if (m) { table = m[1]; continue; }
    m = /^\s*from_version:\s*['"]?([^'"\s]+)/.exec(line);
    if (m && table) out[table] = m[1];
  }
  return out;
}
function tableStatus(src, dir, table) {
  const rel = `${dir}/collection_meta.yaml`;
  if (!src.has(rel)) return null;
  const lines = src.read(rel).toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (new RegExp(`^\\s+${table}:\\s*$`).test(lines[i])) {
      const m = /^\s+status:\s*(\S+)/.exec(lines[i + 1] || '');
      if (m) return m[1];
    }
  }
  return null;
}

// All places a table can come from for one GPU and op family, in preference
// order: vllm newest first, then sglang, then trtllm. A version folder with no
// parquet of its own is followed through its reuse.yaml. Tables marked
// "partial" in collection_meta.yaml go after the complete ones of that backend.
function candidates(src, aicGpu, family, table, backends = BACKEND_PREFERENCE) {
  const out = [];
  const seen = new Set();
  for (const backend of backends) {
    const base = `${aicGpu}/${family}/${backend}`;
    const versions = src.children(base).sort(compareVersions).reverse();
    const complete = [], partial = [];
    for (const v of versions) {
      let cur = v, via = [];
      const guard = new Set();
      while (cur && !guard.has(cur)) {
        guard.add(cur);
        const dir = `${base}/${cur}`;
        const rel = `${dir}/${table}.parquet`;
        if (src.has(rel)) {
          if (!seen.has(rel)) {
            seen.add(rel);
            const c = { backend, version: cur, folder: v, via, rel, status: tableStatus(src, dir, table) };
            (c.status === 'partial' ? partial : complete).push(c);
          }
          break;
        }
        const next = reuseTargets(src, dir)[table];
        if (next) via = [...via, `${cur} reuses ${next}`];
        cur = next;
      }
    }
    out.push(...complete, ...partial);
  }
  return out;
}

// ---------------------------------------------------------------- numerics

const log2 = Math.log2;
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
function sig4(x) { return Number(x.toPrecision(4)); }
function uniqSorted(xs) { return [...new Set(xs)].sort((a, b) => a - b); }

// Thin an axis to at most `cap` values: keep the smallest and largest, the value
// nearest (in log2) to every power of two in between, then add the values that
// best split the remaining gaps (largest value first on ties) up to the cap.
function thinAxis(values, cap) {
  const v = uniqSorted(values);
  if (v.length <= cap) return v;
  const keep = new Set([v[0], v[v.length - 1]]);
  for (let e = Math.ceil(log2(v[0])); 2 ** e <= v[v.length - 1]; e++) {
    let best = v[0], bd = Infinity;
    for (const x of v) {
      const d = Math.abs(log2(x) - e);
      if (d < bd - 1e-12) { bd = d; best = x; }
    }
    keep.add(best);
  }
  let k = uniqSorted([...keep]);
  while (k.length > cap) {
    // Drop the interior value whose neighbours are closest together.
    let bi = 1, bg = Infinity;
    for (let i = 1; i < k.length - 1; i++) {
      const g = log2(k[i + 1]) - log2(k[i - 1]);
      if (g < bg - 1e-12) { bg = g; bi = i; }
    }
    k.splice(bi, 1);
  }
  while (k.length < cap) {
    let best = null, bs = 0.25 - 1e-12; // do not add a point closer than 1/4 octave to a kept one
    for (const x of v) {
      if (k.includes(x)) continue;
      let i = 0;
      while (k[i] < x) i++;
      const split = Math.min(log2(x) - log2(k[i - 1]), log2(k[i]) - log2(x));
      if (split > bs + 1e-12 || (Math.abs(split - bs) <= 1e-12 && best !== null && x > best)) { bs = split; best = x; }
    }
    if (best === null) break;
    k = uniqSorted([...k, best]);
  }
  return k;
}

// Fill a full Cartesian grid from sparse measurements of a positive "rate"
// (TFLOP/s, or work per microsecond). `measured` maps coordinate keys over the
// full (unthinned) axes to a rate; the grid axes are subsets of the full axes.
// A missing point is estimated along each axis from the nearest measured
// neighbours on that line (linear in log2(coordinate) of log2(rate)). Lines
// with neighbours on both sides are averaged geometrically; when every line is
// one-sided (the point lies beyond the measured range, e.g. the largest
// shapes the collector skipped), the highest one-sided neighbour value is used,
// since these rates saturate with size; with no neighbour on any line, the
// nearest measured point in log2 space is used.
function fillGrid(gridAxes, fullAxes, measured) {
  const D = gridAxes.length;
  const key = (c) => c.join(',');
  const pts = [...measured.entries()].map(([k, r]) => ({ c: k.split(',').map(Number), r }));
  const values = [];
  let filled = 0;
  const idx = new Array(D).fill(0);
  const total = gridAxes.reduce((a, ax) => a * ax.length, 1);
  for (let t = 0; t < total; t++) {
    let rem = t;
    for (let d = D - 1; d >= 0; d--) { idx[d] = rem % gridAxes[d].length; rem = Math.floor(rem / gridAxes[d].length); }
    const c = idx.map((i, d) => gridAxes[d][i]);
    const hit = measured.get(key(c));
    if (hit !== undefined) { values.push(hit); continue; }
    filled++;
    const two = [], one = [];
    for (let d = 0; d < D; d++) {
      const ax = fullAxes[d];
      const pos = ax.indexOf(c[d]);
      let lo = null, hi = null;
      for (let i = pos - 1; i >= 0 && !lo; i--) {
        const cc = [...c]; cc[d] = ax[i];
        const r = measured.get(key(cc));
        if (r !== undefined) lo = { x: ax[i], r };
      }
      for (let i = pos + 1; i < ax.length && !hi; i++) {
        const cc = [...c]; cc[d] = ax[i];
        const r = measured.get(key(cc));
        if (r !== undefined) hi = { x: ax[i], r };
      }
      if (lo && hi) {
        const f = (log2(c[d]) - log2(lo.x)) / (log2(hi.x) - log2(lo.x));
        two.push(log2(lo.r) + f * (log2(hi.r) - log2(lo.r)));
      } else if (lo || hi) one.push(log2((lo || hi).r));
    }
    if (two.length) { values.push(2 ** (two.reduce((a, b) => a + b, 0) / two.length)); continue; }
    if (one.length) { values.push(2 ** Math.max(...one)); continue; }
    let best = null, bd = Infinity;
    for (const p of pts) {
      let dd = 0;
      for (let d = 0; d < D; d++) dd += (log2(p.c[d]) - log2(c[d])) ** 2;
      if (dd < bd - 1e-12) { bd = dd; best = p; }
    }
    values.push(best.r);
  }
  return { values, filled, total };
}

function describe(c) {
  return `${c.backend} ${c.folder}` + (c.folder !== c.version ? ` (reuse.yaml: ${c.via.join(', ')}; data from ${c.rel})` : '');
}

function kernelSummary(rows) {
  const m = new Map();
  for (const r of rows) m.set(r.kernel_source, (m.get(r.kernel_source) || 0) + 1);
  const list = [...m.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return list.map(([k, n]) => {
    const g = KERNEL_GLOSS[k] || (/WeightOnlyQuantMatmul/.test(k) ? 'TensorRT-LLM WeightOnlyQuantMatmul plugin, per-channel scales, TensorRT layer time' : null);
    const share = list.length > 1 ? ` ${Math.round((100 * n) / rows.length)}%` : '';
    return `${k}${g ? ` (${g})` : ''}${share}`;
  }).join('; ');
}

// ---------------------------------------------------------------- GEMM

async function buildGemm(src, gpu, ctx) {
  const cands = candidates(src, gpu.aic, 'gemm', 'gemm_perf');
  let primary = null;
  for (const c of cands) {
    const rows = await readRows(src, c.rel);
    if (rows.some((r) => r.gemm_dtype === 'bfloat16')) { primary = c; break; }
  }
  if (!primary) return [];
  ctx.choices.push(`gemm: ${describe(primary)}`);
  const entries = [];
  for (const dt of GEMM_DTYPES) {
    const ok = (r) => dt.aic.includes(r.gemm_dtype) && (!dt.kernelMustMatch || dt.kernelMustMatch.test(r.kernel_source));
    let chosen = null, rows = null;
    for (const c of [primary, ...cands.filter((x) => x !== primary)]) {
      const rr = (await readRows(src, c.rel)).filter(ok);
      if (rr.length) { chosen = c; rows = rr; break; }
    }
    if (!chosen) continue;
    if (chosen !== primary) {
      ctx.notes.push(`gemm ${dt.id}: not in the chosen ${primary.backend} ${primary.version} table; taken from ${chosen.backend} ${chosen.version}, the first source in preference order that has it.`);
      ctx.choices.push(`gemm ${dt.id}: ${describe(chosen)}`);
    }
    const peak = gpu.peak[dt.peak];
    const groups = new Map();
    for (const r of rows) {
      const k = `${r.m},${r.n},${r.k}`;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(r.latency);
    }
    const measured = new Map();
    let over = 0, overMax = 0;
    for (const [k, lats] of [...groups.entries()].sort()) {
      const [m, n, kk] = k.split(',').map(Number);
      const lat = median(lats);
      if (!(lat > 0)) continue;
      const tf = (2 * m * n * kk) / (lat * 1e-3) / 1e12;
      if (peak && tf > peak) { over++; overMax = Math.max(overMax, tf); continue; }
      measured.set(k, tf);
    }
    const keys = [...measured.keys()].map((k) => k.split(',').map(Number));
    const full = [0, 1, 2].map((d) => uniqSorted(keys.map((c) => c[d])));
    const axes = [thinAxis(full[0], 16), thinAxis(full[1], 15), thinAxis(full[2], 15)];
    const g = fillGrid(axes, full, measured);
    let maxTf = 0, maxAt = null;
    for (const [k, v] of measured) if (v > maxTf) { maxTf = v; maxAt = k; }
    let timing;
    if (/^trt_flow/.test(rows[0].kernel_source)) timing = 'latency = the GEMM layer time from the TensorRT profiler (TensorRT-LLM 1.x engine flow)';
    else if (dt.id === 'fp8_block' && chosen.backend === 'vllm' && compareVersions(chosen.version, '0.24.0') >= 0) timing = 'latency = mean per call, eager (vLLM 0.24 collector runs fp8_block without CUDA graphs, so small shapes include launch overhead)';
    else timing = 'latency = mean per call over CUDA-graph replays after warm-up';
    const srcText = `${DATA_ROOT}/${chosen.rel}, ${kernelSummary(rows)}; ${timing}`;
    entries.push({ dtype: dt.id, source: srcText, m: axes[0], n: axes[1], k: axes[2], tflops: g.values.map(sig4) });
    ctx.notes.push(`gemm ${dt.id}: ${g.filled} of ${g.total} grid points filled by interpolation (${measured.size} measured shapes in the source)` + (over ? `; ${over} measured point(s) above the ${peak} TFLOP/s dense peak dropped (max ${sig4(overMax)})` : ''));
    ctx.summary.push(`gemm ${dt.id} ${axes[0].length}x${axes[1].length}x${axes[2].length} max ${sig4(maxTf)} TF/s at ${maxAt}${peak ? ` (${Math.round((100 * maxTf) / peak)}% of ${peak})` : ''}, filled ${g.filled}${over ? `, DROPPED ${over} > peak` : ''}`);
    ctx.gemmMeasured[dt.id] = { measured, rel: chosen.rel, peak };
  }
  return entries;
}

// ---------------------------------------------------------------- attention

const isFull = (r) => !Number(r.window_size || 0);

async function pickAttention(src, gpu, table, predicate) {
  for (const c of candidates(src, gpu.aic, 'attention', table)) {
    const rows = await readRows(src, c.rel);
    const rr = rows.filter(predicate);
    if (rr.length) return { c, rows: rr };
  }
  return null;
}

async function buildPrefill(src, gpu, ctx) {
  const base = (r) => Number(r.head_dim) === 128 && isFull(r) && Number(r.beam_width ?? 1) === 1 && r.attn_dtype === 'bfloat16';
  const pick = await pickAttention(src, gpu, 'context_attention_perf', (r) => base(r) && r.kv_cache_dtype === 'bfloat16');
  if (!pick) return [];
  const { c } = pick;
  ctx.choices.push(`attention_prefill: ${describe(c)}`);
  const all = (await readRows(src, c.rel)).filter(base);
  // kv_ratio: the most common heads/kv_heads ratio among the bf16 rows; also
  // emit ratio 8 (the usual GQA group) when that is not already the winner.
  const ratioCount = new Map();
  for (const r of all) if (r.kv_cache_dtype === 'bfloat16') {
    const q = r.num_heads / r.num_key_value_heads;
    if (Number.isInteger(q)) ratioCount.set(q, (ratioCount.get(q) || 0) + 1);
  }
  const ranked = [...ratioCount.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  const ratios = [ranked[0][0]];
  if (ratios[0] !== 8 && ratioCount.has(8)) ratios.push(8);
  const entries = [];
  for (const kv of ['bfloat16', 'fp8']) {
    for (const ratio of ratios) {
      const rows = all.filter((r) => r.kv_cache_dtype === kv && r.num_heads / r.num_key_value_heads === ratio);
      if (!rows.length) continue;
      const groups = new Map();
      for (const r of rows) {
        const s = r.isl, bh = r.batch_size * r.num_heads;
        const tf = (2 * r.batch_size * r.num_heads * s * s * 128) / (r.latency * 1e-3) / 1e12;
        const k = `${s},${bh}`;
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(tf);
      }
      const measured = new Map();
      const peak = kv === 'fp8' ? gpu.peak.fp8 || gpu.peak.bf16 : gpu.peak.bf16;
      let over = 0;
      for (const [k, tfs] of [...groups.entries()].sort()) {
        const v = median(tfs);
        if (v > peak) { over++; continue; }
        measured.set(k, v);
      }
      const keys = [...measured.keys()].map((k) => k.split(',').map(Number));
      const full = [uniqSorted(keys.map((x) => x[0])), uniqSorted(keys.map((x) => x[1]))];
      const axes = [thinAxis(full[0], 20), thinAxis(full[1], 20)];
      const g = fillGrid(axes, full, measured);
      const dtype = kv === 'fp8' ? 'fp8' : 'bf16';
      entries.push({
        dtype, kv_dtype: dtype, head_dim: 128, kv_ratio: ratio, causal: true,
        source: `${DATA_ROOT}/${c.rel}, ${kernelSummary(rows)}; causal (vLLM CommonAttentionMetadata causal=True), one layer's attention call for batch x isl new tokens with empty history, incl. its KV-cache write; mean over CUDA-graph replays`
          + (kv === 'fp8' ? '; fp8 = bf16 activations with an fp8 KV cache (attn_dtype bfloat16, kv_cache_dtype fp8); the collector hands the kernel an fp8 query where the backend accepts one, so whether the FMHA itself runs in fp8 depends on the backend' : ''),
        seq: axes[0], batch_heads: axes[1], tflops: g.values.map(sig4),
      });
      ctx.notes.push(`attention_prefill ${dtype} kv_ratio ${ratio}: ${g.filled} of ${g.total} grid points filled (${rows.length} rows, ${measured.size} distinct (seq, batch*heads) points, median over head counts)` + (over ? `; ${over} point(s) above peak dropped` : ''));
      let mx = 0; for (const v of measured.values()) mx = Math.max(mx, v);
      ctx.summary.push(`prefill ${dtype} r${ratio} ${axes[0].length}x${axes[1].length} max ${sig4(mx)} TF/s, filled ${g.filled}${over ? `, DROPPED ${over}` : ''}`);
      ctx.prefillMeasured[`${dtype}/${ratio}`] = { measured, rel: c.rel };
    }
  }
  return entries;
}

async function buildDecode(src, gpu, ctx) {
  const base = (r) => Number(r.head_dim) === 128 && isFull(r) && Number(r.beam_width ?? 1) === 1;
  const pick = await pickAttention(src, gpu, 'generation_attention_perf', (r) => base(r) && r.kv_cache_dtype === 'bfloat16');
  if (!pick) return [];
  const { c } = pick;
  ctx.choices.push(`attention_decode: ${describe(c)}`);
  const all = (await readRows(src, c.rel)).filter(base);
  // (heads, kv_heads): the most-measured configuration with 8 KV heads and at
  // least 32 query heads (the collector caps batch by heads, so the raw
  // most-rows winner is a toy 1/1 or 2/1 shape).
  const cnt = new Map();
  for (const r of all) if (r.kv_cache_dtype === 'bfloat16' && r.num_key_value_heads === 8 && r.num_heads >= 32) {
    const k = `${r.num_heads}/${r.num_key_value_heads}`;
    cnt.set(k, (cnt.get(k) || 0) + 1);
  }
  const ranked = [...cnt.entries()].sort((a, b) => b[1] - a[1] || Number(a[0].split('/')[0]) - Number(b[0].split('/')[0]));
  if (!ranked.length) return [];
  const [heads, kvHeads] = ranked[0][0].split('/').map(Number);
  // aic's `step` column: vLLM collectors before 0.24.0 attend over `step`
  // tokens (seq_lens = step); from 0.24.0 on, `step` is the history and the
  // kernel attends over step + 1 (seq_lens = step + 1). kv_len = tokens attended.
  const stepOffset = c.backend === 'vllm' && compareVersions(c.version, '0.24.0') >= 0 ? 1 : 0;
  const entries = [];
  for (const kv of ['bfloat16', 'fp8']) {
    const rows = all.filter((r) => r.kv_cache_dtype === kv && r.num_heads === heads && r.num_key_value_heads === kvHeads);
    if (!rows.length) continue;
    const groups = new Map();
    for (const r of rows) {
      const k = `${r.batch_size},${r.step + stepOffset}`;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(r.latency * 1000);
    }
    const measured = new Map(); // rate = batch * kv_len tokens per microsecond
    for (const [k, us] of [...groups.entries()].sort()) {
      const [b, L] = k.split(',').map(Number);
      measured.set(k, (b * L) / median(us));
    }
    const keys = [...measured.keys()].map((k) => k.split(',').map(Number));
    const full = [uniqSorted(keys.map((x) => x[0])), uniqSorted(keys.map((x) => x[1]))];
    const axes = [thinAxis(full[0], 20), thinAxis(full[1], 20)];
    const g = fillGrid(axes, full, measured);
    const us = [];
    for (let i = 0; i < axes[0].length; i++) for (let j = 0; j < axes[1].length; j++) {
      us.push(sig4((axes[0][i] * axes[1][j]) / g.values[i * axes[1].length + j]));
    }
    const kvd = kv === 'fp8' ? 'fp8' : 'bf16';
    entries.push({
      dtype: 'bf16', kv_dtype: kvd, head_dim: 128, heads, kv_heads: kvHeads,
      source: `${DATA_ROOT}/${c.rel}, ${kernelSummary(rows)}; one layer's decode attention (1 new token per sequence) incl. its KV-cache write; kv_len = aic step + ${stepOffset}; mean over CUDA-graph replays`,
      batch: axes[0], kv_len: axes[1], us,
    });
    ctx.notes.push(`attention_decode ${heads}/${kvHeads} kv ${kvd}: ${g.filled} of ${g.total} grid points filled (interpolated as tokens/us = batch*kv_len/latency, then converted back)`);
    ctx.summary.push(`decode ${heads}/${kvHeads} kv ${kvd} ${axes[0].length}x${axes[1].length} filled ${g.filled}`);
    ctx.decodeMeasured[kvd] = { groups, rel: c.rel, heads, kvHeads };
  }
  return entries;
}

// ---------------------------------------------------------------- collectives

async function buildCollectives(src, gpu, ctx) {
  const entries = [];
  // NCCL: newest nccl version folder (nccl-tests run by aic's collector).
  const ncclBase = `${gpu.aic}/comm/nccl`;
  const vers = src.children(ncclBase).filter((v) => src.has(`${ncclBase}/${v}/nccl_perf.parquet`)).sort(compareVersions).reverse();
  if (vers.length) {
    const rel = `${ncclBase}/${vers[0]}/nccl_perf.parquet`;
    ctx.choices.push(`collectives nccl: ${vers[0]}`);
    const rows = (await readRows(src, rel)).filter((r) => r.num_gpus <= 8);
    const labelVersions = uniqSorted(rows.map((r) => r.version)).join(', ');
    if (labelVersions !== vers[0]) ctx.notes.push(`collectives nccl: folder ${vers[0]} rows carry version label ${labelVersions}.`);
    const ops = ['all_reduce', 'all_gather', 'reduce_scatter', 'alltoall'];
    // Only the 2-byte curves are emitted: Envelope's loader keys collectives on
    // (op, gpus, kind), so the source's int8 curves would be ambiguous there.
    for (const [aicDt, dt, bpe] of [['half', 'bf16', 2]]) {
      for (const op of ops) for (const n of uniqSorted(rows.map((r) => r.num_gpus))) {
        const rr = rows.filter((r) => r.op_name === op && r.nccl_dtype === aicDt && r.num_gpus === n);
        if (!rr.length) continue;
        const groups = new Map();
        for (const r of rr) {
          const b = r.message_size * bpe;
          if (!groups.has(b)) groups.set(b, []);
          groups.get(b).push(r.latency * 1000);
        }
        const bytes = uniqSorted([...groups.keys()]);
        entries.push({
          op, dtype: dt, gpus: n, kind: 'nccl',
          source: `${DATA_ROOT}/${rel}, nccl-tests ${op}_perf -d ${aicDt} -t ${n} (one process, ${n} GPUs, intra-node), out-of-place time; bytes = message_size x ${bpe}`,
          bytes, us: bytes.map((b) => sig4(median(groups.get(b)))),
        });
        if ([...groups.values()].some((x) => x.length > 1)) ctx.dupNccl = true;
      }
    }
    const bw = [];
    for (const n of uniqSorted(rows.map((r) => r.num_gpus))) {
      const rr = rows.filter((r) => r.op_name === 'all_reduce' && r.nccl_dtype === 'half' && r.num_gpus === n);
      const big = Math.max(...rr.map((r) => r.message_size));
      const us = median(rr.filter((r) => r.message_size === big).map((r) => r.latency * 1000));
      bw.push(`${n} GPUs ${sig4(((2 * big) / (us * 1e-6)) * (2 * (n - 1)) / n / 1e9)} GB/s`);
    }
    ctx.notes.push(`collectives nccl: all_reduce bus bandwidth (bytes/time x 2(n-1)/n) at the largest measured size: ${bw.join(', ')}.`);
    if (ctx.dupNccl) ctx.notes.push('collectives nccl: some sizes were measured more than once in the source; the median is kept.');
    ctx.ncclRows = rows; ctx.ncclRel = rel;
  }
  // Engine custom all-reduce: vllm newest, else sglang newest.
  for (const c of candidates(src, gpu.aic, 'comm', 'custom_allreduce_perf', ['vllm', 'sglang'])) {
    const rows = (await readRows(src, c.rel)).filter((r) => /graph/.test(r.kernel_source || r.backend || ''));
    if (!rows.length) continue;
    ctx.choices.push(`collectives custom: ${describe(c)}`);
    const labelVersions = uniqSorted(rows.map((r) => r.version)).join(', ');
    if (labelVersions !== c.version) ctx.notes.push(`collectives custom: folder ${c.backend}/${c.version} rows carry version label ${labelVersions}.`);
    for (const n of uniqSorted(rows.map((r) => r.num_gpus))) {
      const rr = rows.filter((r) => r.num_gpus === n && r.op_name === 'all_reduce' && r.allreduce_dtype === 'bfloat16');
      if (!rr.length) continue;
      const groups = new Map();
      for (const r of rr) {
        const b = r.message_size * 2;
        if (!groups.has(b)) groups.set(b, []);
        groups.get(b).push(r.latency * 1000);
      }
      const bytes = uniqSorted([...groups.keys()]);
      entries.push({
        op: 'all_reduce', dtype: 'bf16', gpus: n, kind: 'custom',
        source: `${DATA_ROOT}/${c.rel}, ${[...new Set(rr.map((r) => r.kernel_source))].join('/')}: ${c.backend}'s tensor_model_parallel_all_reduce captured in a CUDA graph (5 all-reduces per replay); the engine picks its custom kernel or falls back to NCCL by size; bytes = message_size (bf16 elements) x 2`,
        bytes, us: bytes.map((b) => sig4(median(groups.get(b)))),
      });
    }
    break;
  }
  ctx.summary.push(`collectives ${entries.length} curves (${uniqSorted(entries.map((e) => e.gpus)).join('/')} GPUs)`);
  return entries;
}

// ---------------------------------------------------------------- output

function fmtValue(v) {
  if (Array.isArray(v)) return `[${v.map(fmtValue).join(',')}]`;
  return JSON.stringify(v);
}
function fmtEntry(e) { return `{${Object.entries(e).map(([k, v]) => `${JSON.stringify(k)}:${fmtValue(v)}`).join(',')}}`; }
function fmtFile(doc) {
  const lines = ['{'];
  const keys = Object.keys(doc);
  keys.forEach((k, i) => {
    const comma = i < keys.length - 1 ? ',' : '';
    const v = doc[k];
    if (Array.isArray(v) && v.length && typeof v[0] === 'object') {
      lines.push(`${JSON.stringify(k)}:[`);
      v.forEach((e, j) => lines.push(fmtEntry(e) + (j < v.length - 1 ? ',' : '')));
      lines.push(`]${comma}`);
    } else if (Array.isArray(v)) {
      lines.push(`${JSON.stringify(k)}:[`);
      v.forEach((e, j) => lines.push(JSON.stringify(e) + (j < v.length - 1 ? ',' : '')));
      lines.push(`]${comma}`);
    } else lines.push(`${JSON.stringify(k)}:${JSON.stringify(v)}${comma}`);
  });
  lines.push('}');
  return lines.join('\n') + '\n';
}

// Sample points, read straight from the source rows (not from the grid).
function samples(gpu, ctx) {
  const s = { gpu: gpu.id };
  for (const dt of ['bf16', 'fp8']) {
    const g = ctx.gemmMeasured[dt];
    const v = g && g.measured.get('8192,8192,8192');
    if (v) s[`gemm_${dt}`] = { tf: v, pct: g.peak ? (100 * v) / g.peak : null };
  }
  const gb = ctx.gemmMeasured.bf16;
  if (gb) {
    let best = null;
    for (const [k, v] of [...gb.measured.entries()].sort()) if (!best || v > best.tf) best = { tf: v, at: k.replace(/,/g, 'x') };
    s.gemm_best = { ...best, pct: gb.peak ? (100 * best.tf) / gb.peak : null };
  }
  const p = ctx.prefillMeasured['bf16/8'] || ctx.prefillMeasured[Object.keys(ctx.prefillMeasured)[0]];
  if (p) {
    const key = [...p.measured.keys()].find((k) => k === '4096,256');
    if (key) s.prefill = { tf: p.measured.get(key), at: 'seq 4096, batch*heads 256' };
  }
  const d = ctx.decodeMeasured.bf16;
  if (d) {
    const off = [...d.groups.keys()].find((k) => k === '64,4096') ? '64,4096' : [...d.groups.keys()].find((k) => k === '64,4095') ? '64,4095' : null;
    if (off) s.decode = { us: median(d.groups.get(off)), at: `${d.heads}/${d.kvHeads} heads, batch 64, kv ${off.split(',')[1]}` };
  }
  if (ctx.ncclRows) {
    const n = Math.max(...ctx.ncclRows.map((r) => r.num_gpus));
    const rr = ctx.ncclRows.filter((r) => r.op_name === 'all_reduce' && r.nccl_dtype === 'half' && r.num_gpus === n && r.message_size * 2 === 256 * 2 ** 20);
    if (rr.length) {
      const us = median(rr.map((r) => r.latency * 1000));
      const bytes = 256 * 2 ** 20;
      s.allreduce = { n, us, busbw: ((bytes / (us * 1e-6)) * (2 * (n - 1)) / n) / 1e9 };
    }
  }
  return s;
}

// ---------------------------------------------------------------- main

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const src = new AicSource(args.aic);
  const commit = src.commit ? src.commit.slice(0, 12) : 'unknown';
  fs.mkdirSync(args.out, { recursive: true });
  const sampleRows = [];
  const built = new Map();
  for (const gpu of GPUS) {
    const ctx = { notes: [], choices: [], summary: [], gemmMeasured: {}, prefillMeasured: {}, decodeMeasured: {} };
    const gemm = await buildGemm(src, gpu, ctx);
    const attention_prefill = await buildPrefill(src, gpu, ctx);
    const attention_decode = await buildDecode(src, gpu, ctx);
    const collectives = gpu.collectives === false ? [] : await buildCollectives(src, gpu, ctx);
    const notes = [
      ...(gpu.note ? [gpu.note] : []),
      'Conventions: docs/kernel-tables.md. Measured values carry 4 significant digits; axis values are exact.',
      'gemm: C[m x n] = A[m x k] B[k x n]; m = tokens, n = output features, k = input features (aic collects vLLM RowParallelLinear(input_size=k, output_size=n) on x[m, k]; same order as the source). tflops = 2*m*n*k / latency. Grid index (i*len(n)+j)*len(k)+l. Axes thinned to <= 16 (m) / 15 (n, k) values (powers of two plus the extremes, then the best gap-splitting source values); latency includes any activation quantization the kernel needs.',
      'attention_prefill: tflops = 2*batch*heads*seq^2*head_dim / latency (causal: QK^T and AV over half the seq x seq square); batch_heads = batch_size*num_heads; rows with equal (seq, batch_heads) are reduced to their median; sliding-window rows excluded. Grid index i*len(batch_heads)+j.',
      'attention_decode: us = latency of one decode step of one layer for `batch` sequences, each attending over kv_len cached tokens (including the one being generated). Grid index i*len(kv_len)+j.',
      'collectives: bytes = the whole buffer as nccl-tests\' size column counts it (all_reduce: the buffer; all_gather: the gathered output; reduce_scatter: the input; alltoall: the send buffer per rank) = aic message_size (elements) x bytes per element; us = latency. bf16 nccl curves were measured with nccl-tests -d half (fp16; same bytes moved, same reduction cost); the int8 curves of the source are not emitted. gpus = ranks in one node.',
      ...ctx.notes,
    ];
    const file = path.join(args.out, `${gpu.id}.json`);
    // The "validation" block is written by hand from docs/validation-timing.md (how far this
    // table's step times are from published runs), the "matmul_ceiling" block from the
    // published maximum achievable matmul rates (docs/kernel-tables.md), the "grouped_gemm"
    // block from a lent card's grouped-GEMM run (tools/device/grouped_factors.py), the
    // "launch_floor" block from its small-kernel runs (tools/device/launch_floor.py): a
    // regenerated table keeps all four.
    let validation, matmul_ceiling, grouped_gemm, launch_floor;
    if (fs.existsSync(file))
      ({ validation, matmul_ceiling, grouped_gemm, launch_floor } = JSON.parse(fs.readFileSync(file, 'utf8')));
    const doc = {
      format: 'envelope.kernels', version: 1, gpu: gpu.id,
      source: `ai-dynamo/aiconfigurator @ ${commit} (Apache-2.0), ${DATA_ROOT}/${gpu.aic}; converted by tools/kernels/convert.mjs`,
      ...(validation ? { validation } : {}),
      ...(launch_floor ? { launch_floor } : {}),
      ...(grouped_gemm ? { grouped_gemm } : {}),
      ...(matmul_ceiling ? { matmul_ceiling } : {}),
      gemm, attention_prefill, attention_decode, collectives, notes,
    };
    const text = fmtFile(doc);
    JSON.parse(text); // must be valid JSON
    fs.writeFileSync(file, text);
    built.set(gpu.id, true);
    console.log(`${gpu.id} <- ${gpu.aic}: ${(Buffer.byteLength(text) / 1024).toFixed(1)} KiB`);
    for (const c of ctx.choices) console.log(`  source  ${c}`);
    for (const l of ctx.summary) console.log(`  ${l}`);
    if (!gpu.aliasOf) sampleRows.push(samples(gpu, ctx));
  }
  if (args.samplesMd) {
    const f = (x, d = 0) => (x === undefined || x === null ? 'n/a' : x.toFixed(d));
    const lines = [
      '| GPU | bf16 GEMM 8192x8192x8192 TFLOP/s (% of peak) | best bf16 GEMM TFLOP/s (% of peak) at m x n x k | fp8 GEMM 8192x8192x8192 TFLOP/s (% of peak) | prefill bf16, kv_ratio 8, seq 4096, batch*heads 256: TFLOP/s | decode 32/8 heads bf16 KV, batch 64, kv 4096: us | NCCL all_reduce 256 MiB: bus GB/s (GPUs, us) |',
      '|---|---|---|---|---|---|---|',
    ];
    const pc = (x) => (x && x.pct !== null ? `${f(x.tf)} (${f(x.pct)}%)` : x ? f(x.tf) : 'n/a');
    for (const s of sampleRows) {
      lines.push(`| ${s.gpu} | ${pc(s.gemm_bf16)} | ${s.gemm_best ? `${pc(s.gemm_best)} at ${s.gemm_best.at}` : 'n/a'} | ${pc(s.gemm_fp8)} | ${s.prefill ? f(s.prefill.tf) : 'n/a'} | ${s.decode ? `${f(s.decode.us, 1)}${/4095/.test(s.decode.at) ? ' (kv 4095)' : ''}` : 'n/a'} | ${s.allreduce ? `${f(s.allreduce.busbw, 1)} (${s.allreduce.n}, ${f(s.allreduce.us)})` : 'n/a'} |`);
    }
    fs.writeFileSync(args.samplesMd, lines.join('\n') + '\n');
  }
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
