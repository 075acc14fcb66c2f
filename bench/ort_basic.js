// Writes what ONNX Runtime's "basic" graph optimization level makes of a
// model (the reference for the optimizer's node counts in the README).
//   node bench/ort_basic.js IN.onnx OUT.onnx
const path = require('path');
const ort = require(path.resolve(__dirname, '../../shared/tools/ort/node_modules/onnxruntime-node'));
(async () => {
  const [inp, out] = process.argv.slice(2);
  await ort.InferenceSession.create(inp, {
    intraOpNumThreads: 1, graphOptimizationLevel: 'basic', optimizedModelFilePath: out,
  });
})().catch(e => { console.error(e.message); process.exit(1); });
