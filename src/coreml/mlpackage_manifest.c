/*
 * mlpackage_manifest.c - a package's Manifest.json (prefix mlp_): written
 * the way coremltools' modelpackage library writes it, read with a small
 * JSON parser of bounded depth and size (the file is untrusted).
 *
 * The manifest: {"fileFormatVersion": "1.0.0", "itemInfoEntries": {ID:
 * {"author", "description", "name", "path"}, ...}, "rootModelIdentifier":
 * ID}; an item's path is relative to the package's Data folder.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "io/load.h"
#include "coreml/mlpackage.h"
#include "coreml/mlpackage_int.h"

/* ---- writing ---------------------------------------------------------------- */

/* An item identifier. coremltools draws random UUIDs; ours are derived
 * from the item's path (FNV-1a, UUID-shaped), so the same model always
 * gives the same bytes. Any string is a valid key for the reader. */
static void mlp_item_id(const char *path, char out[37])
{
    uint64_t h[2] = {0xcbf29ce484222325u, 0x84222325cbf29ce4u};
    for (int k = 0; k < 2; k++)
        for (const char *p = path; *p; p++)
            h[k] = (h[k] ^ (uint8_t)*p) * 0x100000001b3u;
    snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(h[0] >> 32),
             (unsigned)(h[0] >> 16 & 0xffff), (unsigned)(0x8000 | (h[0] & 0x0fff)),
             (unsigned)(0x8000 | (h[1] >> 48 & 0x3fff)),
             (unsigned long long)(h[1] & 0xffffffffffffu));
}

static void mlp_manifest_item(FILE *f, const char *id, const char *desc, const char *name,
                              const char *path, bool last)
{
    fprintf(f, "        \"%s\": {\n", id);
    fprintf(f, "            \"author\": \"com.apple.CoreML\",\n");
    fprintf(f, "            \"description\": \"%s\",\n", desc);
    fprintf(f, "            \"name\": \"%s\",\n", name);
    fprintf(f, "            \"path\": \"%s\"\n", path);
    fprintf(f, "        }%s\n", last ? "" : ",");
}

int mlp_manifest_write(const char *dir, IrError *err)
{
    char model[37], weights[37];
    mlp_item_id(MLP_MODEL_ITEM, model);
    mlp_item_id(MLP_WEIGHTS_ITEM, weights);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return ir_fail(err, "%s: cannot build Manifest.json: %s", dir, strerror(errno));
    fprintf(f, "{\n    \"fileFormatVersion\": \"1.0.0\",\n    \"itemInfoEntries\": {\n");
    mlp_manifest_item(f, model, "CoreML Model Specification", "model.mlmodel",
                      MLP_MODEL_ITEM, false);
    mlp_manifest_item(f, weights, "CoreML Model Weights", "weights", MLP_WEIGHTS_ITEM, true);
    fprintf(f, "    },\n    \"rootModelIdentifier\": \"%s\"\n}\n", model);
    fclose(f);
    char *p = mlp_join(dir, "Manifest.json");
    int rc = mlp_write_file(p, text, len, err);
    free(p);
    free(text);
    return rc;
}

/* ---- a small JSON reader ---------------------------------------------------- */

#define MLP_JSON_DEPTH 16

typedef struct MlpJson {
    char kind;              /* 'o' object, 'a' array, 's' string, 'v' other */
    char *str;              /* 's' */
    size_t n;               /* members of 'o' / 'a' */
    char **keys;            /* 'o' */
    struct MlpJson *kids;
} MlpJson;

typedef struct MlpJp {
    const char *p, *end;
    IrError *err;
} MlpJp;

static void mlp_json_free(MlpJson *j)
{
    for (size_t i = 0; i < j->n; i++) {
        if (j->keys)
            free(j->keys[i]);
        mlp_json_free(&j->kids[i]);
    }
    free(j->keys);
    free(j->kids);
    free(j->str);
}

static void mlp_jp_ws(MlpJp *jp)
{
    while (jp->p < jp->end && *jp->p && strchr(" \t\r\n", *jp->p))
        jp->p++;
}

static int mlp_jp_fail(MlpJp *jp, const char *what)
{
    return ir_fail(jp->err, "%s", what);
}

static int mlp_hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v << 4 | (unsigned)d;
    }
    return 0;
}

static void mlp_utf8(char **o, unsigned cp)
{
    char *q = *o;
    if (cp < 0x80) {
        *q++ = (char)cp;
    } else if (cp < 0x800) {
        *q++ = (char)(0xc0 | cp >> 6);
        *q++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *q++ = (char)(0xe0 | cp >> 12);
        *q++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *q++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *q++ = (char)(0xf0 | cp >> 18);
        *q++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *q++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *q++ = (char)(0x80 | (cp & 0x3f));
    }
    *o = q;
}

/* A string at jp->p (after its opening quote): decoded into a new C
 * string; a NUL (which would cut a name short) is refused. */
static int mlp_jp_string(MlpJp *jp, char **out)
{
    const char *s = jp->p;
    /* the decoded form is never longer than the escaped one */
    char *buf = mem_alloc((size_t)(jp->end - s) + 1), *o = buf;
    while (s < jp->end && *s != '"') {
        if ((unsigned char)*s < 0x20)
            goto bad;
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        if (++s >= jp->end)
            goto bad;
        const char *esc = strchr("\"\\/bfnrt", *s);
        if (esc && *s) {
            static const char rep[] = "\"\\/\b\f\n\r\t";
            *o++ = rep[esc - "\"\\/bfnrt"];
            s++;
            continue;
        }
        unsigned cp, lo;
        if (*s != 'u' || jp->end - s < 5 || mlp_hex4(s + 1, &cp))
            goto bad;
        s += 5;
        if (cp >= 0xd800 && cp < 0xdc00 && jp->end - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
            !mlp_hex4(s + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            s += 6;
        }
        if (!cp || (cp >= 0xd800 && cp < 0xe000))
            goto bad;
        mlp_utf8(&o, cp);
    }
    if (s >= jp->end)
        goto bad;
    *o = 0;
    jp->p = s + 1;
    *out = buf;
    return 0;
bad:
    free(buf);
    return mlp_jp_fail(jp, "a bad string");
}

static int mlp_jp_value(MlpJp *jp, MlpJson *v, int depth);

/* The members of an object or array (after its opening bracket). */
static int mlp_jp_members(MlpJp *jp, MlpJson *v, int depth, bool obj)
{
    char close = obj ? '}' : ']';
    mlp_jp_ws(jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        return 0;
    }
    for (;;) {
        v->kids = mem_grow(v->kids, v->n + 1, sizeof *v->kids);
        memset(&v->kids[v->n], 0, sizeof v->kids[v->n]);
        if (obj) {
            v->keys = mem_grow(v->keys, v->n + 1, sizeof *v->keys);
            v->keys[v->n] = NULL;
        }
        v->n++;
        if (obj) {
            mlp_jp_ws(jp);
            if (jp->p >= jp->end)
                return mlp_jp_fail(jp, "ends early");
            if (*jp->p != '"')
                return mlp_jp_fail(jp, "an object key is not a string");
            jp->p++;
            if (mlp_jp_string(jp, &v->keys[v->n - 1]))
                return -1;
            mlp_jp_ws(jp);
            if (jp->p >= jp->end || *jp->p != ':')
                return mlp_jp_fail(jp, "no ':' after a key");
            jp->p++;
        }
        if (mlp_jp_value(jp, &v->kids[v->n - 1], depth + 1))
            return -1;
        mlp_jp_ws(jp);
        if (jp->p < jp->end && *jp->p == ',') {
            jp->p++;
            continue;
        }
        if (jp->p < jp->end && *jp->p == close) {
            jp->p++;
            return 0;
        }
        return mlp_jp_fail(jp, obj ? "no ',' or '}' in an object" : "no ',' or ']' in an array");
    }
}

static int mlp_jp_value(MlpJp *jp, MlpJson *v, int depth)
{
    if (depth > MLP_JSON_DEPTH)
        return mlp_jp_fail(jp, "nested deeper than 16 levels");
    mlp_jp_ws(jp);
    if (jp->p >= jp->end)
        return mlp_jp_fail(jp, "ends early");
    char c = *jp->p;
    if (c == '{' || c == '[') {
        v->kind = c == '{' ? 'o' : 'a';
        jp->p++;
        return mlp_jp_members(jp, v, depth, c == '{');
    }
    if (c == '"') {
        v->kind = 's';
        jp->p++;
        return mlp_jp_string(jp, &v->str);
    }
    /* numbers, true, false, null: the manifest has none we need; their
     * characters are skipped, and anything else is refused */
    const char *s = jp->p;
    while (jp->p < jp->end && strchr("0123456789+-.eEtrufalsn", *jp->p) && *jp->p)
        jp->p++;
    if (jp->p == s)
        return mlp_jp_fail(jp, "an unexpected character");
    v->kind = 'v';
    return 0;
}

static const MlpJson *mlp_json_get(const MlpJson *o, const char *key, char kind)
{
    if (!o || o->kind != 'o')
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return o->kids[i].kind == kind ? &o->kids[i] : NULL;
    return NULL;
}

bool mlp_safe_relpath(const char *rel)
{
    if (!rel || !*rel || *rel == '/')
        return false;
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += n;
        if (*p == '/')
            p++;
        if (!*p && p[-1] == '/')
            return false;
    }
    return true;
}

/* Version "1.0.0" or older: what this reader (and coremltools) knows. */
static bool mlp_version_ok(const char *v)
{
    int a, b, c;
    char extra;
    if (sscanf(v, "%d.%d.%d%c", &a, &b, &c, &extra) != 3 || a < 0 || b < 0 || c < 0)
        return false;
    return a < 1 || (a == 1 && b == 0 && c == 0);
}

/* Finds the root model's path in a parsed manifest. */
static int mlp_manifest_root(const MlpJson *j, char **model, IrError *err)
{
    const MlpJson *ver = mlp_json_get(j, "fileFormatVersion", 's');
    if (!ver)
        return ir_fail(err, "no fileFormatVersion string");
    if (!mlp_version_ok(ver->str))
        return ir_fail(err, "fileFormatVersion \"%s\" is not 1.0.0 or older", ver->str);
    const MlpJson *root = mlp_json_get(j, "rootModelIdentifier", 's');
    if (!root)
        return ir_fail(err, "no rootModelIdentifier string");
    const MlpJson *items = mlp_json_get(j, "itemInfoEntries", 'o');
    const MlpJson *item = mlp_json_get(items, root->str, 'o');
    if (!item)
        return ir_fail(err, "itemInfoEntries has no object for the root model \"%s\"",
                       root->str);
    const MlpJson *path = mlp_json_get(item, "path", 's');
    if (!path || !mlp_safe_relpath(path->str))
        return ir_fail(err, "item \"%s\": path is missing or leaves the Data folder",
                       root->str);
    *model = mem_strdup(path->str);
    return 0;
}

int mlp_manifest_read(const char *pkg, char **model, IrError *err)
{
    char *path = mlp_join(pkg, "Manifest.json");
    const void *base = NULL;
    size_t len = 0;
    int rc = -1;
    struct stat st;
    if (stat(path, &st)) {
        ir_fail(err, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > MLP_MAX_MANIFEST_BYTES) {
        ir_fail(err, "%s: %llu bytes, more than a manifest's limit of %zu", path,
                (unsigned long long)st.st_size, MLP_MAX_MANIFEST_BYTES);
        goto done;
    }
    if (load_map_readonly(path, &base, &len, err))
        goto done;
    if (!len) {
        ir_fail(err, "%s: empty", path);
        goto done;
    }
    MlpJson j = {0};
    MlpJp jp = {base, (const char *)base + len, err};
    int bad = 0;
    if (mlp_jp_value(&jp, &j, 0))
        bad = -1;
    else if (mlp_jp_ws(&jp), jp.p != jp.end)
        bad = ir_fail(err, "text after the JSON value");
    if (bad)
        mlp_wrap(err, "%s: not valid JSON at byte %zu", path,
                 (size_t)(jp.p - (const char *)base));
    else if (mlp_manifest_root(&j, model, err))
        mlp_wrap(err, "%s", path);
    else
        rc = 0;
    mlp_json_free(&j);
    load_unmap_readonly(base, len);
done:
    free(path);
    return rc;
}
