/*
 * json.h - a small streaming JSON writer (prefix js_).
 *
 * Used by every --json report (info, check, convert, optimize, batch).
 * Strings from models are untrusted: they are escaped to valid RFC 8259
 * (control bytes as \uXXXX, invalid UTF-8 bytes as U+FFFD). Output is
 * pretty-printed: members of a container each on their own line, except
 * in an "inline" container, whose members follow each other on one line.
 */
#ifndef OC_JSON_H
#define OC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version of the --json reports' schema (docs/json.md): it
 * changes only when a key is removed or changes meaning. */
#define JS_REPORT_SCHEMA 1

#define JS_MAX_DEPTH 32

typedef struct Js {
    FILE *f;
    int depth;
    int indent;                /* levels added to every line (an object
                                  printed to be embedded in an array) */
    bool first[JS_MAX_DEPTH];  /* no member written yet at that depth */
    bool inl[JS_MAX_DEPTH];    /* that container is written on one line */
    bool after_key;            /* a key was just written: no separator */
} Js;

/* Starts a writer on f whose lines are indented `indent` levels. */
void js_init(Js *j, FILE *f, int indent);

/* Opens '{' or '['; inline containers (and all inside them) use one line. */
void js_open(Js *j, char c, bool inl);
void js_close(Js *j, char c);
void js_key(Js *j, const char *k);
/* s as a JSON string, or null when s is NULL. */
void js_string(Js *j, const char *s);
void js_int(Js *j, int64_t v);
void js_uint(Js *j, uint64_t v);
void js_bool(Js *j, bool v);
/* A finite double, shortest form that reads back the same; null when
 * it is not finite (JSON has no infinity or NaN). */
void js_double(Js *j, double v);
void js_null(Js *j);
/* An int64 with presence: the number, or null. */
void js_opt_int(Js *j, bool has, int64_t v);

/* Writes s (len bytes) as a JSON string literal, outside any writer. */
void js_write_strn(FILE *f, const char *s, size_t len);

/* Length of the valid UTF-8 sequence at p (at most `avail` bytes), or 0
 * when the bytes there are not one: overlong forms, surrogates and code
 * points above U+10FFFF are invalid. */
size_t js_utf8_len(const unsigned char *p, size_t avail);

/* The keys every report object starts with: schema (JS_REPORT_SCHEMA),
 * path, command and status, in that order (docs/json.md). */
void js_report_head(Js *j, const char *path, const char *command, const char *status);

#endif
