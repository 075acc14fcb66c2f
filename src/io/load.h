/*
 * load.h - reading .onnx files into the IR (prefix load_).
 *
 * The reader first walks the raw protobuf wire format against the schema
 * (lengths inside their parent, wire types that match the field, nesting no
 * deeper than LOAD_MAX_DEPTH messages) so that protobuf-c only ever sees
 * well-formed input, then converts the decoded messages into the IR, taking
 * over protobuf-c's buffers instead of copying tensor payloads.
 */
#ifndef OC_LOAD_H
#define OC_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Messages nested deeper than this are refused. A subgraph level costs
 * about four (Graph > Node > Attribute > Graph). */
#define LOAD_MAX_DEPTH 128

/* A mapped file at least this big keeps its descriptor open for the
 * model's lifetime, so that saving copies its bytes file to file. */
#define LOAD_KEEP_FD_BYTES (1u << 20)

/* Limits on what a file may declare, checked while the IR is built so
 * that no later step meets sizes it cannot handle. No real model comes
 * near them; a file past one is refused with a message naming it. */
/* Nodes in the whole model: main graph, subgraphs, functions, training. */
#define LOAD_MAX_NODES ((size_t)1 << 24)
/* Bytes of one name: node, value, graph, function, attribute names,
 * op_type and domain (doc strings and metadata are text, not names). */
#define LOAD_MAX_NAME 65536
/* Bytes one tensor declares: its dims product times its element size
 * (a STRING element counts 1); the product must not overflow either. */
#define LOAD_MAX_TENSOR_BYTES ((uint64_t)1 << 40)
/* Dims of one tensor or declared shape; the evaluator's EV_MAX_RANK. */
#define LOAD_MAX_RANK 64

typedef struct LoadOptions {
    /* Leave external data unopened (info does not need the bytes). */
    int skip_external;
    /* Another node limit than LOAD_MAX_NODES (0: that one), so that tests
     * can reach a limit without building 16 million nodes. */
    size_t max_nodes;
} LoadOptions;

/* Loads the model at `path`. External data is resolved relative to the
 * file's folder and must stay inside it. On success *out owns the model
 * (free with ir_model_free) and 0 is returned; on failure -1 with err set
 * to a one-line reason naming the file and what is wrong. opt may be NULL. */
int load_model_file(const char *path, const LoadOptions *opt, IrModel **out,
                    IrError *err);

/* The same from memory; `dir` is the folder external data is relative to
 * (NULL: external data refused). `what` names the input in messages. */
int load_model_buffer(const uint8_t *buf, size_t len, const char *dir,
                      const char *what, const LoadOptions *opt, IrModel **out,
                      IrError *err);

/* Checks `buf` against the wire format of ModelProto without decoding it:
 * 0 if protobuf-c may safely decode it, else -1 with err set. */
int load_wire_check(const uint8_t *buf, size_t len, IrError *err);

/* Reads a whole TensorProto file (the backend tests' input_K.pb). */
int load_tensor_file(const char *path, IrTensor **out, IrError *err);

/* Maps the regular file `path` read-only: *base (NULL for an empty file)
 * and *len, for a decoder of bytes in memory; release with
 * load_unmap_readonly. 0, or -1 with err naming the file. */
int load_map_readonly(const char *path, const void **base, size_t *len,
                      IrError *err);
void load_unmap_readonly(const void *base, size_t len);

/* Checks `len` bytes at `buf` against the wire format of `descriptor` (a
 * ProtobufCMessageDescriptor) and unpacks them; `what` names the bytes in
 * messages. Nothing borrows buf afterwards. Free the message with
 * protobuf_c_message_free_unpacked. NULL with err. */
void *load_message_buffer(const uint8_t *buf, size_t len,
                          const void *descriptor, const char *what,
                          IrError *err);

/* Maps `path`, checks its wire format against `descriptor` (a
 * ProtobufCMessageDescriptor: SequenceProto, OptionalProto, ...) and
 * unpacks it; free with protobuf_c_message_free_unpacked. NULL with err. */
void *load_message_file(const char *path, const void *descriptor,
                        IrError *err);
/* Converts an unpacked Onnx__TensorProto (its buffers are taken over; the
 * message is still freed by its owner). External data is not followed. */
IrTensor *load_tensor_message(void *tensor_proto, const char *what,
                              IrError *err);

/* Tests only: makes external data open the way it does on kernels without
 * openat2 (path checks plus O_NOFOLLOW and an inode comparison). */
void load_test_no_openat2(bool on);

#endif
