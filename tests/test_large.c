/*
 * test_large.c - how weights travel through load and save (src/io/load_borrow.c,
 * src/io/save_out.c) and the 2 GiB message limit.
 *
 * - raw_data of a model file is borrowed from the file's mapping, not
 *   copied: in initializers and in attribute tensors; small payloads are
 *   copied; the bytes are the file's.
 * - a file that already uses the ticket field number, or a tensor with two
 *   raw_data fields (the last one wins), loads exactly as protobuf says.
 * - saving writes the same bytes as saving a copied model, for embedded
 *   weights and for external data (which save copies file to file).
 * - a model whose message would pass 2 GiB is refused with a hint, and
 *   nothing is written; a sparse 2 GiB external file costs no disk.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/load.h"
#include "io/load_borrow.h"
#include "io/save.h"
#include "t.h"
#include "wire.h"

static char lg_dir[64];

static char *lg_path(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", lg_dir, name);
    return buf[k];
}

static void lg_write(const char *name, const WireBuf *b)
{
    FILE *f = fopen(lg_path(name), "wb");
    if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f)) {
        perror(name);
        abort();
    }
}

/* The bytes of a file (malloc'ed), or NULL. */
static uint8_t *lg_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(p, 1, len > 0 ? (size_t)len : 0, f);
    fclose(f);
    return p;
}

static bool lg_same_files(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *pa = lg_read(a, &na), *pb = lg_read(b, &nb);
    bool same = pa && pb && na == nb && !memcmp(pa, pb, na);
    free(pa);
    free(pb);
    return same;
}

/* Deterministic bytes that differ from tensor to tensor. */
static uint8_t *lg_payload(size_t n, unsigned seed)
{
    uint8_t *p = malloc(n);
    uint32_t x = 2463534242u + seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
    return p;
}

/* A float tensor [n/4] named `name` with raw_data p. */
static void lg_tensor(WireBuf *t, const char *name, const uint8_t *p, size_t n)
{
    wire_fvarint(t, 1, n / 4);
    wire_fvarint(t, 2, 1);
    wire_fstr(t, 8, name);
    wire_fbytes(t, 9, p, n);
}

/* ModelProto at opset 17 around graph g. */
static void lg_model(WireBuf *m, WireBuf *g)
{
    WireBuf op = {0};
    wire_fvarint(m, 1, 8);
    wire_fvarint(&op, 2, 17);
    wire_fmsg(m, 8, &op);
    wire_fstr(g, 2, "g");
    wire_fmsg(m, 7, g);
}

static IrTensor *lg_init(IrModel *m, size_t i)
{
    return m && m->graph && i < m->graph->inits.n ? m->graph->inits.p[i] : NULL;
}

static bool lg_holds(const IrTensor *t, const uint8_t *p, size_t n)
{
    return t && t->has_raw && t->raw.len == n && !memcmp(t->raw.data, p, n);
}

/* Initializers big and small, and a Constant whose value is big. */
static void test_borrow(void)
{
    size_t big = 3u << 20, small = 100, cbig = 1u << 20;
    uint8_t *pb = lg_payload(big, 1), *ps = lg_payload(small, 2), *pc = lg_payload(cbig, 3);
    WireBuf g = {0}, m = {0}, t1 = {0}, t2 = {0}, tc = {0}, a = {0}, n = {0};
    lg_tensor(&t1, "big", pb, big);
    lg_tensor(&t2, "small", ps, small);
    lg_tensor(&tc, "c", pc, cbig);
    wire_fstr(&a, 1, "value");
    wire_fmsg(&a, 5, &tc);
    wire_fvarint(&a, 20, 4);
    wire_fstr(&n, 2, "cout");
    wire_fstr(&n, 4, "Constant");
    wire_fmsg(&n, 5, &a);
    wire_fmsg(&g, 1, &n);
    wire_fmsg(&g, 5, &t1);
    wire_fmsg(&g, 5, &t2);
    lg_model(&m, &g);
    lg_write("a.onnx", &m);

    IrModel *model = NULL;
    IrError err;
    int rc = load_model_file(lg_path("a.onnx"), NULL, &model, &err);
    T_CHECK(rc == 0, "load a.onnx: %s", err.msg);
    IrTensor *tb = lg_init(model, 0), *ts = lg_init(model, 1);
    T_CHECK(lg_holds(tb, pb, big) && tb->raw_borrowed,
            "a 3 MiB raw_data is borrowed from the file and holds its bytes");
    T_CHECK(lg_holds(ts, ps, small) && !ts->raw_borrowed,
            "a 100-byte raw_data is copied (below LB_MIN_BYTES)");
    IrNode *cn = model ? ir_walk_first(model->graph) : NULL;
    IrAttr *ca = cn ? ir_node_attr(cn, "value") : NULL;
    IrTensor *ct = ca ? ca->t : NULL;
    T_CHECK(lg_holds(ct, pc, cbig) && ct->raw_borrowed,
            "a Constant's value tensor is borrowed too");
    T_CHECK(model && model->unk.n == 0 && tb && tb->unk.n == 0 && ct && ct->unk.n == 0,
            "no ticket is left behind as an unknown field");

    /* Saving the borrowed model gives what saving a copied one gives. */
    rc = rc ? rc : save_model_file(model, lg_path("b.onnx"), NULL, &err);
    T_CHECK(rc == 0, "save b.onnx: %s", err.msg);
    uint8_t *buf = NULL;
    size_t len = 0;
    IrModel *copied = NULL;
    rc = save_model_buffer(model, &buf, &len, &err);
    rc = rc ? rc : load_model_buffer(buf, len, NULL, "buffer", NULL, &copied, &err);
    T_CHECK(rc == 0 && !lg_init(copied, 0)->raw_borrowed, "a model from memory copies: %s",
            err.msg);
    rc = rc ? rc : save_model_file(copied, lg_path("c.onnx"), NULL, &err);
    T_CHECK(rc == 0 && lg_same_files(lg_path("b.onnx"), lg_path("c.onnx")),
            "borrowed and copied models save to the same bytes");

    /* External data: written out, then copied file to file. */
    SaveOptions so = {"w.data", 1024};
    rc = save_model_file(model, lg_path("e.onnx"), &so, &err);
    IrModel *ext = NULL;
    rc = rc ? rc : load_model_file(lg_path("e.onnx"), NULL, &ext, &err);
    SaveOptions so2 = {"w2.data", 1024};
    rc = rc ? rc : save_model_file(ext, lg_path("f.onnx"), &so2, &err);
    T_CHECK(rc == 0 && lg_same_files(lg_path("w.data"), lg_path("w2.data")),
            "external data copied file to file is byte for byte the same: %s", err.msg);
    IrModel *back = NULL;
    rc = rc ? rc : load_model_file(lg_path("f.onnx"), NULL, &back, &err);
    IrTensor *eb = lg_init(back, 0);
    T_CHECK(rc == 0 && eb && eb->ext.len == big && !memcmp(eb->ext.data, pb, big),
            "the re-saved external tensor holds the original bytes: %s", err.msg);
    /* Back inline from external data: the embedded file is the same. */
    rc = rc ? rc : save_model_file(back, lg_path("g.onnx"), &(SaveOptions){"x.data", SIZE_MAX},
                                   &err);
    IrModel *inl = NULL;
    rc = rc ? rc : load_model_file(lg_path("g.onnx"), NULL, &inl, &err);
    T_CHECK(rc == 0 && lg_holds(lg_init(inl, 0), pb, big),
            "external data brought back inline holds the original bytes: %s", err.msg);
    ir_model_free(inl);
    ir_model_free(back);
    ir_model_free(ext);
    ir_model_free(copied);
    ir_model_free(model);
    free(buf);
    free(pb);
    free(ps);
    free(pc);
    free(m.p);
}

/* A file under LOAD_KEEP_FD_BYTES keeps no descriptor: its borrowed bytes
 * are written from the mapping (and released behind the write). */
static void test_small_file(void)
{
    size_t n = 300u << 10;
    uint8_t *p = lg_payload(n, 7);
    WireBuf g = {0}, m = {0}, t = {0};
    lg_tensor(&t, "w", p, n);
    wire_fmsg(&g, 5, &t);
    lg_model(&m, &g);
    lg_write("small.onnx", &m);
    IrModel *model = NULL, *back = NULL;
    IrError err;
    int rc = load_model_file(lg_path("small.onnx"), NULL, &model, &err);
    T_CHECK(rc == 0 && model->n_maps == 1 && model->maps[0].fd == -1 &&
                lg_init(model, 0)->raw_borrowed,
            "a %zu-byte file is mapped without a kept descriptor: %s", m.n, err.msg);
    rc = rc ? rc : save_model_file(model, lg_path("small2.onnx"), NULL, &err);
    rc = rc ? rc : load_model_file(lg_path("small2.onnx"), NULL, &back, &err);
    T_CHECK(rc == 0 && lg_holds(lg_init(back, 0), p, n) && lg_holds(lg_init(model, 0), p, n),
            "written from the mapping, the tensor is intact (and still readable): %s",
            err.msg);
    ir_model_free(back);
    ir_model_free(model);
    free(p);
    free(m.p);
}

/* A tensor with an unknown field that has the ticket's number. */
static void test_ticket_clash(void)
{
    size_t n = 4096;
    uint8_t *p = lg_payload(n, 4);
    WireBuf g = {0}, m = {0}, t = {0};
    lg_tensor(&t, "w", p, n);
    wire_fvarint(&t, LB_TICKET_FIELD, 0);
    wire_fmsg(&g, 5, &t);
    lg_model(&m, &g);
    lg_write("clash.onnx", &m);
    IrModel *model = NULL;
    IrError err;
    int rc = load_model_file(lg_path("clash.onnx"), NULL, &model, &err);
    IrTensor *w = lg_init(model, 0);
    T_CHECK(rc == 0 && lg_holds(w, p, n) && !w->raw_borrowed && w->unk.n == 1 &&
                w->unk.f[0].tag == LB_TICKET_FIELD,
            "a file with its own field %u loads the ordinary way and keeps it: %s",
            LB_TICKET_FIELD, err.msg);
    ir_model_free(model);
    free(p);
    free(m.p);
}

/* Two raw_data fields: protobuf keeps the last. */
static void test_two_raw(void)
{
    size_t n1 = 1024, n2 = 2048;
    uint8_t *p1 = lg_payload(n1, 5), *p2 = lg_payload(n2, 6);
    WireBuf g = {0}, m = {0}, t = {0};
    lg_tensor(&t, "w", p1, n1);
    wire_fbytes(&t, 9, p2, n2);
    wire_fmsg(&g, 5, &t);
    lg_model(&m, &g);
    lg_write("two.onnx", &m);
    IrModel *model = NULL;
    IrError err;
    int rc = load_model_file(lg_path("two.onnx"), NULL, &model, &err);
    T_CHECK(rc == 0 && lg_holds(lg_init(model, 0), p2, n2),
            "two raw_data fields: the last one is the tensor's: %s", err.msg);
    ir_model_free(model);
    free(p1);
    free(p2);
    free(m.p);
}

/* A 2 GiB + 4 KiB tensor in a sparse side file. */
static void test_two_gib(void)
{
    uint64_t bytes = (UINT64_C(1) << 31) + 4096;
    int fd = open(lg_path("big.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    T_CHECK(fd >= 0 && ftruncate(fd, (off_t)bytes) == 0, "sparse side file");
    if (fd >= 0)
        close(fd);
    WireBuf g = {0}, m = {0}, t = {0}, e = {0};
    wire_fvarint(&t, 1, bytes / 4);
    wire_fvarint(&t, 2, 1);
    wire_fstr(&t, 8, "w");
    wire_fstr(&e, 1, "location");
    wire_fstr(&e, 2, "big.bin");
    wire_fmsg(&t, 13, &e);
    wire_fvarint(&t, 14, 1);
    wire_fmsg(&g, 5, &t);
    lg_model(&m, &g);
    lg_write("big.onnx", &m);
    IrModel *model = NULL;
    IrError err;
    int rc = load_model_file(lg_path("big.onnx"), NULL, &model, &err);
    T_CHECK(rc == 0, "a model with a 2 GiB external tensor loads: %s", err.msg);
    if (rc)
        return;
    /* Inline (a threshold above the tensor): over the limit. */
    SaveOptions inl = {"never.data", SIZE_MAX};
    rc = save_model_file(model, lg_path("inline.onnx"), &inl, &err);
    struct stat st;
    T_CHECK(rc == -1 && strstr(err.msg, "2 GiB") && strstr(err.msg, "--external-data") &&
                !strchr(err.msg, '\n') && stat(lg_path("inline.onnx"), &st) != 0,
            "a 2 GiB message is refused with a hint and nothing written: rc %d \"%s\"", rc,
            err.msg);
    uint8_t *buf = NULL;
    size_t len = 0;
    rc = save_model_buffer(model, &buf, &len, &err);
    T_CHECK(rc == 0 && len < 4096, "kept external, the message stays small: %zu bytes", len);
    free(buf);
    ir_model_free(model);
    free(m.p);
}

static void lg_cleanup(void)
{
    static const char *const names[] = {
        "a.onnx", "b.onnx", "c.onnx", "e.onnx", "f.onnx", "g.onnx", "w.data", "w2.data",
        "clash.onnx", "two.onnx", "small.onnx", "small2.onnx", "big.bin", "big.onnx", "inline.onnx"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(lg_path(names[i]));
    rmdir(lg_dir);
}

int main(void)
{
    snprintf(lg_dir, sizeof lg_dir, "%s", "/tmp/oc_large_XXXXXX");
    if (!mkdtemp(lg_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_borrow();
    test_small_file();
    test_ticket_clash();
    test_two_raw();
    test_two_gib();
    lg_cleanup();
    return t_done("large");
}
