"""The same conversion with the onnx package, for bench/big.sh to time
beside onnx-convert (not a test).

    python3 bench/onnx_convert_version.py IN.onnx OUT.onnx OPSET [DATA_FILE]

Loads IN (with its external data), converts with onnx.version_converter,
and saves OUT: embedded, or with every tensor of 1 KiB or more in the side
file DATA_FILE beside OUT (the same threshold onnx-convert uses).
"""
import sys

import onnx
from onnx import version_converter


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: onnx_convert_version.py IN OUT OPSET [DATA_FILE]")
    src, dst, opset = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = onnx.load(src, load_external_data=True)
    model = version_converter.convert_version(model, opset)
    if len(sys.argv) == 5:
        onnx.save_model(model, dst, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=sys.argv[4],
                        size_threshold=1024)
    else:
        onnx.save_model(model, dst)


if __name__ == "__main__":
    main()
