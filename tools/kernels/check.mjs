#!/usr/bin/env node
// Self-check for presets/kernels/*.json (format "envelope.kernels", version 1).
//   node tools/kernels/check.mjs [dir-or-files...]   (default: presets/kernels)
// Exits non-zero when any file breaks the format described in docs/kernel-tables.md:
// grid sizes must match the axis lengths, axes must be strictly ascending, and
// every value must be a finite positive number.

import fs from 'node:fs';
import path from 'node:path';

const SIZE_TARGET = 150 * 1024;
const GEMM_DTYPES = new Set(['bf16', 'fp8', 'fp8_block', 'mxfp8', 'nvfp4', 'int4_wo', 'int8_wo']);
const ATTN_DTYPES = new Set(['bf16', 'fp8']);
const COLL_OPS = new Set(['all_reduce', 'all_gather', 'reduce_scatter', 'alltoall']);
const COLL_KINDS = new Set(['nccl', 'custom']);

let errors = 0, warnings = 0;
function err(file, msg) { errors++; console.error(`ERROR ${file}: ${msg}`); }
function warn(file, msg) { warnings++; console.warn(`warn  ${file}: ${msg}`); }

const isPos = (x) => typeof x === 'number' && Number.isFinite(x) && x > 0;
const isPosInt = (x) => isPos(x) && Number.isInteger(x);

function checkAxis(file, where, name, a, { integer = false } = {}) {
  if (!Array.isArray(a) || a.length === 0) { err(file, `${where}: ${name} must be a non-empty array`); return false; }
  for (let i = 0; i < a.length; i++) {
    if (!(integer ? isPosInt(a[i]) : isPos(a[i]))) { err(file, `${where}: ${name}[${i}] = ${a[i]} is not a positive ${integer ? 'integer' : 'number'}`); return false; }
    if (i && !(a[i] > a[i - 1])) { err(file, `${where}: ${name} not strictly ascending at [${i}] (${a[i - 1]} then ${a[i]})`); return false; }
  }
  return true;
}
function checkValues(file, where, name, v, n) {
  if (!Array.isArray(v)) { err(file, `${where}: ${name} must be an array`); return; }
  if (v.length !== n) { err(file, `${where}: ${name} has ${v.length} values, axes need ${n}`); return; }
  const bad = v.findIndex((x) => !isPos(x));
  if (bad >= 0) err(file, `${where}: ${name}[${bad}] = ${v[bad]} is not finite and positive`);
}
function checkString(file, where, name, s) {
  if (typeof s !== 'string' || !s.length) err(file, `${where}: ${name} must be a non-empty string`);
}
function checkKeys(file, where, e, required) {
  for (const k of required) if (!(k in e)) err(file, `${where}: missing key "${k}"`);
}

function checkFile(file) {
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch (e) { err(file, e.message); return; }
  if (Buffer.byteLength(text) > SIZE_TARGET) warn(file, `${Buffer.byteLength(text)} bytes, above the ${SIZE_TARGET}-byte target`);
  let d;
  try { d = JSON.parse(text); } catch (e) { err(file, `invalid JSON: ${e.message}`); return; }
  if (d.format !== 'envelope.kernels') err(file, `format is ${JSON.stringify(d.format)}, want "envelope.kernels"`);
  if (d.version !== 1) err(file, `version is ${JSON.stringify(d.version)}, want 1`);
  checkString(file, 'top', 'gpu', d.gpu);
  if (path.basename(file) !== `${d.gpu}.json`) err(file, `file name does not match gpu "${d.gpu}"`);
  checkString(file, 'top', 'source', d.source);
  for (const k of ['gemm', 'attention_prefill', 'attention_decode', 'collectives', 'notes']) {
    if (!Array.isArray(d[k])) err(file, `"${k}" must be an array`);
  }
  (d.notes || []).forEach((n, i) => checkString(file, `notes[${i}]`, 'note', n));

  (d.gemm || []).forEach((e, i) => {
    const w = `gemm[${i}] ${e.dtype}`;
    checkKeys(file, w, e, ['dtype', 'source', 'm', 'n', 'k', 'tflops']);
    if (!GEMM_DTYPES.has(e.dtype)) err(file, `${w}: unknown dtype`);
    checkString(file, w, 'source', e.source);
    const ok = ['m', 'n', 'k'].map((a) => checkAxis(file, w, a, e[a], { integer: true })).every(Boolean);
    if (ok) checkValues(file, w, 'tflops', e.tflops, e.m.length * e.n.length * e.k.length);
  });
  const gemmKeys = (d.gemm || []).map((e) => e.dtype);
  if (new Set(gemmKeys).size !== gemmKeys.length) err(file, 'gemm: duplicate dtype entries');

  (d.attention_prefill || []).forEach((e, i) => {
    const w = `attention_prefill[${i}] ${e.dtype}`;
    checkKeys(file, w, e, ['dtype', 'head_dim', 'kv_ratio', 'causal', 'source', 'seq', 'batch_heads', 'tflops']);
    if (!ATTN_DTYPES.has(e.dtype)) err(file, `${w}: unknown dtype`);
    if (!isPosInt(e.head_dim)) err(file, `${w}: head_dim must be a positive integer`);
    if (!isPos(e.kv_ratio)) err(file, `${w}: kv_ratio must be positive`);
    if (typeof e.causal !== 'boolean') err(file, `${w}: causal must be a boolean`);
    checkString(file, w, 'source', e.source);
    const ok = checkAxis(file, w, 'seq', e.seq, { integer: true }) & checkAxis(file, w, 'batch_heads', e.batch_heads, { integer: true });
    if (ok) checkValues(file, w, 'tflops', e.tflops, e.seq.length * e.batch_heads.length);
  });

  (d.attention_decode || []).forEach((e, i) => {
    const w = `attention_decode[${i}] ${e.kv_dtype}`;
    checkKeys(file, w, e, ['dtype', 'kv_dtype', 'head_dim', 'heads', 'kv_heads', 'source', 'batch', 'kv_len', 'us']);
    if (!ATTN_DTYPES.has(e.dtype) || !ATTN_DTYPES.has(e.kv_dtype)) err(file, `${w}: unknown dtype/kv_dtype`);
    for (const k of ['head_dim', 'heads', 'kv_heads']) if (!isPosInt(e[k])) err(file, `${w}: ${k} must be a positive integer`);
    if (isPosInt(e.heads) && isPosInt(e.kv_heads) && e.heads % e.kv_heads) err(file, `${w}: heads not a multiple of kv_heads`);
    checkString(file, w, 'source', e.source);
    const ok = checkAxis(file, w, 'batch', e.batch, { integer: true }) & checkAxis(file, w, 'kv_len', e.kv_len, { integer: true });
    if (ok) checkValues(file, w, 'us', e.us, e.batch.length * e.kv_len.length);
  });

  const seen = new Set();
  (d.collectives || []).forEach((e, i) => {
    const w = `collectives[${i}] ${e.op}/${e.kind}/${e.gpus}`;
    checkKeys(file, w, e, ['op', 'dtype', 'gpus', 'kind', 'source', 'bytes', 'us']);
    if (!COLL_OPS.has(e.op)) err(file, `${w}: unknown op`);
    if (!COLL_KINDS.has(e.kind)) err(file, `${w}: unknown kind`);
    if (e.kind === 'custom' && e.op !== 'all_reduce') err(file, `${w}: custom kind is all_reduce only`);
    if (!isPosInt(e.gpus) || e.gpus < 2) err(file, `${w}: gpus must be an integer >= 2`);
    checkString(file, w, 'dtype', e.dtype);
    checkString(file, w, 'source', e.source);
    const key = `${e.op}/${e.dtype}/${e.gpus}/${e.kind}`;
    if (seen.has(key)) err(file, `${w}: duplicate curve ${key}`);
    seen.add(key);
    if (checkAxis(file, w, 'bytes', e.bytes, { integer: true })) checkValues(file, w, 'us', e.us, e.bytes.length);
  });

  if (d.mla !== undefined || d.moe !== undefined) checkExtra(file, d);
}

// Optional families (docs/kernel-tables.md, "Proposed: mla and moe").
function checkExtra(file, d) {
  for (const fam of ['mla', 'moe']) {
    if (d[fam] === undefined) continue;
    if (!Array.isArray(d[fam])) { err(file, `"${fam}" must be an array`); continue; }
    d[fam].forEach((e, i) => {
      const w = `${fam}[${i}]`;
      checkString(file, w, 'source', e.source);
      if (!Array.isArray(e.axes) || !e.axes.length) { err(file, `${w}: axes must be a non-empty array of axis names`); return; }
      let n = 1, ok = true;
      for (const a of e.axes) { ok = checkAxis(file, w, a, e[a], { integer: true }) && ok; n *= (e[a] || []).length; }
      if (ok) checkValues(file, w, 'us', e.us, n);
    });
  }
}

const args = process.argv.slice(2);
const targets = args.length ? args : ['presets/kernels'];
const files = [];
for (const t of targets) {
  if (fs.existsSync(t) && fs.statSync(t).isDirectory()) {
    for (const f of fs.readdirSync(t).sort()) if (f.endsWith('.json')) files.push(path.join(t, f));
  } else files.push(t);
}
if (!files.length) { console.error('no kernel table files found'); process.exit(1); }
for (const f of files) checkFile(f);
console.log(`${files.length} file(s) checked: ${errors} error(s), ${warnings} warning(s)`);
process.exit(errors ? 1 : 0);
