#!/usr/bin/env node
// Makes backend-test cases' extra inputs constants: every graph input but
// the first (Resize's roi, scales, sizes) becomes an initializer holding
// that input's value from test_data_set_0, and each case is copied to
// OUT_ROOT/<its folder name> with input_0.pb and output_0.pb only. ONNX's
// own expected outputs then judge a conversion that needs those values
// known. One process for all cases: each start costs a second.
//
//   node tests/resize_freeze.js ORT_DIR PROTO OUT_ROOT CASE_DIR...
//
// ORT_DIR is ../shared/tools/ort (its node_modules hold protobufjs),
// PROTO the project's proto/onnx.proto. Exits 1 with one line on stderr
// when it cannot.
'use strict';
const fs = require('fs');
const path = require('path');

const [ortDir, proto, outRoot, ...cases] = process.argv.slice(2);
if (!cases.length) {
  console.error('usage: node resize_freeze.js ORT_DIR PROTO OUT_ROOT CASE_DIR...');
  process.exit(2);
}
// beside ORT_DIR, or in NODE_PATH (tests/judges.sh)
const protobuf = require(require.resolve('protobufjs', { paths: [path.resolve(ortDir)] }));
const root = protobuf.loadSync(proto);
const Model = root.lookupType('onnx.ModelProto');
const Tensor = root.lookupType('onnx.TensorProto');

function freeze(caseDir, outDir) {
  const data = path.join(caseDir, 'test_data_set_0');
  const m = Model.decode(fs.readFileSync(path.join(caseDir, 'model.onnx')));
  const g = m.graph;
  g.initializer = g.initializer || [];
  g.input.slice(1).forEach((inp, k) => {
    const t = Tensor.decode(fs.readFileSync(path.join(data, `input_${k + 1}.pb`)));
    t.name = inp.name;
    g.initializer.push(t);
  });
  g.input = g.input.slice(0, 1);
  const out = path.join(outDir, 'test_data_set_0');
  fs.mkdirSync(out, {recursive: true});
  fs.writeFileSync(path.join(outDir, 'model.onnx'), Model.encode(m).finish());
  for (const f of ['input_0.pb', 'output_0.pb'])
    fs.copyFileSync(path.join(data, f), path.join(out, f));
}

for (const c of cases) {
  try {
    freeze(c, path.join(outRoot, path.basename(c)));
  } catch (e) {
    console.error(`resize_freeze: ${c}: ${e.message}`);
    process.exit(1);
  }
}
