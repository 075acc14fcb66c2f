#!/usr/bin/env node
// ONNX Runtime judges converted adapter cases against ONNX Runtime's own run
// of the original (tests/adapter_ort.sh drives it; our evaluator's outputs
// are never the reference).
//
//   node tests/adapter_ort.js ORT_DIR LIST KNOWN [FIRST]
//
// LIST lines are "CASE_DIR MODEL LABEL MODE" (test_adapter_cases
// --ort-out); CASE_DIR holds model.onnx, the original, and
// test_data_set_0/input_K.pb. MODE says how outputs compare: exact;
// unordered (a TopK that need not sort: each output's elements as a
// multiset); random (random ops: type and dims only, then NOJUDGE).
// From line FIRST (0-based; the driver restarts after a line that killed
// the process), prints one line per list line, in order (and a line
// "ORIGINAL CASE_DIR" before running a case's original):
//   OK       CASE LABEL max_abs_err      both run and agree
//   WRONG    CASE LABEL why              both run and differ
//   INVALID  CASE LABEL why              ORT refuses the converted model as
//                                        invalid ONNX, and not the original
//   NOJUDGE  CASE LABEL why              ORT cannot run the original, lacks
//                                        a kernel or type, or the model is
//                                        random (type and dims agree)
// Agreement is |got - want| <= atol + rtol * |want| per element (rtol
// 1e-3, atol 1e-5: verify.c's defaults, which the evaluator side of
// test_adapter_cases uses), NaN equal to NaN; integers, booleans and
// strings exactly; same type and dims.
//
// KNOWN (tests/adapter_ort_known.txt) lists outputs, or elements of one,
// where ORT and the spec's reading this project follows are known to
// differ (each line says why): "CASE OUTPUT ELEMENTS REASON", ELEMENTS "*"
// (values and dims) or flat indices "10,11". Those are not compared; a model whose
// only differences are there is NOJUDGE ("known: REASON").
'use strict';
const fs = require('fs');
const path = require('path');

const [ortDir, list, knownFile, firstArg] = process.argv.slice(2);
if (!knownFile) {
  console.error('usage: node adapter_ort.js ORT_DIR LIST KNOWN [FIRST]');
  process.exit(2);
}
// ORT_DIR/node_modules when the oracle was set up beside it; otherwise the
// packages tests/judges.sh installed elsewhere, found through NODE_PATH (CI's
// read-only ../shared has no node_modules).
const mods = path.resolve(ortDir, 'node_modules');
const need = (name) => (fs.existsSync(path.join(mods, name)) ? require(path.join(mods, name)) : require(name));
const protobuf = need('protobufjs');
const ort = need('onnxruntime-node');
const RTOL = 1e-3, ATOL = 1e-5;

// The TensorProto fields ev_value_write fills (onnx.proto numbers).
const Tensor = protobuf.parse(`syntax = "proto2";
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated bytes string_data = 6;
  optional string name = 8;
  optional bytes raw_data = 9;
}`).root.lookupType('TensorProto');

// ONNX data_type -> ORT's name and the typed array over raw_data
const KINDS = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 8: ['string', null], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};

function readInput(file) {
  const t = Tensor.decode(fs.readFileSync(file));
  const dims = t.dims.map(Number);
  const kind = KINDS[t.dataType];
  if (!kind) throw new Error(`input ${t.name}: data_type ${t.dataType} has no ORT tensor type here`);
  const [type, Arr] = kind;
  if (type === 'string')
    return { name: t.name, tensor: new ort.Tensor('string', t.stringData.map((b) => Buffer.from(b).toString('utf8')), dims) };
  const n = dims.reduce((a, b) => a * b, 1);
  // copy: raw_data need not be aligned for the typed array
  const bytes = Uint8Array.from(t.rawData || []);
  if (bytes.length !== n * Arr.BYTES_PER_ELEMENT) throw new Error(`input ${t.name}: raw_data size does not match dims`);
  return { name: t.name, tensor: new ort.Tensor(type, new Arr(bytes.buffer, 0, n), dims) };
}

function inputsOf(caseDir) {
  const dir = path.join(caseDir, 'test_data_set_0');
  const feeds = {};
  fs.readdirSync(dir).filter((f) => /^input_\d+\.pb$/.test(f)).forEach((f) => {
    const { name, tensor } = readInput(path.join(dir, f));
    feeds[name] = tensor;
  });
  return feeds;
}

async function run(model, feeds) {
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
  const outs = await s.run(feeds);
  return s.outputNames.map((n) => ({ name: n, t: outs[n] }));
}

function half(u) {
  const s = u & 0x8000 ? -1 : 1, e = (u >> 10) & 0x1f, m = u & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

const FLOATS = new Set(['float32', 'float64', 'float16']);

// The first difference of got from want as text, or the largest error.
// Elements as numbers (float16 decoded), or strings; sorted for "unordered".
function elements(t, mode) {
  let v = Array.from(t.data);
  if (t.type === 'float16' && t.data instanceof Uint16Array) v = v.map(half);
  if (mode === 'unordered') v.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return v;
}

// KNOWN as case -> output -> { all, idx: Set, why }
function readKnown(file) {
  const known = {};
  fs.readFileSync(file, 'utf8').split('\n').forEach((l) => {
    const w = l.replace(/#.*/, '').trim().split(/\s+/);
    if (w.length < 4) return;
    const [c, out, elems, ...why] = w;
    known[c] = known[c] || {};
    known[c][out] = { all: elems === '*', idx: new Set(elems.split(',').map(Number)), why: why.join(' ') };
  });
  return known;
}
const KNOWN = readKnown(knownFile);

// skip: the known entry of this output, or undefined; sets skip.hit when
// a value it covers differs.
function compareOne(got, want, mode, skip) {
  if (got.type !== want.type) return `type ${got.type} != ${want.type}`;
  if (got.dims.join(',') !== want.dims.join(',')) {
    if (skip && skip.all) { skip.hit = true; return 0; }
    return `dims [${got.dims}] != [${want.dims}]`;
  }
  if (mode === 'random') return 0;
  const differs = (i) => { if (skip && (skip.all || skip.idx.has(i))) { skip.hit = true; return false; } return true; };
  let worst = 0;
  const isFloat = FLOATS.has(want.type);
  const g = elements(got, mode), w = elements(want, mode);
  for (let i = 0; i < w.length; i++) {
    const a = g[i], b = w[i];
    if (!isFloat) {
      if (a !== b && differs(i)) return `element ${i}: ${a} != ${b}`;
      continue;
    }
    if ((Number.isNaN(a) && Number.isNaN(b)) || a === b) continue;
    const err = Math.abs(a - b);
    if (!(err <= ATOL + RTOL * Math.abs(b)) && differs(i)) return `element ${i}: ${a} != ${b}`;
    if (!(err <= ATOL + RTOL * Math.abs(b))) continue;
    worst = Math.max(worst, err);
  }
  return worst;
}

// The largest error, or the first difference as text; known.hit names
// what a KNOWN entry excused.
function compareAll(got, want, mode, known) {
  if (got.length !== want.length) return `${got.length} outputs, the original has ${want.length}`;
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const skip = known && known[want[i].name] ? { ...known[want[i].name], hit: false } : undefined;
    const r = compareOne(got[i].t, want[i].t, mode, skip);
    if (skip && skip.hit) known.hit = skip.why;
    if (typeof r === 'string') return `output ${i} (${want[i].name}): ${r}`;
    worst = Math.max(worst, r);
  }
  return worst;
}

// ORT refusing a model as not valid ONNX, as opposed to something it lacks
// (the same split as tests/ort_matrix.sh).
function invalid(msg) {
  // a node ORT inserted itself (a float16 -> float Cast written for opset
  // 6+ even in an opset-1 model) is not the model's fault
  if (/InsertedPrecisionFreeCast/.test(msg))
    return false;
  if (/is not a registered function\/op|ValidateOpsetForDomain|[Nn]ot implemented|NOT_IMPLEMENTED|Could not find an implementation|Unsupported model IR version/.test(msg))
    return false;
  return /This is an invalid model|INVALID_GRAPH|INVALID_PROTOBUF|Protobuf parsing failed|not in allowed (input|output) sizes|Unrecognized attribute|ShapeInferenceError|TypeInferenceError|Type Error:/.test(msg);
}

// The first line of an error, its middle cut when long (ORT's messages put
// a C++ signature between where and why).
function firstLine(e) {
  const l = String(e && e.message || e).split('\n')[0];
  return l.length <= 300 ? l : `${l.slice(0, 100)} ... ${l.slice(-200)}`;
}

// The original's outputs, or why ORT cannot run it.
async function original(caseDir) {
  let feeds;
  try {
    feeds = inputsOf(caseDir);
  } catch (e) {
    return { err: firstLine(e), feeds: null };
  }
  const model = path.join(caseDir, 'model.onnx');
  try {
    return { outs: await run(model, feeds), feeds };
  } catch (e) {
    return { err: firstLine(e), feeds };
  }
}

async function judge(orig, model, mode, known) {
  if (!orig.feeds) return ['NOJUDGE', `inputs: ${orig.err}`];
  let got;
  try {
    got = await run(model, orig.feeds);
  } catch (e) {
    const msg = firstLine(e);
    if (invalid(msg) && !(orig.err && invalid(orig.err))) return ['INVALID', msg];
    return ['NOJUDGE', msg];
  }
  if (orig.err) return ['NOJUDGE', `the original does not run: ${orig.err}`];
  const r = compareAll(got, orig.outs, mode, known);
  if (typeof r === 'string') return ['WRONG', r];
  if (known && known.hit) return ['NOJUDGE', `known: ${known.hit}`];
  if (mode === 'random') return ['NOJUDGE', 'random outputs: type and dims agree'];
  return ['OK', `max_abs_err=${r.toExponential(2)}`];
}

async function main() {
  const lines = fs.readFileSync(list, 'utf8').split('\n').filter(Boolean);
  let current = null, orig = null;
  for (let i = parseInt(firstArg || '0', 10); i < lines.length; i++) {
    const [caseDir, model, label, mode] = lines[i].split(' ');
    if (caseDir !== current) {
      current = caseDir;
      console.log(`ORIGINAL ${caseDir}`);   // the driver's mark, should ORT die on it
      orig = await original(caseDir);
    }
    const known = KNOWN[path.basename(caseDir)];
    const [verdict, why] = await judge(orig, model, mode, known ? { ...known } : undefined);
    console.log(`${verdict} ${caseDir} ${label} ${why}`);
  }
}

main().catch((e) => { console.error(`adapter_ort: ${firstLine(e)}`); process.exit(1); });
