// Writes what ONNX Runtime's "basic" graph optimization level makes of a
// model (the reference for the optimizer's node counts in bench/README.md).
//   node bench/ort_basic.js IN.onnx OUT.onnx
//   node bench/ort_basic.js --batch FILE
// --batch runs many models in one process (node's start-up costs more than
// most node tests): each line of FILE is "IN.onnx OUT.onnx [OURS.onnx]";
// for each it writes OUT and prints "OK IN IR ORT_NODES [OURS_NODES]" (IR:
// IN's ir_version; OURS is only counted, e.g. our optimizer's output) or
// "ERROR IN why". Nodes
// are counted as `onnx-convert info` counts nodes_total: the main graph,
// its subgraphs, and model-local function bodies.
'use strict';
const fs = require('fs');
const path = require('path');
// The oracle's npm packages: beside it (OC_ORT_DIR, by default ../shared's),
// or in NODE_PATH when tests/judges.sh installed them elsewhere.
const from = { paths: [process.env.OC_ORT_DIR || path.resolve(__dirname, '../../shared/tools/ort')] };
const ort = require(require.resolve('onnxruntime-node', from));

// Only the fields that hold nodes; protobufjs skips every other field.
const PROTO = `
syntax = "proto2";
message AttributeProto { optional GraphProto g = 6; repeated GraphProto graphs = 11; }
message NodeProto { repeated AttributeProto attribute = 5; }
message GraphProto { repeated NodeProto node = 1; }
message FunctionProto { repeated NodeProto node = 7; }
message ModelProto {
  optional int64 ir_version = 1; optional GraphProto graph = 7; repeated FunctionProto functions = 25;
}`;

let ModelProto = null;
function readModel(file) {
  if (!ModelProto)
    ModelProto = require(require.resolve('protobufjs', from)).parse(PROTO).root.lookupType('ModelProto');
  return ModelProto.decode(fs.readFileSync(file));
}

function countNodes(file) {
  const nodes = (list) => list.reduce((n, node) => n + 1 + node.attribute.reduce(
    (k, a) => k + (a.g ? graph(a.g) : 0) + a.graphs.reduce((s, g) => s + graph(g), 0), 0), 0);
  const graph = (g) => nodes(g.node);
  const m = readModel(file);
  return (m.graph ? graph(m.graph) : 0) + m.functions.reduce((n, f) => n + nodes(f.node), 0);
}

async function basic(inp, out) {
  await ort.InferenceSession.create(inp, {
    intraOpNumThreads: 1, graphOptimizationLevel: 'basic', optimizedModelFilePath: out,
  });
}

function irVersion(file) {
  const v = readModel(file).irVersion;
  return typeof v === 'object' && v ? v.low : Number(v);
}

async function batch(file) {
  const jobs = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/));
  for (const [inp, out, ours] of jobs) {
    try {
      await basic(inp, out);
      console.log(`OK ${inp} ${irVersion(inp)} ${countNodes(out)}${ours ? ' ' + countNodes(ours) : ''}`);
    } catch (e) {
      console.log(`ERROR ${inp} ${String(e.message || e).split('\n')[0].slice(0, 300)}`);
    }
  }
}

// required as a module (tests/corpus/ort_judge.js): the functions only
module.exports = { basic, countNodes, irVersion };
if (require.main === module) (async () => {
  const args = process.argv.slice(2);
  if (args[0] === '--batch') await batch(args[1]);
  else await basic(args[0], args[1]);
})().catch(e => { console.error(e.message); process.exit(1); });
