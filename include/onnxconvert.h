/*
 * onnxconvert.h - the onnx-convert C library (prefix oc_).
 *
 * The one public header: everything a program needs to load, check,
 * convert, optimize, evaluate and save ONNX models. Build against the
 * installed library with `pkg-config --cflags --libs onnxconvert`.
 */
#ifndef ONNXCONVERT_H
#define ONNXCONVERT_H

/* The version of this library and of the onnx-convert tool built with it;
 * the Makefile reads these three lines (soname, pkg-config file). */
#define ONNXCONVERT_VERSION_MAJOR 0
#define ONNXCONVERT_VERSION_MINOR 8
#define ONNXCONVERT_VERSION_PATCH 0
#define ONNXCONVERT_VERSION "0.8.0"

#endif
