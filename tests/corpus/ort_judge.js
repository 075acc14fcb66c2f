#!/usr/bin/env node
// ONNX Runtime judging every file written for one corpus model, in one
// process (node's start-up and ORT's load cost more than most runs).
// tests/corpus/check.py drives it.
//
//   node tests/corpus/ort_judge.js CASE_DIR pytorch|none RTOL ATOL [SOURCE_DIR]
//
// SOURCE_DIR (a float16 file another tool made from a PyTorch export,
// fed the same inputs): its output_K.pb are PyTorch's outputs of the
// float32 model, what the half file stands for. Where ORT's own run of the
// half original is not within float16's scaled tolerance of them (ORT's
// half arithmetic kept other boxes than the model's), a result that is
// gives the model's outputs ("matched": "source"), as with "pytorch"; one
// that matches neither is not judged (the file's outputs turn on half
// rounding: three arithmetics, three answers).
//
// CASE_DIR holds model.onnx (the original), test_data_set_0/input_K.pb and,
// for "pytorch", output_K.pb: PyTorch's outputs. First the original runs
// and one JSON line says how ({"id": "original", ...}); the reference the
// other files are held to is then PyTorch's outputs when ORT reproduces
// them on the original ("ref": "pytorch"), else ORT's own outputs of the
// original ("ref": "ort": a difference between ORT and PyTorch is not the
// converter's), or PyTorch's when ORT cannot run the original at all.
// With "none" (files other tools wrote: no PyTorch run) ORT's outputs of
// the original are the reference. A case without model.onnx (a Core ML
// package coremltools made: its import is what runs) has PyTorch's
// outputs as the reference ("ref": "pytorch", "original": "absent").
//
// Then each line of stdin is a job (JSON), answered by one JSON line:
//   {"id", "kind": "model", "path", "rtol", "atol", "scaled", "loose"}
//     runs PATH on the inputs (cast to the model's input types: a float16
//     model is fed float16) and compares with the reference:
//     |got - want| <= atol * s + rtol * |want|, s = 1, or, when "scaled",
//     the output's largest finite |want| (at least 1), as --verify judges
//     half-precision models (docs/evaluator.md). "loose": "float" allows
//     another float type, "coreml" int32 for int64 and float32 for
//     bool (what Core ML's inputs and outputs hold).
//     "ref": another model whose ORT outputs are the reference instead.
//   {"id", "kind": "values", "path", ...}  compares PATH/output_K.pb
//     (values computed elsewhere: the Python package's run()) likewise
//   {"id", "kind": "basic", "path": OURS, "scratch": F}  ONNX Runtime's
//     "basic" optimization of the original, written to F, and both node
//     counts (bench/ort_basic.js counts them)
// Answers: {"id", "status", "why", "err", ...}, status one of
//   ok        within the tolerance (err: the largest |got - want|) of the
//             reference, or of PyTorch's outputs where ORT's run of the
//             original left them ("matched": "pytorch")
//   differs   other numbers, dims or types (why says where)
//   invalid   ORT refuses the file as invalid ONNX, or fails to run it,
//             while it runs the original
//   nokernel  ORT lacks a kernel or a type for it (not the file's fault)
//   nojudge   ORT cannot run the original either
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const basicLevel = require('../../bench/ort_basic.js');
const from = { paths: [process.env.OC_ORT_DIR || path.resolve(__dirname, '../../../shared/tools/ort')] };
const ort = require(require.resolve('onnxruntime-node', from));
const protobuf = require(require.resolve('protobufjs', from));

const Tensor = protobuf.parse(`syntax = "proto2";
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  repeated int32 int32_data = 5 [packed = true];
  repeated bytes string_data = 6;
  repeated int64 int64_data = 7 [packed = true];
  optional string name = 8;
  optional bytes raw_data = 9;
  repeated double double_data = 10 [packed = true];
}`).root.lookupType('TensorProto');

// ONNX data_type -> ORT's type name and the typed array holding it
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 8: ['string', null], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};
const FLOAT_TYPES = new Set(['float32', 'float64', 'float16']);
const INT_TYPES = new Set(['int32', 'int64']);

// A TensorProto file as {name, type, dims, values}: values a plain array of
// numbers (strings for string tensors), whatever field held them.
function readValue(file) {
  const t = Tensor.decode(fs.readFileSync(file));
  const dims = t.dims.map(Number);
  const spec = TYPES[t.dataType];
  if (!spec) throw new Error(`${path.basename(file)}: data_type ${t.dataType} has no ORT type`);
  const [type, Arr] = spec;
  if (type === 'string')
    return { name: t.name, type, dims, values: t.stringData.map((b) => Buffer.from(b).toString('utf8')) };
  const n = dims.reduce((a, b) => a * b, 1);
  let values;
  if (t.rawData && t.rawData.length) {
    const bytes = Uint8Array.from(t.rawData); // aligned copy
    values = Array.from(new Arr(bytes.buffer, 0, n));
  } else {
    values = Array.from(t.floatData.length ? t.floatData : t.doubleData.length ? t.doubleData
      : t.int64Data.length ? t.int64Data : t.int32Data, Number);
  }
  if (type === 'float16') values = values.map(half);
  return { name: t.name, type, dims, values: values.map(Number) };
}

function half(u) {
  const s = u & 0x8000 ? -1 : 1, e = (u >> 10) & 0x1f, m = u & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// float32 -> float16 bits, rounding to nearest even (through float32's bits)
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function toHalf(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000, exp = (b >>> 23) & 0xff, man = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = man | 0x800000, shift = 14 - e;
    let h = m >>> shift;
    const rest = m & ((1 << shift) - 1), halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;
  return sign | h;
}

// A value as an ORT tensor of TYPE (the session's input type).
function tensorOf(v, type) {
  if (type === 'string') return new ort.Tensor('string', v.values, v.dims);
  const spec = Object.values(TYPES).find(([t]) => t === type);
  if (!spec) throw new Error(`input ${v.name}: ORT's JavaScript API has no ${type} tensor`);
  const Arr = spec[1];
  const data = type === 'float16' ? Uint16Array.from(v.values, toHalf)
    : (Arr === BigInt64Array || Arr === BigUint64Array) ? Arr.from(v.values, (x) => BigInt(x))
      : Arr.from(v.values);
  return new ort.Tensor(type, data, v.dims);
}

function valuesOf(t) {
  let v = Array.from(t.data, Number);
  if (t.type === 'float16' && t.data instanceof Uint16Array) v = v.map(half);
  return { type: t.type, dims: Array.from(t.dims, Number), values: v };
}

function firstLine(e) {
  const l = String(e && e.message || e).split('\n')[0];
  return l.length <= 300 ? l : `${l.slice(0, 100)} ... ${l.slice(-200)}`;
}

// ORT lacking something (a kernel, a type, an op; its JavaScript API has
// no bfloat16 tensor: "Unsupported data type: 16") as opposed to refusing
// the file (the same split as tests/adapter_ort.js).
function lacks(msg) {
  return /is not a registered function\/op|[Nn]ot implemented|NOT_IMPLEMENTED|Could not find an implementation|Unsupported model IR version|has no .* tensor|Unsupported data type|data type is not supported|InsertedPrecisionFreeCast/.test(msg);
}

const caseDir = process.argv[2], expectedBy = process.argv[3] || 'pytorch';
const sourceDir = process.argv[6] || null;
// float16 against float32, as --verify judges it (src/eval/verify.h)
const halfTol = { rtol: 1e-2, atol: 3e-2, scaled: true };
// the original is held to PyTorch's outputs at the case's own tolerance
const caseTol = { rtol: parseFloat(process.argv[4] || '1e-3'), atol: parseFloat(process.argv[5] || '1e-4') };
const setDir = path.join(caseDir, 'test_data_set_0');
const numbered = (prefix) => fs.readdirSync(setDir).filter((f) => new RegExp(`^${prefix}_\\d+\\.pb$`).test(f))
  .sort((a, b) => parseInt(a.slice(prefix.length + 1)) - parseInt(b.slice(prefix.length + 1)))
  .map((f) => readValue(path.join(setDir, f)));
const inputs = numbered('input');

async function runModel(model) {
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
  const meta = s.inputMetadata || [];
  const feeds = {};
  inputs.forEach((v, i) => {
    const name = v.name && s.inputNames.includes(v.name) ? v.name : s.inputNames[i];
    const m = meta.find((x) => x.name === name);
    feeds[name] = tensorOf(v, m && m.isTensor && m.type ? m.type : v.type);
  });
  const outs = await s.run(feeds);
  const r = s.outputNames.map((n) => ({ name: n, ...valuesOf(outs[n]) }));
  await s.release();
  return r;
}

function sameKind(a, b, loose) {
  if (a === b) return true;
  if (loose === 'float') return FLOAT_TYPES.has(a) && FLOAT_TYPES.has(b);
  // Core ML's inputs and outputs: int64 as int32, bool as float32
  // (docs/coreml.md), float16 for float32 where the package declares it
  // (coremltools does from iOS16 in float16 compute), and, in coremltools'
  // own packages, an integer result as float32: compared by value
  if (loose === 'coreml')
    return (INT_TYPES.has(a) && INT_TYPES.has(b)) || (a === 'float32' && b === 'bool') ||
      (FLOAT_TYPES.has(a) && FLOAT_TYPES.has(b)) || (a === 'float32' && INT_TYPES.has(b));
  return false;
}

// The largest error, or the first difference as text.
function compare(got, want, job) {
  if (got.length !== want.length) return `${got.length} outputs, want ${want.length}`;
  let worst = 0;
  for (let k = 0; k < want.length; k++) {
    const g = got[k], w = want[k], where = `output ${k} (${w.name || g.name})`;
    if (!sameKind(g.type, w.type, job.loose)) return `${where}: type ${g.type}, want ${w.type}`;
    if (g.dims.join(',') !== w.dims.join(',')) return `${where}: dims [${g.dims}], want [${w.dims}]`;
    const exact = !FLOAT_TYPES.has(w.type);
    let scale = 1;
    if (job.scaled) for (const x of w.values) if (Number.isFinite(x)) scale = Math.max(scale, Math.abs(x));
    for (let i = 0; i < w.values.length; i++) {
      const a = g.values[i], b = w.values[i];
      if (a === b || (Number.isNaN(a) && Number.isNaN(b))) continue;
      const err = Math.abs(a - b);
      if (exact || !(err <= job.atol * scale + job.rtol * Math.abs(b)))
        return `${where}: element ${i}: ${a} != ${b} (abs err ${err.toExponential(2)})`;
      worst = Math.max(worst, err);
    }
  }
  return worst;
}

let reference = null, originalRuns = false, pytorchOutputs = null, sourceOutputs = null;

// PyTorch's outputs of SOURCE_DIR's float32 model, kept only when ORT's
// run of the half original strays from them.
function sourceFallback(got) {
  if (!sourceDir) return;
  const dir = path.join(sourceDir, 'test_data_set_0');
  const outs = fs.readdirSync(dir).filter((f) => /^output_\d+\.pb$/.test(f))
    .sort((a, b) => parseInt(a.slice(7)) - parseInt(b.slice(7))).map((f) => readValue(path.join(dir, f)));
  if (outs.length && typeof compare(got, outs, halfTol) === 'string') sourceOutputs = outs;
}

async function original() {
  const want = expectedBy === 'pytorch' ? numbered('output') : null;
  pytorchOutputs = want;
  if (!fs.existsSync(path.join(caseDir, 'model.onnx'))) {
    // nothing of ONNX to blame a failing run on: a file ORT refuses is invalid
    reference = want;
    originalRuns = true;
    return want ? { status: 'ok', ref: 'pytorch', original: 'absent' }
      : { status: 'nojudge', why: 'no model.onnx and no PyTorch outputs' };
  }
  let got;
  try {
    got = await runModel(path.join(caseDir, 'model.onnx'));
  } catch (e) {
    reference = want;
    return { status: lacks(firstLine(e)) ? 'nokernel' : 'invalid', why: firstLine(e), ref: want ? 'pytorch' : null };
  }
  originalRuns = true;
  if (!want) {
    reference = got;
    sourceFallback(got);
    return { status: 'ok', ref: 'ort', source_differs: sourceOutputs !== null };
  }
  const r = compare(got, want, caseTol);
  if (typeof r === 'string') {
    reference = got;
    return { status: 'differs', why: r, ref: 'ort' };
  }
  reference = want;
  return { status: 'ok', err: r, ref: 'pytorch' };
}

async function judge(job) {
  if (job.kind === 'basic') {
    await basicLevel.basic(path.join(caseDir, 'model.onnx'), job.scratch);
    const r = { status: 'ok', ort_nodes: basicLevel.countNodes(job.scratch), ours: basicLevel.countNodes(job.path),
      ir: basicLevel.irVersion(path.join(caseDir, 'model.onnx')) };
    fs.rmSync(job.scratch, { force: true });
    return r;
  }
  let want = reference;
  if (job.ref) {
    try {
      want = await runModel(job.ref);
    } catch (e) {
      return { status: 'nojudge', why: `the reference ${path.basename(job.ref)}: ${firstLine(e)}` };
    }
  }
  if (!want) return { status: 'nojudge', why: 'ORT cannot run the original and there is no reference' };
  let got;
  if (job.kind === 'values') {
    got = fs.readdirSync(job.path).filter((f) => /^output_\d+\.pb$/.test(f))
      .sort((a, b) => parseInt(a.slice(7)) - parseInt(b.slice(7))).map((f) => readValue(path.join(job.path, f)));
  } else {
    try {
      got = await runModel(job.path);
    } catch (e) {
      const why = firstLine(e);
      if (lacks(why)) return { status: 'nokernel', why };
      return { status: originalRuns ? 'invalid' : 'nojudge', why };
    }
  }
  const r = compare(got, want, job);
  if (typeof r !== 'string') return { status: 'ok', err: r };
  // Where ORT's own run of the original already left PyTorch's outputs
  // (a detector keeping other boxes, a nearest pick on a rounding
  // boundary), a result that gives PyTorch's outputs is right too: it
  // differs from one runtime's rounding, not from what the model computes.
  const torch = !job.ref && reference !== pytorchOutputs ? pytorchOutputs : null;
  if (torch && typeof compare(got, torch, job) !== 'string')
    return { status: 'ok', err: compare(got, torch, job), matched: 'pytorch' };
  if (!job.ref && sourceOutputs && typeof compare(got, sourceOutputs, halfTol) !== 'string')
    return { status: 'ok', err: compare(got, sourceOutputs, halfTol), matched: 'source' };
  // Neither: the half file's outputs turn on its rounding (ORT's run and
  // the float32 model already disagree, beyond float16's tolerance), so
  // a third arithmetic landing elsewhere is not evidence of a wrong result;
  // judging it needs the file's own noise (issue 36)
  if (!job.ref && sourceOutputs)
    return { status: 'nojudge', why: `the half original's outputs turn on its rounding (ORT's run of it is not its float32 source's PyTorch outputs) and this result matches neither: ${r}` };
  return { status: 'differs', why: r };
}

// one line per job, in order, as soon as it is judged
(async () => {
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
  say({ id: 'original', ...(await original()) });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const job = JSON.parse(line);
    let r;
    try {
      r = await judge(job);
    } catch (e) {
      r = { status: 'error', why: firstLine(e) };
    }
    say({ id: job.id, ...r });
  }
})().catch((e) => { console.error(firstLine(e)); process.exit(1); });
