#!/usr/bin/env node
// Writes ONNX Runtime's outputs of a model as a case's expected outputs,
// so that ort-check.js and `onnx-convert test` can then judge other models
// (converted, optimized) against what ORT computes for the original.
//
//   node tests/ort_expect.js ORT_DIR CASE_DIR MODEL.onnx
//
// ORT_DIR is ../shared/tools/ort (its node_modules hold onnxruntime-node
// and protobufjs). Reads CASE_DIR/test_data_set_0/input_K.pb (float32
// tensors, raw_data), runs MODEL with graph optimizations off, and writes
// output_K.pb beside them (float32, in the model's output order). Exits 1
// with one line on stderr when it cannot.
'use strict';
const fs = require('fs');
const path = require('path');

const [ortDir, caseDir, model] = process.argv.slice(2);
if (!model) {
  console.error('usage: node ort_expect.js ORT_DIR CASE_DIR MODEL.onnx');
  process.exit(2);
}
// beside ORT_DIR, or in NODE_PATH (tests/judges.sh installs them there
// when ../shared is read-only)
const from = { paths: [path.resolve(ortDir)] };
const protobuf = require(require.resolve('protobufjs', from));
const ort = require(require.resolve('onnxruntime-node', from));

// The TensorProto fields this script reads and writes (onnx.proto numbers).
const Tensor = protobuf.parse(`syntax = "proto2";
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  optional string name = 8;
  optional bytes raw_data = 9;
}`).root.lookupType('TensorProto');
const FLOAT = 1;

function readFloat(file) {
  const t = Tensor.decode(fs.readFileSync(file));
  if (t.dataType !== FLOAT) throw new Error(`${file}: only float32 inputs are read`);
  const dims = t.dims.map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.rawData && t.rawData.length) {
    const b = Buffer.from(t.rawData);
    data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = b.readFloatLE(4 * i);
  } else {
    data = Float32Array.from(t.floatData);
  }
  return { name: t.name, tensor: new ort.Tensor('float32', data, dims) };
}

function writeFloat(file, name, tensor) {
  if (tensor.type !== 'float32') throw new Error(`output ${name} is ${tensor.type}, not float32`);
  const b = Buffer.alloc(4 * tensor.data.length);
  tensor.data.forEach((v, i) => b.writeFloatLE(v, 4 * i));
  const msg = Tensor.create({ dims: tensor.dims, dataType: FLOAT, name, rawData: b });
  fs.writeFileSync(file, Tensor.encode(msg).finish());
}

async function main() {
  const dir = path.join(caseDir, 'test_data_set_0');
  const session = await ort.InferenceSession.create(model,
    { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
  const feeds = {};
  fs.readdirSync(dir).filter((f) => /^input_\d+\.pb$/.test(f))
    .sort((a, b) => parseInt(a.slice(6)) - parseInt(b.slice(6)))
    .forEach((f, i) => { const { name, tensor } = readFloat(path.join(dir, f)); feeds[name || session.inputNames[i]] = tensor; });
  const outs = await session.run(feeds);
  session.outputNames.forEach((name, i) => writeFloat(path.join(dir, `output_${i}.pb`), name, outs[name]));
  console.log(`wrote ${session.outputNames.length} outputs of ${model}`);
}

main().catch((e) => { console.error(`ort_expect: ${String(e.message || e).split('\n')[0]}`); process.exit(1); });
