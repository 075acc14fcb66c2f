/*
 * test_info_json.c - `info --json` is valid JSON for every model, and states
 * the facts the files hold.
 *
 * 1. A strict RFC 8259 parser (written here, independent of src/) that also
 *    builds a small tree so values can be looked up; its own unit checks on
 *    valid and invalid snippets.
 * 2. A model built through the IR API with hostile strings (quotes,
 *    backslashes, control bytes, invalid UTF-8) and every kind of type:
 *    the JSON must parse and decode to the expected text.
 * 3. Every *.onnx under the data folders: loaded, rendered (JSON and text),
 *    parsed, and compared with what protobuf-c's own decoding of the file
 *    says (ir_version, producer, opsets, node/initializer/input/output
 *    counts). A few models are also checked against facts established with
 *    the Python onnx package (see the table `facts`).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "corpus.h"
#include "driver/info.h"
#include "ir/ir.h"
#include "io/load.h"
#include "onnx.pb-c.h"
#include "t.h"

/* ==== a strict JSON parser ============================================ */

#define JSON_MAX_DEPTH 64

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JKind;

/* A parsed JSON value. Strings are decoded to UTF-8 (may hold NUL: use
 * len); numbers keep their text. Owned by the tree; free with jv_free. */
typedef struct JVal JVal;
struct JVal {
    JKind kind;
    bool b;
    char *text;     /* J_STR: decoded; J_NUM: as written */
    size_t len;
    size_t n;       /* members of J_ARR / J_OBJ */
    char **keys;    /* J_OBJ: decoded keys (NUL-terminated) */
    JVal **kids;
};

typedef struct JParser {
    const unsigned char *p, *end;
    int depth;
    char err[128];
} JParser;

/* A growable byte string for decoded text. */
typedef struct TBuf {
    char *s;
    size_t len, cap;
} TBuf;

static void tbuf_add(TBuf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s)
            abort();
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void jv_free(JVal *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jv_free(v->kids[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->kids);
    free(v->keys);
    free(v->text);
    free(v);
}

/* Records the first error with its byte offset; returns NULL. */
static JVal *jp_fail(JParser *jp, const unsigned char *start, const char *msg)
{
    if (!jp->err[0])
        snprintf(jp->err, sizeof jp->err, "%s at byte %zu", msg,
                 (size_t)(jp->p - start));
    return NULL;
}

static void jp_ws(JParser *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
                               *jp->p == '\n' || *jp->p == '\r'))
        jp->p++;
}

static JVal *jv_new(JKind k)
{
    JVal *v = calloc(1, sizeof *v);
    if (!v)
        abort();
    v->kind = k;
    return v;
}

/* Appends a member (key may be NULL for arrays); takes ownership. */
static void jv_push(JVal *c, char *key, JVal *kid)
{
    c->kids = realloc(c->kids, (c->n + 1) * sizeof *c->kids);
    if (!c->kids)
        abort();
    if (c->kind == J_OBJ) {
        c->keys = realloc(c->keys, (c->n + 1) * sizeof *c->keys);
        if (!c->keys)
            abort();
        c->keys[c->n] = key;
    }
    c->kids[c->n++] = kid;
}

/* Length of the valid UTF-8 sequence at p, or 0 (overlong forms,
 * surrogates, > U+10FFFF, truncation and stray bytes are invalid). */
static size_t t_utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t avail = (size_t)(end - p), n;
    unsigned c = p[0], lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Reads 4 hex digits after "\u"; -1 when they are not there. */
static long jp_hex4(JParser *jp)
{
    long v = 0;
    if (jp->end - jp->p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        int c = *jp->p++, d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static void utf8_put(TBuf *b, unsigned long cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xc0 | (cp >> 6));
        u[1] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xe0 | (cp >> 12));
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xf0 | (cp >> 18));
        u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    tbuf_add(b, u, n);
}

/* Decodes the escape after a backslash into b; false when malformed.
 * A \u escape of a surrogate must be a high one followed by a low one. */
static bool jp_escape(JParser *jp, TBuf *b)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (jp->p >= jp->end)
        return false;
    int c = *jp->p++;
    const char *hit = c ? strchr(from, c) : NULL;
    if (hit) {
        tbuf_add(b, &to[hit - from], 1);
        return true;
    }
    if (c != 'u')
        return false;
    long cp = jp_hex4(jp);
    if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
        return false;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (jp->end - jp->p < 2 || jp->p[0] != '\\' || jp->p[1] != 'u')
            return false;
        jp->p += 2;
        long lo = jp_hex4(jp);
        if (lo < 0xdc00 || lo > 0xdfff)
            return false;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    utf8_put(b, (unsigned long)cp);
    return true;
}

/* Parses a string at jp->p (which is '"') into a new J_STR value. */
static JVal *jp_string(JParser *jp, const unsigned char *start)
{
    TBuf b = {0};
    jp->p++;
    tbuf_add(&b, "", 0);
    for (;;) {
        if (jp->p >= jp->end) {
            free(b.s);
            return jp_fail(jp, start, "unterminated string");
        }
        unsigned c = *jp->p;
        if (c == '"') {
            jp->p++;
            break;
        }
        if (c < 0x20) {
            free(b.s);
            return jp_fail(jp, start, "control character in string");
        }
        if (c == '\\') {
            jp->p++;
            if (!jp_escape(jp, &b)) {
                free(b.s);
                return jp_fail(jp, start, "bad escape");
            }
            continue;
        }
        size_t n = t_utf8_len(jp->p, jp->end);
        if (!n) {
            free(b.s);
            return jp_fail(jp, start, "invalid UTF-8");
        }
        tbuf_add(&b, jp->p, n);
        jp->p += n;
    }
    JVal *v = jv_new(J_STR);
    v->text = b.s;
    v->len = b.len;
    return v;
}

static bool is_digit(const unsigned char *p, const unsigned char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* number = [ "-" ] int [ frac ] [ exp ]; int = "0" / digit1-9 *DIGIT */
static JVal *jp_number(JParser *jp, const unsigned char *start)
{
    const unsigned char *s = jp->p;
    if (jp->p < jp->end && *jp->p == '-')
        jp->p++;
    if (!is_digit(jp->p, jp->end))
        return jp_fail(jp, start, "bad number");
    if (*jp->p == '0')
        jp->p++;
    else
        while (is_digit(jp->p, jp->end))
            jp->p++;
    if (jp->p < jp->end && *jp->p == '.') {
        jp->p++;
        if (!is_digit(jp->p, jp->end))
            return jp_fail(jp, start, "bad fraction");
        while (is_digit(jp->p, jp->end))
            jp->p++;
    }
    if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
        jp->p++;
        if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
            jp->p++;
        if (!is_digit(jp->p, jp->end))
            return jp_fail(jp, start, "bad exponent");
        while (is_digit(jp->p, jp->end))
            jp->p++;
    }
    JVal *v = jv_new(J_NUM);
    v->len = (size_t)(jp->p - s);
    v->text = malloc(v->len + 1);
    if (!v->text)
        abort();
    memcpy(v->text, s, v->len);
    v->text[v->len] = '\0';
    return v;
}

static JVal *jp_value(JParser *jp, const unsigned char *start);

/* Parses '[' ... ']' or '{' ... '}' at jp->p. */
static JVal *jp_container(JParser *jp, const unsigned char *start)
{
    bool obj = *jp->p == '{';
    char close = obj ? '}' : ']';
    if (++jp->depth > JSON_MAX_DEPTH)
        return jp_fail(jp, start, "nesting too deep");
    jp->p++;
    JVal *c = jv_new(obj ? J_OBJ : J_ARR);
    jp_ws(jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        jp->depth--;
        return c;
    }
    for (;;) {
        char *key = NULL;
        jp_ws(jp);
        if (obj) {
            if (jp->p >= jp->end || *jp->p != '"')
                goto fail_msg;
            JVal *k = jp_string(jp, start);
            if (!k)
                goto fail;
            key = k->text;
            k->text = NULL;
            jv_free(k);
            jp_ws(jp);
            if (jp->p >= jp->end || *jp->p != ':') {
                free(key);
                goto fail_msg;
            }
            jp->p++;
        }
        JVal *kid = jp_value(jp, start);
        if (!kid) {
            free(key);
            goto fail;
        }
        jv_push(c, key, kid);
        jp_ws(jp);
        if (jp->p < jp->end && *jp->p == ',') {
            jp->p++;
            continue;
        }
        if (jp->p < jp->end && *jp->p == close) {
            jp->p++;
            break;
        }
        goto fail_msg;
    }
    jp->depth--;
    return c;
fail_msg:
    jp_fail(jp, start, obj ? "bad object" : "bad array");
fail:
    jv_free(c);
    return NULL;
}

/* Matches the literal word w; a following letter is left for the caller
 * (which then fails on trailing garbage or a missing separator). */
static JVal *jp_literal(JParser *jp, const unsigned char *start,
                        const char *w, JKind k, bool b)
{
    size_t n = strlen(w);
    if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, w, n) != 0)
        return jp_fail(jp, start, "unexpected character");
    jp->p += n;
    JVal *v = jv_new(k);
    v->b = b;
    return v;
}

static JVal *jp_value(JParser *jp, const unsigned char *start)
{
    jp_ws(jp);
    if (jp->p >= jp->end)
        return jp_fail(jp, start, "unexpected end");
    switch (*jp->p) {
    case '{':
    case '[':
        return jp_container(jp, start);
    case '"':
        return jp_string(jp, start);
    case 't':
        return jp_literal(jp, start, "true", J_BOOL, true);
    case 'f':
        return jp_literal(jp, start, "false", J_BOOL, false);
    case 'n':
        return jp_literal(jp, start, "null", J_NULL, false);
    default:
        return jp_number(jp, start);
    }
}

/* Parses exactly one JSON text of len bytes. Returns the tree (caller
 * frees) or NULL with err filled. */
static JVal *json_parse(const char *s, size_t len, char *err, size_t errlen)
{
    JParser jp = {(const unsigned char *)s, (const unsigned char *)s + len,
                  0, {0}};
    const unsigned char *start = jp.p;
    JVal *v = jp_value(&jp, start);
    if (v) {
        jp_ws(&jp);
        if (jp.p != jp.end) {
            jp_fail(&jp, start, "trailing characters");
            jv_free(v);
            v = NULL;
        }
    }
    if (!v && err)
        snprintf(err, errlen, "%s", jp.err);
    return v;
}

static bool json_ok_n(const char *s, size_t len)
{
    JVal *v = json_parse(s, len, NULL, 0);
    jv_free(v);
    return v != NULL;
}

/* ---- lookups --------------------------------------------------------- */

static JVal *jv_get(const JVal *o, const char *key)
{
    if (!o || o->kind != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return o->kids[i];
    return NULL;
}

/* Follows a path of object keys and "#N" array indexes (NULL-terminated
 * list of at most 8). */
static JVal *jv_path(const JVal *v, const char *const *path)
{
    for (int i = 0; v && i < 8 && path[i]; i++) {
        if (path[i][0] == '#') {
            size_t k = strtoul(path[i] + 1, NULL, 10);
            v = v->kind == J_ARR && k < v->n ? v->kids[k] : NULL;
        } else {
            v = jv_get(v, path[i]);
        }
    }
    return (JVal *)v;
}

/* True when v is an integer number; its value in *out. */
static bool jv_int(const JVal *v, int64_t *out)
{
    if (!v || v->kind != J_NUM || strpbrk(v->text, ".eE"))
        return false;
    char *e;
    long long x = strtoll(v->text, &e, 10);
    if (*e)
        return false;
    *out = x;
    return true;
}

static bool jv_is_int(const JVal *v, int64_t want)
{
    int64_t x;
    return jv_int(v, &x) && x == want;
}

static bool jv_is_str(const JVal *v, const char *want)
{
    return v && v->kind == J_STR && v->len == strlen(want) &&
           memcmp(v->text, want, v->len) == 0;
}

static bool jv_is_null(const JVal *v)
{
    return v && v->kind == J_NULL;
}

/* ==== unit checks of the parser ======================================== */

static void check_valid(const char *s)
{
    char err[160] = "";
    JVal *v = json_parse(s, strlen(s), err, sizeof err);
    T_CHECK(v != NULL, "valid JSON refused: %s (%s)", s, err);
    jv_free(v);
}

static void check_invalid_n(const char *s, size_t len)
{
    T_CHECK(!json_ok_n(s, len), "invalid JSON accepted: %.*s", (int)len, s);
}

static void check_invalid(const char *s)
{
    check_invalid_n(s, strlen(s));
}

/* n nested arrays: "[[[...]]]". Caller frees. */
static char *nested(int n)
{
    char *s = malloc((size_t)n * 2 + 1);
    if (!s)
        abort();
    for (int i = 0; i < n; i++) {
        s[i] = '[';
        s[n + i] = ']';
    }
    s[2 * n] = '\0';
    return s;
}

static void unit_valid(void)
{
    static const char *const ok[] = {
        "{}", "[]", "0", "-0", "-0.0e+1", "1E5", "12.5e-3", "true",
        "false", "null", "\"\"", " \t\r\n[ 1 , 2 ]\n",
        "{\"a\" : [1, true, false, null, \"x\", {}], \"b\": {\"c\": []}}",
        "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0000 \\u001F\"",
        "\"\\u00e9\\ud83d\\ude00\\uFFFD\"",
        "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \x7f\"",
        "[-9223372036854775808, 18446744073709551615]",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        check_valid(ok[i]);
    char *deep = nested(JSON_MAX_DEPTH);
    check_valid(deep);
    free(deep);
}

static void unit_invalid(void)
{
    static const char *const bad[] = {
        "", " ", "{", "}", "[", "[1,]", "[,1]", "[1 2]", "{\"a\":1,}",
        "{\"a\" 1}", "{\"a\":}", "{1:2}", "{'a':1}", "{\"a\":1 \"b\":2}",
        "01", "-01", "1.", ".5", "+1", "1e", "1e+", "-", "--1", "0x10",
        "NaN", "Infinity", "-Infinity", "1 2", "[1]]", "[1] x", "{}{}",
        "tru", "nul", "True", "nulls", "\"abc", "\"\\x\"", "\"\\u12\"",
        "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
        "\"\\ud800x\"", "\"a\nb\"", "\"a\tb\"", "\"\x1f\"", "\"\xff\"",
        "\"\xc0\xaf\"", "\"\xc1\xbf\"", "\"\xe0\x80\xaf\"",
        "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
        "\"\xe2\x82\"", "\"\x80\"", "\"\xc3\"", "[\"\xc3\"]", "\"\\\"",
        "[1,\n", "{\"a\":[}", "[}", "{]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        check_invalid(bad[i]);
    check_invalid_n("[1]\0", 4);       /* NUL after the value */
    check_invalid_n("\"a\0b\"", 5);    /* raw NUL in a string */
    check_invalid_n("[1,\0 2]", 7);
    char *deep = nested(JSON_MAX_DEPTH + 1);
    check_invalid(deep);
    free(deep);
}

/* The parser decodes escapes and keeps raw UTF-8; lookups work. */
static void unit_decode(void)
{
    const char *s = "{\"k\\u00e9y\": [1, \"a\\u0000b\\ud83d\\ude00\\n\"],"
                    " \"n\": -42, \"f\": 1.5, \"z\": null}";
    JVal *v = json_parse(s, strlen(s), NULL, 0);
    T_CHECK(v != NULL, "decode sample refused");
    const char *p1[] = {"k\xc3\xa9y", "#1", NULL};
    JVal *str = jv_path(v, p1);
    T_CHECK(str && str->kind == J_STR && str->len == 8 &&
            memcmp(str->text, "a\0b\xf0\x9f\x98\x80\n", 8) == 0,
            "escapes decoded wrongly");
    const char *p2[] = {"k\xc3\xa9y", "#0", NULL};
    T_CHECK(jv_is_int(jv_path(v, p2), 1), "array index lookup");
    T_CHECK(jv_is_int(jv_get(v, "n"), -42), "negative integer");
    T_CHECK(!jv_is_int(jv_get(v, "f"), 1), "1.5 is not an integer");
    T_CHECK(jv_is_null(jv_get(v, "z")), "null member");
    T_CHECK(jv_get(v, "missing") == NULL, "missing key found");
    jv_free(v);
}

/* ==== rendering helpers ================================================ */

typedef void (*RenderFn)(FILE *, const IrModel *, const char *);

/* Renders m with fn into a new buffer (caller frees); *len its size. */
static char *render(RenderFn fn, const IrModel *m, const char *path,
                    size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        abort();
    fn(f, m, path);
    fclose(f);
    *len = n;
    return buf;
}

/* Keys every info JSON object has, with the kind each must be (-1: the
 * kind varies, e.g. a value or null). */
static const struct {
    const char *key;
    int kind;
} top_keys[] = {
    {"path", J_STR},         {"ir_version", -1},     {"ir_variant", -1},
    {"producer", J_OBJ},     {"domain", -1},         {"model_version", -1},
    {"opset_import", J_ARR}, {"graph", -1},          {"nodes_total", J_NUM},
    {"ops_total", J_OBJ},    {"functions", J_ARR},   {"subgraphs", J_NUM},
    {"metadata_props", J_NUM}, {"training_info", J_NUM},
};

/* Checks the shape of an info object: the keys, their kinds, and that
 * the per-op counts add up to the node counts. */
static void check_shape(const JVal *root, const char *what)
{
    T_CHECK(root && root->kind == J_OBJ, "%s: not an object", what);
    if (!root || root->kind != J_OBJ)
        return;
    for (size_t i = 0; i < sizeof top_keys / sizeof *top_keys; i++) {
        JVal *v = jv_get(root, top_keys[i].key);
        T_CHECK(v && (top_keys[i].kind < 0 || (int)v->kind == top_keys[i].kind),
                "%s: key \"%s\" missing or of the wrong kind", what,
                top_keys[i].key);
    }
    const JVal *g = jv_get(root, "graph");
    const JVal *ops[2] = {jv_get(g, "ops"), jv_get(root, "ops_total")};
    const JVal *cnt[2] = {jv_get(g, "nodes"), jv_get(root, "nodes_total")};
    for (int k = 0; k < 2; k++) {
        if (!ops[k] || ops[k]->kind != J_OBJ)
            continue;
        int64_t sum = 0, x, want;
        for (size_t d = 0; d < ops[k]->n; d++)
            for (size_t o = 0; o < ops[k]->kids[d]->n; o++)
                if (jv_int(ops[k]->kids[d]->kids[o], &x))
                    sum += x;
        T_CHECK(jv_int(cnt[k], &want) && want == sum,
                "%s: op counts (%" PRId64 ") do not add up to %s", what, sum,
                k ? "nodes_total" : "graph.nodes");
    }
}

/* ==== a hand-built model with hostile strings ========================= */

#define HOSTILE "q\"b\\c\n\x01\x1f\x7f" "\xc3\xa9" "\xff" "\xc0\xaf" \
                "\xed\xa0\x80" "\xf0\x9f\x98\x80" "\xe2\x82"
/* What HOSTILE must decode to: each invalid byte one U+FFFD. */
#define FFFD "\xef\xbf\xbd"
#define HOSTILE_DECODED "q\"b\\c\n\x01\x1f\x7f" "\xc3\xa9" FFFD FFFD FFFD \
                        FFFD FFFD FFFD "\xf0\x9f\x98\x80" FFFD FFFD

static IrType *type_new(IrTypeKind k, IrType *elem)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = k;
    t->elem = elem;
    return t;
}

static IrType *type_tensor_noshape(IrTypeKind k, int32_t dtype)
{
    IrType *t = type_new(k, NULL);
    t->has_elem_type = true;
    t->elem_type = dtype;
    return t;
}

/* tensor(float) of shape [2, HOSTILE, ?]. */
static IrType *type_hostile_shape(void)
{
    int64_t dims[3] = {2, -1, -1};
    IrType *t = ir_type_tensor(1, 3, dims);
    if (t && t->shape && t->shape->rank == 3) {
        t->shape->dims[1].kind = IR_DIM_PARAM;
        t->shape->dims[1].param = mem_strdup(HOSTILE);
        t->shape->dims[2].kind = IR_DIM_UNSET;
    }
    return t;
}

static IrNode *add_node(IrGraph *g, const char *op, const char *domain,
                        const char *in, const char *out)
{
    IrError err = {{0}};
    const char *ins[1] = {in}, *outs[1] = {out};
    IrNode *n = ir_node_new(g, NULL, op, domain, out, in ? 1 : 0, ins, 1,
                            outs, &err);
    T_CHECK(n != NULL, "ir_node_new(%s): %s", op, err.msg);
    return n;
}

/* A graph-valued attribute holding a subgraph of `g` with one node. */
static void add_subgraph_attr(IrNode *n, const char *name)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->has_type = true;
    a->type = 5; /* GRAPH */
    a->g = ir_graph_new(n->graph);
    a->g->owner = n;
    a->g->name = mem_strdup(name);
    add_node(a->g, "Constant", "", NULL, "c_sub");
    ir_node_set_attr(n, a);
}

static IrModel *build_hostile(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 0x103;
    m->producer_name = mem_strdup(HOSTILE);
    m->domain = mem_strdup("");
    ir_model_set_opset(m, "", 9);
    ir_model_set_opset(m, "com.example", 2);

    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup(HOSTILE);
    ir_graph_add_input(g, "x", type_hostile_shape());
    ir_graph_add_input(g, "s", type_new(IR_TYPE_SEQUENCE,
                              type_tensor_noshape(IR_TYPE_TENSOR, 1)));
    IrType *map = type_new(IR_TYPE_MAP, type_tensor_noshape(IR_TYPE_TENSOR, 1));
    map->has_key_type = true;
    map->key_type = 7; /* INT64 */
    ir_graph_add_input(g, "m", map);
    ir_graph_add_input(g, "o", type_new(IR_TYPE_OPTIONAL,
                              type_new(IR_TYPE_SEQUENCE,
                                       type_tensor_noshape(IR_TYPE_TENSOR, 6))));
    ir_graph_add_input(g, "sp", type_tensor_noshape(IR_TYPE_SPARSE_TENSOR, 1));
    IrType *opq = type_new(IR_TYPE_OPAQUE, NULL);
    opq->opaque_domain = mem_strdup("d");
    opq->opaque_name = mem_strdup("n\x02");
    ir_graph_add_input(g, HOSTILE, opq);
    ir_graph_add_input(g, "u", type_tensor_noshape(IR_TYPE_TENSOR, 1));
    ir_graph_add_input(g, "w", type_tensor_noshape(IR_TYPE_TENSOR, 9999));

    add_node(g, "Relu", "", "x", "r1");
    add_node(g, "Relu", "ai.onnx", "r1", "r2");
    add_node(g, HOSTILE, HOSTILE, "r2", "r3");
    IrNode *ifn = add_node(g, "If", NULL, "r3", "r4");
    if (ifn) {
        add_subgraph_attr(ifn, "then_branch");
        add_subgraph_attr(ifn, "else_branch");
    }
    IrValue *out = ir_graph_find_local(g, "r4");
    if (out)
        ir_graph_add_output(g, out, type_tensor_noshape(IR_TYPE_TENSOR, 1));

    float w[4] = {1, 2, 3, 4};
    int64_t d4[1] = {4}, d2[1] = {2};
    ir_graph_add_init(g, ir_tensor_new("w", 1, 1, d4, w, sizeof w));
    IrSparse *sp = mem_alloc(sizeof *sp);
    int64_t idx[2] = {0, 3};
    sp->values = ir_tensor_new("sv", 1, 1, d2, w, 2 * sizeof(float));
    sp->indices = ir_tensor_new("si", 7, 1, d2, idx, sizeof idx);
    sp->ndims = 1;
    sp->dims = mem_array(1, sizeof *sp->dims);
    sp->dims[0] = 4;
    ir_ptrlist_push(&g->sparse_inits, sp);

    m->n_functions = 1;
    m->functions = mem_array(1, sizeof *m->functions);
    IrFunction *fn = m->functions[0] = mem_alloc(sizeof *fn);
    fn->name = mem_strdup(HOSTILE);
    fn->domain = mem_strdup("local");
    fn->body = ir_graph_new(NULL);
    fn->body->is_function = true;
    add_node(fn->body, "Neg", "", "a", "b");
    add_node(fn->body, "Neg", "", "b", "c");

    m->meta.n = 1;
    m->meta.p = mem_array(1, sizeof *m->meta.p);
    m->meta.p[0].key = mem_strdup(HOSTILE);
    m->meta.p[0].value = mem_strdup("v");

    m->n_training = 1;
    m->training = mem_array(1, sizeof *m->training);
    m->training[0].algorithm = ir_graph_new(NULL);
    add_node(m->training[0].algorithm, "Sub", "", "p", "q");
    return m;
}

/* Expected values of the hand-built model, as paths and values. */
static void check_hostile_values(const JVal *r)
{
    const char *p_prod[] = {"producer", "name", NULL};
    const char *p_pver[] = {"producer", "version", NULL};
    const char *p_gname[] = {"graph", "name", NULL};
    const char *p_dim[] = {"graph", "inputs", "#0", "shape", "#1", NULL};
    const char *p_dim0[] = {"graph", "inputs", "#0", "shape", "#0", NULL};
    const char *p_dim2[] = {"graph", "inputs", "#0", "shape", "#2", NULL};
    const char *p_relu[] = {"graph", "ops", "ai.onnx", "Relu", NULL};
    const char *p_evil[] = {"graph", "ops", HOSTILE_DECODED, HOSTILE_DECODED,
                            NULL};
    const char *p_const[] = {"ops_total", "ai.onnx", "Constant", NULL};
    const char *p_neg[] = {"ops_total", "ai.onnx", "Neg", NULL};
    const char *p_sub[] = {"ops_total", "ai.onnx", "Sub", NULL};
    const char *p_init[] = {"graph", "initializers", "bytes", NULL};
    const char *p_initn[] = {"graph", "initializers", "count", NULL};
    const char *p_sp[] = {"graph", "sparse_initializers", "bytes", NULL};
    const char *p_spn[] = {"graph", "sparse_initializers", "count", NULL};
    const char *p_fn[] = {"functions", "#0", "name", NULL};
    const char *p_fnn[] = {"functions", "#0", "nodes", NULL};
    const char *p_fno[] = {"functions", "#0", "overload", NULL};
    const char *p_os0[] = {"opset_import", "#0", "domain", NULL};
    const char *p_os1[] = {"opset_import", "#1", "version", NULL};

    T_CHECK(jv_is_str(jv_path(r, p_prod), HOSTILE_DECODED),
            "hostile producer name not decoded as expected");
    T_CHECK(jv_is_null(jv_path(r, p_pver)), "absent producer version not null");
    T_CHECK(jv_is_str(jv_path(r, p_gname), HOSTILE_DECODED), "graph name");
    T_CHECK(jv_is_str(jv_get(r, "domain"), ""), "empty domain is \"\"");
    T_CHECK(jv_is_null(jv_get(r, "model_version")), "model_version null");
    T_CHECK(jv_is_int(jv_get(r, "ir_version"), 259), "ir_version 259");
    T_CHECK(jv_is_str(jv_get(r, "ir_variant"), info_ir_variant(0x103)),
            "ir_variant of 0x103");
    T_CHECK(jv_is_str(jv_path(r, p_os0), "ai.onnx"), "opset \"\" as ai.onnx");
    T_CHECK(jv_is_int(jv_path(r, p_os1), 2), "second opset version");
    T_CHECK(jv_is_str(jv_path(r, p_dim), HOSTILE_DECODED), "dim_param");
    T_CHECK(jv_is_int(jv_path(r, p_dim0), 2), "dim value");
    T_CHECK(jv_is_null(jv_path(r, p_dim2)), "unset dim is null");
    T_CHECK(jv_is_int(jv_path(r, p_relu), 2), "\"\" and ai.onnx merge");
    T_CHECK(jv_is_int(jv_path(r, p_evil), 1), "hostile op counted");
    T_CHECK(jv_is_int(jv_get(jv_get(r, "graph"), "nodes"), 4), "main nodes");
    T_CHECK(jv_is_int(jv_get(r, "nodes_total"), 9),
            "nodes_total: 4 main + 2 subgraph + 2 function + 1 training");
    T_CHECK(jv_is_int(jv_path(r, p_const), 2), "subgraph nodes in total");
    T_CHECK(jv_is_int(jv_path(r, p_neg), 2), "function nodes in total");
    T_CHECK(jv_is_int(jv_path(r, p_sub), 1), "training nodes in total");
    T_CHECK(jv_is_int(jv_get(r, "subgraphs"), 2), "subgraphs");
    T_CHECK(jv_is_int(jv_path(r, p_initn), 1), "initializer count");
    T_CHECK(jv_is_int(jv_path(r, p_init), 16), "initializer bytes");
    T_CHECK(jv_is_int(jv_path(r, p_spn), 1), "sparse count");
    T_CHECK(jv_is_int(jv_path(r, p_sp), 24), "sparse bytes (8 + 16)");
    T_CHECK(jv_is_str(jv_path(r, p_fn), HOSTILE_DECODED), "function name");
    T_CHECK(jv_is_int(jv_path(r, p_fnn), 2), "function nodes");
    T_CHECK(jv_is_null(jv_path(r, p_fno)), "absent overload is null");
    T_CHECK(jv_is_int(jv_get(r, "metadata_props"), 1), "metadata_props");
    T_CHECK(jv_is_int(jv_get(r, "training_info"), 1), "training_info");

    static const struct {
        const char *type, *elem;
    } in[] = {
        {"tensor(float)", "FLOAT"}, {"seq(tensor(float))", NULL},
        {"map(int64,tensor(float))", NULL},
        {"optional(seq(tensor(int32)))", NULL},
        {"sparse_tensor(float)", "FLOAT"}, {"opaque(d,n\x02)", NULL},
        {"tensor(float)", "FLOAT"},
    };
    const JVal *ins = jv_get(jv_get(r, "graph"), "inputs");
    T_CHECK(ins && ins->kind == J_ARR && ins->n == 8, "8 graph inputs");
    for (size_t i = 0; ins && i < ins->n && i < 7; i++) {
        const JVal *e = ins->kids[i];
        T_CHECK(jv_is_str(jv_get(e, "type"), in[i].type),
                "input %zu: type is not %s", i, in[i].type);
        T_CHECK(in[i].elem ? jv_is_str(jv_get(e, "elem_type"), in[i].elem)
                           : jv_is_null(jv_get(e, "elem_type")),
                "input %zu: elem_type", i);
    }
    if (ins && ins->n == 8) {
        T_CHECK(jv_is_str(jv_get(ins->kids[5], "name"), HOSTILE_DECODED),
                "hostile input name");
        T_CHECK(jv_is_null(jv_get(ins->kids[6], "shape")),
                "unranked tensor: shape null");
        T_CHECK(jv_is_null(jv_get(ins->kids[1], "shape")),
                "sequence: shape null");
        T_CHECK(jv_is_int(jv_get(ins->kids[7], "elem_type"), 9999),
                "unknown dtype code kept as a number");
    }
}

/* True when s has a control byte other than newline. */
static bool has_raw_control(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f)
            return true;
    }
    return false;
}

/* True when s is valid UTF-8 throughout. */
static bool is_utf8(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t n = t_utf8_len(p, end);
        if (!n)
            return false;
        p += n;
    }
    return true;
}

/* True when s is printable ASCII without a backslash: the text form
 * shows such a string as it is. */
static bool is_plain(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e || *s == '\\')
            return false;
    return true;
}

static void test_hostile_model(void)
{
    IrModel *m = build_hostile();
    size_t len;
    char *js = render(info_print_json, m, "dir/\"evil\xff\".onnx", &len);
    char err[160] = "";
    JVal *r = json_parse(js, len, err, sizeof err);
    T_CHECK(r != NULL, "hostile model: invalid JSON: %s", err);
    check_shape(r, "hostile model");
    T_CHECK(jv_is_str(jv_get(r, "path"), "dir/\"evil" FFFD "\".onnx"),
            "path escaped");
    if (r)
        check_hostile_values(r);
    jv_free(r);
    free(js);

    char *txt = render(info_print_text, m, "evil\n.onnx", &len);
    T_CHECK(len > 0, "text form empty");
    T_CHECK(!has_raw_control(txt, len), "text form prints raw control bytes");
    T_CHECK(is_utf8(txt, len), "text form prints invalid UTF-8");
    T_CHECK(strstr(txt, "PyTorch/Caffe2") != NULL, "text names the variant");
    T_CHECK(strstr(txt, "seq(tensor(float))") && strstr(txt, "[2,"),
            "text shows types and shapes");
    free(txt);
    ir_model_free(m);
}

/* A model with nothing set: every optional field null, no graph. */
static void test_empty_model(void)
{
    IrModel *m = ir_model_new();
    size_t len;
    char *js = render(info_print_json, m, "empty.onnx", &len);
    JVal *r = json_parse(js, len, NULL, 0);
    T_CHECK(r != NULL, "empty model: invalid JSON: %s", js);
    check_shape(r, "empty model");
    const char *pn[] = {"producer", "name", NULL};
    const JVal *os = jv_get(r, "opset_import");
    T_CHECK(jv_is_null(jv_get(r, "graph")), "empty model: graph not null");
    T_CHECK(jv_is_null(jv_get(r, "ir_version")) &&
            jv_is_null(jv_get(r, "ir_variant")) && jv_is_null(jv_path(r, pn)),
            "empty model: absent fields not null");
    T_CHECK(os && os->kind == J_ARR && os->n == 0, "empty model: opsets");
    T_CHECK(jv_is_int(jv_get(r, "nodes_total"), 0), "empty model: nodes");
    jv_free(r);
    free(js);
    char *txt = render(info_print_text, m, "empty.onnx", &len);
    T_CHECK(len > 0 && strstr(txt, "empty.onnx"), "empty model: text");
    free(txt);
    ir_model_free(m);
}

static void test_variants(void)
{
    T_CHECK(info_ir_variant(0x103) != NULL, "0x103 has a name");
    T_CHECK(info_ir_variant(15) != NULL, "15 is newer than known");
    for (int v = 1; v <= 14; v++)
        T_CHECK(info_ir_variant(v) == NULL, "IR %d is a plain version", v);
}

/* ==== the corpus ====================================================== */

/* protobuf-c's decoding of the file, or NULL when it cannot be read or
 * decoded. *buf gets the file's bytes or NULL; the caller frees both. */
static Onnx__ModelProto *unpack_file(const char *path, uint8_t **buf)
{
    size_t len = 0;
    *buf = NULL;
    if (corpus_read_all(path, buf, &len) != 0)
        return NULL;
    return onnx__model_proto__unpack(NULL, len, *buf);
}

/* Compares the JSON with protobuf-c's own decoding of the file (a reader
 * that shares nothing with src/io/load.c). */
static void crosscheck_proto(const char *path, const JVal *r)
{
    uint8_t *buf;
    Onnx__ModelProto *mp = unpack_file(path, &buf);
    T_CHECK(mp != NULL, "%s: protobuf-c cannot decode it", path);
    if (!mp) {
        free(buf);
        return;
    }
    T_CHECK(mp->has_ir_version ? jv_is_int(jv_get(r, "ir_version"), mp->ir_version)
                               : jv_is_null(jv_get(r, "ir_version")),
            "%s: ir_version differs from the file", path);
    const char *pn[] = {"producer", "name", NULL};
    T_CHECK(mp->producer_name ? jv_is_str(jv_path(r, pn), mp->producer_name)
                              : jv_is_null(jv_path(r, pn)),
            "%s: producer name differs from the file", path);
    const JVal *os = jv_get(r, "opset_import");
    T_CHECK(os && os->kind == J_ARR && os->n == mp->n_opset_import,
            "%s: opset_import count differs", path);
    for (size_t i = 0; os && i < os->n && i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        const char *dom = o->domain && *o->domain ? o->domain : "ai.onnx";
        T_CHECK(jv_is_str(jv_get(os->kids[i], "domain"), dom) &&
                (o->has_version ? jv_is_int(jv_get(os->kids[i], "version"), o->version)
                                : jv_is_null(jv_get(os->kids[i], "version"))),
                "%s: opset %zu differs from the file", path, i);
    }
    const JVal *g = jv_get(r, "graph");
    const Onnx__GraphProto *gp = mp->graph;
    if (gp) {
        const JVal *ins = jv_get(g, "inputs"), *outs = jv_get(g, "outputs");
        const char *ic[] = {"initializers", "count", NULL};
        T_CHECK(jv_is_int(jv_get(g, "nodes"), (int64_t)gp->n_node),
                "%s: node count differs from the file", path);
        T_CHECK(jv_is_int(jv_path(g, ic), (int64_t)gp->n_initializer),
                "%s: initializer count differs", path);
        T_CHECK(ins && ins->n == gp->n_input && outs && outs->n == gp->n_output,
                "%s: input/output counts differ", path);
        for (size_t i = 0; ins && i < ins->n && i < gp->n_input; i++)
            T_CHECK(gp->input[i]->name
                        ? jv_is_str(jv_get(ins->kids[i], "name"), gp->input[i]->name)
                        : jv_is_null(jv_get(ins->kids[i], "name")),
                    "%s: input %zu name differs", path, i);
    } else {
        T_CHECK(jv_is_null(g), "%s: absent graph not null", path);
    }
    T_CHECK(jv_is_int(jv_get(r, "metadata_props"), (int64_t)mp->n_metadata_props) &&
            jv_is_int(jv_get(r, "training_info"), (int64_t)mp->n_training_info),
            "%s: metadata/training counts differ", path);
    const JVal *fns = jv_get(r, "functions");
    T_CHECK(fns && fns->n == mp->n_functions, "%s: function count differs", path);
    onnx__model_proto__free_unpacked(mp, NULL);
    free(buf);
}

/* Loads one model and checks both renderings. Returns the parsed JSON
 * (caller frees) for fact checks, or NULL. */
static JVal *check_model(const char *path)
{
    LoadOptions opt = {.skip_external = 1};
    IrModel *m = NULL;
    IrError err = {{0}};
    if (load_model_file(path, &opt, &m, &err) != 0) {
        T_CHECK(0, "%s: load failed: %s", path, err.msg);
        return NULL;
    }
    size_t len;
    char *js = render(info_print_json, m, path, &len);
    char perr[160] = "";
    JVal *r = json_parse(js, len, perr, sizeof perr);
    T_CHECK(r != NULL, "%s: invalid JSON: %s", path, perr);
    check_shape(r, path);
    T_CHECK(jv_is_str(jv_get(r, "path"), path), "%s: path", path);

    char *txt = render(info_print_text, m, path, &len);
    T_CHECK(len > 0, "%s: empty text", path);
    const char *prod = m->producer_name;
    if (prod && *prod && is_plain(prod))
        T_CHECK(strstr(txt, prod) != NULL, "%s: text lacks producer", path);
    free(txt);
    free(js);
    ir_model_free(m);
    if (r)
        crosscheck_proto(path, r);
    return r;
}

/* Facts about corpus models, established with Debian's python3-onnx 1.12
 * (onnx.load + walking the protos), not with this project. */
enum { F_INT, F_STR, F_NULL, F_LEN };
static const struct Fact {
    int root;            /* 0 backend data, 1 ../shared/models */
    const char *model;
    const char *path[8];
    int kind;
    int64_t i;
    const char *s;
} facts[] = {
    {0, "node/test_abs", {"graph", "ops", "ai.onnx", "Abs"}, F_INT, 1, 0},
    {0, "node/test_abs", {"ir_version"}, F_INT, 7, 0},
    {0, "node/test_abs", {"opset_import", "#0", "version"}, F_INT, 13, 0},
    {0, "node/test_abs", {"opset_import"}, F_LEN, 1, 0},
    {0, "node/test_abs", {"producer", "name"}, F_STR, 0, "backend-test"},
    {0, "node/test_abs", {"producer", "version"}, F_NULL, 0, 0},
    {0, "node/test_abs", {"domain"}, F_NULL, 0, 0},
    {0, "node/test_abs", {"model_version"}, F_NULL, 0, 0},
    {0, "node/test_abs", {"ir_variant"}, F_NULL, 0, 0},
    {0, "node/test_abs", {"graph", "name"}, F_STR, 0, "test_abs"},
    {0, "node/test_abs", {"graph", "inputs", "#0", "name"}, F_STR, 0, "x"},
    {0, "node/test_abs", {"graph", "inputs", "#0", "type"}, F_STR, 0, "tensor(float)"},
    {0, "node/test_abs", {"graph", "inputs", "#0", "elem_type"}, F_STR, 0, "FLOAT"},
    {0, "node/test_abs", {"graph", "inputs", "#0", "shape"}, F_LEN, 3, 0},
    {0, "node/test_abs", {"graph", "inputs", "#0", "shape", "#2"}, F_INT, 5, 0},
    {0, "node/test_abs", {"graph", "outputs", "#0", "name"}, F_STR, 0, "y"},
    {0, "node/test_if", {"graph", "nodes"}, F_INT, 1, 0},
    {0, "node/test_if", {"nodes_total"}, F_INT, 3, 0},
    {0, "node/test_if", {"subgraphs"}, F_INT, 2, 0},
    {0, "node/test_if", {"ops_total", "ai.onnx", "Constant"}, F_INT, 2, 0},
    {0, "node/test_if", {"graph", "inputs", "#0", "shape"}, F_LEN, 0, 0},
    {0, "node/test_if", {"graph", "outputs", "#0", "shape", "#0"}, F_INT, 5, 0},
    {0, "node/test_loop11", {"nodes_total"}, F_INT, 10, 0},
    {0, "node/test_loop11", {"subgraphs"}, F_INT, 1, 0},
    {0, "node/test_loop11", {"ops_total", "ai.onnx", "Unsqueeze"}, F_INT, 2, 0},
    {0, "node/test_loop11", {"graph", "inputs"}, F_LEN, 3, 0},
    {0, "node/test_loop11", {"graph", "outputs", "#1", "shape", "#0"}, F_INT, 5, 0},
    {0, "node/test_sequence_map_add_1_sequence_1_tensor",
     {"graph", "inputs", "#0", "type"}, F_STR, 0, "seq(tensor(float))"},
    {0, "node/test_sequence_map_add_1_sequence_1_tensor",
     {"graph", "inputs", "#0", "shape"}, F_NULL, 0, 0},
    {0, "node/test_sequence_map_add_1_sequence_1_tensor",
     {"graph", "inputs", "#1", "shape", "#0"}, F_STR, 0, "N"},
    {0, "node/test_sequence_map_add_1_sequence_1_tensor",
     {"nodes_total"}, F_INT, 2, 0},
    {0, "node/test_identity_opt", {"graph", "inputs", "#0", "type"}, F_STR, 0,
     "optional(seq(tensor(float)))"},
    {0, "node/test_identity_opt", {"ir_version"}, F_INT, 8, 0},
    {0, "node/test_string_split_empty_tensor",
     {"graph", "outputs", "#0", "shape", "#1"}, F_NULL, 0, 0},
    {0, "node/test_string_split_empty_tensor",
     {"graph", "outputs", "#0", "shape", "#0"}, F_INT, 0, 0},
    {0, "node/test_string_split_empty_tensor",
     {"graph", "outputs", "#0", "elem_type"}, F_STR, 0, "STRING"},
    {0, "node/test_ai_onnx_ml_binarizer", {"graph", "ops", "ai.onnx.ml", "Binarizer"},
     F_INT, 1, 0},
    {0, "node/test_ai_onnx_ml_binarizer", {"opset_import", "#0", "domain"}, F_STR, 0,
     "ai.onnx.ml"},
    {0, "node/test_ai_onnx_ml_binarizer", {"ir_version"}, F_INT, 3, 0},
    {0, "light/light_resnet50", {"graph", "nodes"}, F_INT, 415, 0},
    {0, "light/light_resnet50", {"graph", "ops", "ai.onnx", "Conv"}, F_INT, 53, 0},
    {0, "light/light_resnet50", {"producer", "name"}, F_STR, 0, "onnx-caffe2"},
    {0, "light/light_resnet50", {"opset_import", "#0", "version"}, F_INT, 9, 0},
    {1, "squeezenet1_1_opset13", {"graph", "initializers", "count"}, F_INT, 52, 0},
    {1, "squeezenet1_1_opset13", {"graph", "initializers", "bytes"}, F_INT, 4941984, 0},
    {1, "squeezenet1_1_opset13", {"graph", "ops", "ai.onnx", "Conv"}, F_INT, 26, 0},
    {1, "squeezenet1_1_opset13", {"producer", "version"}, F_STR, 0, "1.13.0"},
    {1, "squeezenet1_1_opset13", {"graph", "inputs", "#0", "shape", "#2"}, F_INT, 64, 0},
    {1, "lstm_tagger_opset14", {"graph", "nodes"}, F_INT, 317, 0},
    {1, "lstm_tagger_opset14", {"graph", "ops", "ai.onnx", "LSTM"}, F_INT, 2, 0},
    {1, "lstm_tagger_opset14", {"graph", "ops", "ai.onnx", "Constant"}, F_INT, 191, 0},
    {1, "lstm_tagger_opset14", {"graph", "initializers", "bytes"}, F_INT, 354088, 0},
};

static bool fact_holds(const struct Fact *f, const JVal *v)
{
    switch (f->kind) {
    case F_INT: return jv_is_int(v, f->i);
    case F_STR: return jv_is_str(v, f->s);
    case F_NULL: return jv_is_null(v);
    default: return v && v->kind == J_ARR && (int64_t)v->n == f->i;
    }
}

/* Checks the facts of one model; returns how many were checked. */
static size_t check_facts_of(const char *model_dir, int root, const char *model,
                             const JVal *r)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++) {
        const struct Fact *f = &facts[i];
        if (f->root != root || strcmp(f->model, model) != 0)
            continue;
        const JVal *v = jv_path(r, f->path);
        T_CHECK(fact_holds(f, v), "%s: fact %zu (%s.%s...) does not hold",
                model_dir, i, f->path[0], f->path[1] ? f->path[1] : "");
        n++;
    }
    return n;
}

/* The opset version of test_abs straight from the file via protobuf-c. */
static void check_abs_opset(const char *path, const JVal *r)
{
    uint8_t *buf;
    Onnx__ModelProto *mp = unpack_file(path, &buf);
    T_CHECK(mp && mp->n_opset_import == 1 && mp->opset_import[0]->has_version,
            "%s: expected one opset import in the file", path);
    const char *pv[] = {"opset_import", "#0", "version", NULL};
    if (mp && mp->n_opset_import == 1)
        T_CHECK(jv_is_int(jv_path(r, pv), mp->opset_import[0]->version),
                "%s: opset version not the file's", path);
    if (mp)
        onnx__model_proto__free_unpacked(mp, NULL);
    free(buf);
}

/* Loads the models the facts name, from their roots. */
static void check_facts(const char *backend)
{
    const char *models = "../shared/models";
    const char *roots[2] = {backend, corpus_is_dir(models) ? models : NULL};
    size_t checked = 0, wanted = 0;
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++) {
        const struct Fact *f = &facts[i];
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            if (facts[k].root == f->root && !strcmp(facts[k].model, f->model))
                seen = true;
        if (seen || !roots[f->root])
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/model.onnx", roots[f->root], f->model);
        struct stat st;
        if (stat(path, &st) != 0) /* an older data set may lack it */
            continue;
        wanted++;
        JVal *r = check_model(path);
        if (!r)
            continue;
        checked += check_facts_of(path, f->root, f->model, r);
        if (f->root == 0 && !strcmp(f->model, "node/test_abs"))
            check_abs_opset(path, r);
        jv_free(r);
    }
    printf("test_info_json: %zu facts checked on %zu models\n", checked, wanted);
}

static void test_corpus(void)
{
    const char *backend = corpus_backend_root();
    const char *extra[] = {"../shared/models", "testdata"};
    CorpusList l = {0};
    if (backend)
        corpus_walk(backend, &l);
    for (size_t i = 0; i < 2; i++)
        if (corpus_is_dir(extra[i]))
            corpus_walk(extra[i], &l);
    if (!corpus_is_dir(backend))
        T_SKIP("test_info_json: backend data: none found");
    if (l.n == 0) {
        T_SKIP("test_info_json: corpus: no ONNX models found "
               "($ONNX_BACKEND_DATA, ../shared/testdata/onnx-backend, "
               "/usr/share/libonnx-testdata/data, ../shared/models, testdata/)");
        corpus_free(&l);
        return;
    }
    corpus_sort(&l);
    size_t ok = 0;
    for (size_t i = 0; i < l.n; i++) {
        int before = t_failed;
        t_group_begin();
        JVal *r = check_model(l.p[i]);
        if (r && t_failed == before)
            ok++;
        jv_free(r);
        t_group_end();
    }
    printf("test_info_json: %zu models checked, %zu clean\n", l.n, ok);
    corpus_free(&l);
    check_facts(backend);
}

int main(void)
{
    unit_valid();
    unit_invalid();
    unit_decode();
    test_variants();
    test_hostile_model();
    test_empty_model();
    test_corpus();
    return t_done("test_info_json");
}
