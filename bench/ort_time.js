#!/usr/bin/env node
// ort_time.js - ONNX Runtime's time per inference on a backend-test case,
// single-threaded, for bench_eval.sh (a measurement, never a test).
//
//   node bench/ort_time.js ORT_DIR CASE_DIR [RUNS] [all|disabled]
//
// The last argument is ONNX Runtime's graph optimization level: "all" (its
// default: fusions such as Conv+BatchNorm+Relu) or "disabled" (op by op,
// as our evaluator runs).
// ORT_DIR is ../shared/tools/ort (after its setup.sh), whose node_modules
// hold onnxruntime-node and protobufjs. Prints "CASE_DIR median_ms".
'use strict';
const path = require('path');
const fs = require('fs');
const ortDir = path.resolve(process.argv[2]);
const caseDir = process.argv[3];
const runs = Number(process.argv[4] || 5);
const level = process.argv[5] === 'disabled' ? 'disabled' : 'all';
// beside ORT_DIR, or in NODE_PATH (tests/judges.sh)
const from = { paths: [path.resolve(ortDir)] };
const ort = require(require.resolve('onnxruntime-node', from));
const protobuf = require(require.resolve('protobufjs', from));

// Only what float/int64 inputs need (the benchmark models' inputs).
const Tensor = protobuf.parse(`syntax = "proto2";
message TensorProto { repeated int64 dims = 1; optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  repeated int64 int64_data = 7 [packed = true];
  optional bytes raw_data = 9; }`).root.lookupType('TensorProto');

function readInput(file) {
  const t = Tensor.decode(fs.readFileSync(file));
  const dims = t.dims.map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  const raw = t.rawData && t.rawData.length ? t.rawData : null;
  if (t.dataType === 1) {
    const d = raw ? new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + n * 4))
                  : Float32Array.from(t.floatData);
    return new ort.Tensor('float32', d, dims);
  }
  if (t.dataType === 7) {
    const d = raw ? new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + n * 8))
                  : BigInt64Array.from(t.int64Data.map((v) => BigInt(v.toString())));
    return new ort.Tensor('int64', d, dims);
  }
  throw new Error(`${file}: data_type ${t.dataType} not handled by the benchmark`);
}

(async () => {
  const session = await ort.InferenceSession.create(path.join(caseDir, 'model.onnx'),
    { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: level });
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    feeds[name] = readInput(path.join(caseDir, 'test_data_set_0', `input_${k}.pb`));
  });
  await session.run(feeds);
  const t = [];
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  console.log(`${caseDir} ${t[Math.floor(runs / 2)].toFixed(2)}`);
})().catch((e) => { console.error(`ort_time: ${e.message}`); process.exit(1); });
