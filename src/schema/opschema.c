/*
 * opschema.c - lookups in the generated operator table (prefix os_).
 */
#include "schema/opschema.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int os_domain_max(const char *domain)
{
    domain = ir_domain_norm(domain);
    for (size_t i = 0; i < os_domains_n; i++)
        if (strcmp(os_domains[i].name, domain) == 0)
            return os_domains[i].max_opset;
    return -1;
}

/* Orders table entries by (domain, op). */
static int os_cmp(const char *domain, const char *op, const OsSchema *s)
{
    int c = strcmp(domain, s->domain);
    return c ? c : strcmp(op, s->op);
}

const OsSchema *os_versions(const char *domain, const char *op, size_t *n)
{
    size_t lo = 0, hi = os_table_n;
    domain = ir_domain_norm(domain);
    *n = 0;
    if (!op)
        return NULL;
    /* first entry not below (domain, op) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (os_cmp(domain, op, &os_table[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < os_table_n && os_cmp(domain, op, &os_table[end]) == 0)
        end++;
    *n = end - lo;
    return *n ? &os_table[lo] : NULL;
}

unsigned os_op_flags(const char *domain, const char *op)
{
    size_t n;
    const OsSchema *v = os_versions(domain, op, &n);
    return n ? v[n - 1].flags & ~(unsigned)OS_F_DEPRECATED : 0;
}

const OsSchema *os_find(const char *domain, const char *op, int64_t opset)
{
    size_t n;
    const OsSchema *v = os_versions(domain, op, &n);
    const OsSchema *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (v[i].since <= opset)
            best = &v[i];
    return best;
}

bool os_shape_input(const OsSchema *s, size_t i)
{
    size_t lo = 0, hi = os_shape_in_n;
    while (lo < hi && i < 32) {
        size_t mid = lo + (hi - lo) / 2;
        const OsShapeIn *e = &os_shape_in_table[mid];
        int c = os_cmp(e->domain, e->op, s);
        c = c ? c : (e->since > s->since) - (e->since < s->since);
        if (c == 0)
            return e->mask >> i & 1u;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

const OsAttr *os_attr(const OsSchema *s, const char *name)
{
    size_t lo = 0, hi = s->n_attr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, s->attr[mid].name);
        if (c == 0)
            return &s->attr[mid];
        if (c > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const OsTypeCons *os_tc(const OsSchema *s, const char *var)
{
    for (size_t i = 0; i < s->n_tc; i++)
        if (strcmp(s->tc[i].name, var) == 0)
            return &s->tc[i];
    return NULL;
}

/* Position i among formal params p[0..n), a variadic last one repeating. */
static const OsParam *os_param_at(const OsParam *p, size_t n, size_t i)
{
    if (i < n)
        return &p[i];
    if (n && p[n - 1].variadic)
        return &p[n - 1];
    return NULL;
}

const OsParam *os_in_param(const OsSchema *s, size_t i)
{
    return os_param_at(s->in, s->n_in, i);
}

const OsParam *os_out_param(const OsSchema *s, size_t i)
{
    return os_param_at(s->out, s->n_out, i);
}

/* n within lo..hi (hi < 0: unbounded) and, when mask lists counts, one of
 * them. */
static bool os_count_ok(int lo, int hi, uint32_t mask, size_t n)
{
    if (n < (size_t)(lo > 0 ? lo : 0) || (hi >= 0 && n > (size_t)hi))
        return false;
    return !mask || (n < 32 && (mask >> n & 1u));
}

bool os_in_count_ok(const OsSchema *s, size_t n)
{
    return os_count_ok(s->min_in, s->max_in, s->in_counts, n);
}

bool os_out_count_ok(const OsSchema *s, size_t n)
{
    return os_count_ok(s->min_out, s->max_out, s->out_counts, n);
}

char *os_counts_str(const OsSchema *s, bool outputs, char *buf, size_t cap)
{
    int lo = outputs ? s->min_out : s->min_in, hi = outputs ? s->max_out : s->max_in;
    uint32_t mask = outputs ? s->out_counts : s->in_counts;
    if (!cap)
        return buf;
    buf[0] = '\0';
    if (!mask) {
        if (hi < 0)
            snprintf(buf, cap, "%d or more", lo);
        else if (hi == lo)
            snprintf(buf, cap, "%d", lo);
        else
            snprintf(buf, cap, "%d..%d", lo, hi);
        return buf;
    }
    size_t len = 0;
    for (int k = 0; k < 32 && len < cap; k++) {
        if (!(mask >> k & 1u))
            continue;
        uint32_t later = k < 31 ? mask >> (k + 1) : 0;
        int w = snprintf(buf + len, cap - len, "%s%d", !len ? "" : later ? ", " : " or ", k);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

int32_t os_dtype_from_name(const char *name, size_t len)
{
    for (int32_t d = 1; d < 64; d++) {
        const char *n = ir_dtype_name(d);
        if (!n)
            break;
        if (strlen(n) == len && strncasecmp(n, name, len) == 0)
            return d;
    }
    return 0;
}

/* ---- type strings -------------------------------------------------- */

/* Skips spaces. */
static const char *os_ws(const char *p)
{
    while (*p == ' ')
        p++;
    return p;
}

/* Matches the element type name at *p (up to ',' or ')') against elem
 * (0 = unknown, matches). Advances *p. */
static bool os_match_elem(const char **p, bool has, int32_t elem)
{
    const char *s = os_ws(*p);
    size_t len = strcspn(s, ",) ");
    *p = s + len;
    if (!has || elem == IR_UNDEFINED)
        return true;
    return os_dtype_from_name(s, len) == elem;
}

static bool os_match(const char **p, const IrType *t);

/* Matches "kw(" at *p, advancing past it. */
static bool os_kw(const char **p, const char *kw)
{
    size_t n = strlen(kw);
    if (strncmp(*p, kw, n) == 0 && (*p)[n] == '(') {
        *p += n + 1;
        return true;
    }
    return false;
}

/* Skips one balanced type expression (used when t has no more detail). */
static void os_skip(const char **p)
{
    int depth = 0;
    const char *s = *p;
    for (; *s; s++) {
        if (*s == '(')
            depth++;
        else if (*s == ')') {
            if (depth == 0)
                break;
            depth--;
        } else if (*s == ',' && depth == 0)
            break;
    }
    *p = s;
}

/* Matches the closing ')' at *p. */
static bool os_close(const char **p)
{
    *p = os_ws(*p);
    if (**p != ')')
        return false;
    (*p)++;
    return true;
}

/* A map: "map(KEY, VALUE)". */
static bool os_match_map(const char **p, const IrType *t)
{
    bool ok = t->kind == IR_TYPE_MAP;
    ok = os_match_elem(p, ok && t->has_key_type, ok ? t->key_type : 0) && ok;
    *p = os_ws(*p);
    if (**p != ',')
        return false;
    (*p)++;
    *p = os_ws(*p);
    if (ok && t->elem)
        ok = os_match(p, t->elem);
    else
        os_skip(p);
    return os_close(p) && ok;
}

/* Matches one type expression at *p against t, advancing *p past it. */
static bool os_match(const char **p, const IrType *t)
{
    bool ok;
    *p = os_ws(*p);
    if (os_kw(p, "tensor")) {
        ok = t->kind == IR_TYPE_TENSOR;
        ok = os_match_elem(p, ok && t->has_elem_type, ok ? t->elem_type : 0) && ok;
        return os_close(p) && ok;
    }
    if (os_kw(p, "sparse_tensor")) {
        ok = t->kind == IR_TYPE_SPARSE_TENSOR;
        ok = os_match_elem(p, ok && t->has_elem_type, ok ? t->elem_type : 0) && ok;
        return os_close(p) && ok;
    }
    if (os_kw(p, "seq") || os_kw(p, "optional")) {
        IrTypeKind want = (*p)[-2] == 'q' ? IR_TYPE_SEQUENCE : IR_TYPE_OPTIONAL;
        ok = t->kind == want;
        if (ok && t->elem)
            ok = os_match(p, t->elem);
        else
            os_skip(p);
        return os_close(p) && ok;
    }
    if (os_kw(p, "map"))
        return os_match_map(p, t);
    /* a bare element name ("float") inside a map means tensor(float) */
    ok = t->kind == IR_TYPE_TENSOR;
    return os_match_elem(p, ok && t->has_elem_type, ok ? t->elem_type : 0) && ok;
}

bool os_type_matches(const char *ts, const IrType *t)
{
    if (!t || t->kind == IR_TYPE_NONE)
        return true;
    const char *p = ts;
    return os_match(&p, t) && *os_ws(p) == '\0';
}

bool os_param_allows(const OsSchema *s, const OsParam *p, const IrType *t)
{
    const OsTypeCons *tc = os_tc(s, p->type);
    if (!tc)
        return os_type_matches(p->type, t);
    for (size_t i = 0; i < tc->n; i++)
        if (os_type_matches(tc->types[i], t))
            return true;
    return false;
}

/* Appends to buf at *at, never past cap. */
static void os_put(char *buf, size_t cap, size_t *at, const char *s)
{
    int k = snprintf(buf + *at, cap - *at, "%s", s);
    if (k > 0)
        *at += (size_t)k < cap - *at ? (size_t)k : cap - *at - 1;
}

static void os_str(const IrType *t, char *buf, size_t cap, size_t *at, int depth)
{
    char low[32];
    const char *kw = NULL;
    if (!t || depth > 16) {
        os_put(buf, cap, at, "?");
        return;
    }
    switch (t->kind) {
    case IR_TYPE_TENSOR: kw = "tensor("; break;
    case IR_TYPE_SPARSE_TENSOR: kw = "sparse_tensor("; break;
    case IR_TYPE_SEQUENCE: kw = "seq("; break;
    case IR_TYPE_OPTIONAL: kw = "optional("; break;
    case IR_TYPE_MAP: kw = "map("; break;
    case IR_TYPE_OPAQUE: os_put(buf, cap, at, "opaque"); return;
    default: os_put(buf, cap, at, "?"); return;
    }
    os_put(buf, cap, at, kw);
    if (t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SPARSE_TENSOR ||
        t->kind == IR_TYPE_MAP) {
        int32_t e = t->kind == IR_TYPE_MAP ? t->key_type : t->elem_type;
        bool has = t->kind == IR_TYPE_MAP ? t->has_key_type : t->has_elem_type;
        const char *n = has ? ir_dtype_name(e) : NULL;
        size_t i = 0;
        for (; n && n[i] && i + 1 < sizeof low; i++)
            low[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] + 32 : n[i]);
        low[i] = '\0';
        os_put(buf, cap, at, n ? low : "?");
        if (t->kind == IR_TYPE_MAP) {
            os_put(buf, cap, at, ", ");
            os_str(t->elem, buf, cap, at, depth + 1);
        }
    } else {
        os_str(t->elem, buf, cap, at, depth + 1);
    }
    os_put(buf, cap, at, ")");
}

char *os_type_str(const IrType *t, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    os_str(t, buf, cap, &at, 0);
    return buf;
}

const char *os_attr_type_name(int type)
{
#define OS_AT_NAME(name, code) [code] = #name,
    static const char *const names[] = {IR_ATTR_TYPES(OS_AT_NAME)};
#undef OS_AT_NAME
    if (type < 0 || (size_t)type >= sizeof names / sizeof names[0])
        return NULL;
    return names[type];
}

int os_type_since(const char *domain, const IrType *t)
{
    const char *d = ir_domain_norm(domain);
    int first = 0;
    for (size_t i = 0; i < os_table_n; i++) {
        const OsSchema *s = &os_table[i];
        if (strcmp(ir_domain_norm(s->domain), d) != 0 || (first && s->since >= first))
            continue;
        bool any = false;
        for (size_t c = 0; c < s->n_tc && !any; c++)
            for (size_t k = 0; k < s->tc[c].n && !any; k++)
                any = os_type_matches(s->tc[c].types[k], t);
        if (any)
            first = s->since;
    }
    return first;
}
