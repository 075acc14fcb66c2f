/*
 * json.c - the JSON writer (prefix js_; see json.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

size_t js_utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xbf;
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
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

/* ---- JSON writer ----------------------------------------------------- */

/* Writes s (len bytes) as a JSON string literal. */
void js_write_strn(FILE *f, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            i++;
        } else {
            size_t n = js_utf8_len(p + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", f);
                i++;
            } else {
                fwrite(p + i, 1, n, f);
                i += n;
            }
        }
    }
    fputc('"', f);
}

/* Writes s as a JSON string, or null when s is NULL. */
static void js_write_str(FILE *f, const char *s)
{
    if (s)
        js_write_strn(f, s, strlen(s));
    else
        fputs("null", f);
}

/* Writes what goes before a value or key: comma, newline, indent. */
static void js_sep(Js *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0)
        return;
    if (!j->first[j->depth])
        fputc(',', j->f);
    if (j->inl[j->depth]) {
        if (!j->first[j->depth])
            fputc(' ', j->f);
    } else {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth + j->indent; i++)
            fputs("  ", j->f);
    }
    j->first[j->depth] = false;
}

/* Opens '{' or '['; inline containers (and all inside them) use one line. */
void js_open(Js *j, char c, bool inl)
{
    js_sep(j);
    if (j->depth + 1 >= JS_MAX_DEPTH)
        abort(); /* our own nesting is shallow: cannot happen */
    bool outer_inl = j->depth > 0 && j->inl[j->depth];
    fputc(c, j->f);
    j->depth++;
    j->first[j->depth] = true;
    j->inl[j->depth] = inl || outer_inl;
}

void js_close(Js *j, char c)
{
    bool empty = j->first[j->depth], inl = j->inl[j->depth];
    j->depth--;
    if (!empty && !inl) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth + j->indent; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void js_key(Js *j, const char *k)
{
    js_sep(j);
    js_write_str(j->f, k);
    fputs(": ", j->f);
    j->after_key = true;
}

void js_string(Js *j, const char *s)
{
    js_sep(j);
    js_write_str(j->f, s);
}

void js_int(Js *j, int64_t v)
{
    js_sep(j);
    fprintf(j->f, "%" PRId64, v);
}

void js_uint(Js *j, uint64_t v)
{
    js_sep(j);
    fprintf(j->f, "%" PRIu64, v);
}

void js_double(Js *j, double v)
{
    if (!isfinite(v)) {
        js_null(j);
        return;
    }
    js_sep(j);
    char buf[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, j->f);
}

void js_null(Js *j)
{
    js_sep(j);
    fputs("null", j->f);
}

/* An int64 with presence: the number, or null. */
void js_opt_int(Js *j, bool has, int64_t v)
{
    if (has)
        js_int(j, v);
    else
        js_null(j);
}

void js_bool(Js *j, bool v)
{
    js_sep(j);
    fputs(v ? "true" : "false", j->f);
}

void js_init(Js *j, FILE *f, int indent)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->indent = indent;
}

void js_report_head(Js *j, const char *path, const char *command, const char *status)
{
    js_key(j, "schema");
    js_int(j, JS_REPORT_SCHEMA);
    js_key(j, "path");
    js_string(j, path);
    js_key(j, "command");
    js_string(j, command);
    js_key(j, "status");
    js_string(j, status);
}
