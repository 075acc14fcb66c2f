/* String ops (ai.onnx): StringConcat-20, StringSplit-20, RegexFullMatch-20,
 * StringNormalizer-10.
 *
 * Subtle points:
 * - StringSplit follows Python's str.split: with a delimiter, every
 *   occurrence splits ("a--b" gives "a", "", "b"; "" gives one empty
 *   string); without one (absent or ""), runs of whitespace (Python's
 *   str.isspace, Unicode spaces included) split and
 *   leading/trailing whitespace gives no empty pieces. maxsplit limits the
 *   splits, the last piece keeping the rest. Y is X's shape plus one axis
 *   as long as the longest split, padded with "".
 * - RegexFullMatch's patterns are RE2 syntax. They are translated to a
 *   POSIX extended regex (glibc regcomp, byte-oriented in the C locale) and
 *   anchored to the whole string. The translation keeps RE2's meaning for
 *   what it accepts: \d \w \s and their negations, classes with escapes,
 *   (?:...), named groups, (?i) and (?s) at the start, lazy quantifiers
 *   (which cannot change whether a full match exists), \A \z \b \B, \Q..\E,
 *   \x escapes; '.' and negated classes match one UTF-8 encoded character,
 *   as in RE2. Unicode classes (\p), non-ASCII characters inside [...],
 *   flags elsewhere and constructs regcomp rejects fail the node.
 * - StringNormalizer: stopwords are removed first (compared after lower-
 *   casing unless is_case_sensitive), then case is changed. Case mapping
 *   covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic (all pairs
 *   there keep their UTF-8 length); other characters are kept. Turkish and
 *   Azeri locales (dotted/dotless i) are refused. When every string is
 *   removed the output is [1] (or [1, 1]) holding "". */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

/* A NUL-terminated malloc'ed copy of n bytes (the tensor will own it). */
static int ev_str_set(EvCtx *c, EvStr *dst, const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        return ev_fail(c, "out of memory");
    if (n)
        memcpy(s, p, n);
    s[n] = 0;
    free(dst->p);
    dst->p = s;
    dst->len = n;
    return 0;
}

static EvValue *ev_str_in(EvCtx *c, size_t i)
{
    EvValue *x = ev_in_tensor(c, i);
    if (x && x->dtype != IR_STRING) {
        ev_fail(c, "input %zu must be a string tensor", i);
        return NULL;
    }
    return x;
}

/* ---- StringConcat ----------------------------------------------------- */

static int ev_string_concat(EvCtx *c)
{
    EvValue *t[2] = {ev_str_in(c, 0), NULL};
    if (!t[0] || !(t[1] = ev_str_in(c, 1)))
        return -1;
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_broadcast_shape(c, 2, t, &rank, dims))
        return -1;
    EvValue *z = ev_out_tensor(c, 0, IR_STRING, rank, dims);
    if (!z)
        return -1;
    EvBcast b;
    ev_bcast_init(&b, 2, t, rank, dims);
    const EvStr *xs = t[0]->data, *ys = t[1]->data;
    EvStr *zs = z->data;
    for (size_t k = 0; k < z->numel; k++) {
        const EvStr *x = &xs[b.off[0]], *y = &ys[b.off[1]];
        size_t n;
        if (!mem_add_size(x->len, y->len, &n) || n == SIZE_MAX)
            return ev_fail(c, "string too long");
        char *s = malloc(n + 1);
        if (!s)
            return ev_fail(c, "out of memory");
        if (x->len)
            memcpy(s, x->p, x->len);
        if (y->len)
            memcpy(s + x->len, y->p, y->len);
        s[n] = 0;
        zs[k].p = s;
        zs[k].len = n;
        ev_bcast_next(&b);
    }
    return 0;
}

/* ---- StringSplit ------------------------------------------------------ */

/* Bytes taken by the whitespace character at p[i] (0 when none): what
 * Python's str.isspace accepts, ASCII and UTF-8 encoded. */
static size_t ev_space_len(const char *p, size_t i, size_t n)
{
    const unsigned char *u = (const unsigned char *)p + i;
    size_t left = n - i;
    if (*u == ' ' || (*u >= '\t' && *u <= '\r') || (*u >= 0x1c && *u <= 0x1f))
        return 1;
    if (left >= 2 && u[0] == 0xc2 && (u[1] == 0x85 || u[1] == 0xa0))
        return 2;
    if (left >= 3 && u[0] == 0xe1 && u[1] == 0x9a && u[2] == 0x80)
        return 3; /* U+1680 */
    if (left >= 3 && u[0] == 0xe2 && u[1] == 0x80 &&
        (u[2] <= 0x8a || u[2] == 0xa8 || u[2] == 0xa9 || u[2] == 0xaf))
        return 3; /* U+2000..200A, 2028, 2029, 202F */
    if (left >= 3 && u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f)
        return 3; /* U+205F */
    if (left >= 3 && u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80)
        return 3; /* U+3000 */
    return 0;
}

/* One piece of a split: [start, start+len) of the source string. */
typedef struct EvPiece {
    size_t start, len;
} EvPiece;

/* Splits s into at most maxsplit+1 pieces (maxsplit < 0: no limit); fills
 * out (when not NULL) and returns the count. */
static size_t ev_split(const EvStr *s, const char *delim, size_t dlen,
                       int64_t maxsplit, EvPiece *out)
{
    const char *p = s->p ? s->p : "";
    size_t n = s->len, count = 0, i = 0;
    if (dlen) {
        size_t start = 0;
        while (i + dlen <= n &&
               (maxsplit < 0 || count < (uint64_t)maxsplit)) {
            if (memcmp(p + i, delim, dlen)) {
                i++;
                continue;
            }
            if (out)
                out[count] = (EvPiece){start, i - start};
            count++;
            i += dlen;
            start = i;
        }
        if (out)
            out[count] = (EvPiece){start, n - start};
        return count + 1;
    }
    for (;;) {
        size_t sp;
        while (i < n && (sp = ev_space_len(p, i, n)))
            i += sp;
        if (i == n)
            return count;
        size_t start = i;
        if (maxsplit >= 0 && count == (uint64_t)maxsplit) {
            /* the rest, trailing whitespace included, as Python does */
            if (out)
                out[count] = (EvPiece){start, n - start};
            return count + 1;
        }
        while (i < n && !ev_space_len(p, i, n))
            i++;
        if (out)
            out[count] = (EvPiece){start, i - start};
        count++;
    }
}

static int ev_string_split(EvCtx *c)
{
    EvValue *x = ev_str_in(c, 0);
    if (!x)
        return -1;
    const char *delim = ev_attr_s_or(c, "delimiter", "");
    if (!delim)
        return ev_fail(c, "bad delimiter attribute");
    const IrAttr *da = ev_attr(c, "delimiter");
    /* the attribute may hold bytes past an embedded NUL */
    size_t dlen = da && da->has_s ? da->s.len : strlen(delim);
    if (da && da->has_s && da->s.len)
        delim = (const char *)da->s.data;
    int64_t maxsplit = ev_attr_i_or(c, "maxsplit", -1);
    if (maxsplit < 0)
        maxsplit = -1;
    const EvStr *xs = x->data;
    size_t width = 0;
    for (size_t k = 0; k < x->numel; k++) {
        size_t n = ev_split(&xs[k], delim, dlen, maxsplit, NULL);
        width = n > width ? n : width;
    }
    if (x->rank + 1 > EV_MAX_RANK || width > INT64_MAX)
        return ev_fail(c, "output too large");
    int64_t dims[EV_MAX_RANK];
    for (size_t d = 0; d < x->rank; d++)
        dims[d] = x->dims[d];
    dims[x->rank] = (int64_t)width;
    EvValue *y = ev_out_tensor(c, 0, IR_STRING, x->rank + 1, dims);
    EvValue *z = y ? ev_out_tensor(c, 1, IR_INT64, x->rank, x->dims) : NULL;
    if (!z)
        return -1;
    EvPiece *pieces = ev_tmp(c, width ? width : 1, sizeof *pieces);
    if (!pieces)
        return -1;
    EvStr *ys = y->data;
    int64_t *zs = z->data;
    for (size_t k = 0; k < x->numel; k++) {
        size_t n = ev_split(&xs[k], delim, dlen, maxsplit, pieces);
        zs[k] = (int64_t)n;
        for (size_t j = 0; j < n; j++)
            if (ev_str_set(c, &ys[k * width + j], xs[k].p + pieces[j].start,
                           pieces[j].len))
                return -1;
    }
    return 0;
}

/* ---- RegexFullMatch: RE2 -> POSIX ERE --------------------------------- */

typedef struct EvRe {
    EvCtx *c;
    const char *p;   /* pattern */
    size_t n, i;     /* its length, read position */
    char *out;       /* translated pattern */
    size_t len, cap;
    bool dotnl;      /* (?s): '.' matches \n too */
    bool failed;
} EvRe;

static int ev_re_fail(EvRe *r, const char *why)
{
    if (!r->failed)
        ev_fail(r->c, "pattern '%.*s' not supported: %s",
                (int)(r->n > 80 ? 80 : r->n), r->p, why);
    r->failed = true;
    return -1;
}

static int ev_re_put(EvRe *r, const char *s, size_t n)
{
    if (r->len + n >= r->cap)
        return ev_re_fail(r, "too long once translated");
    memcpy(r->out + r->len, s, n);
    r->len += n;
    r->out[r->len] = 0;
    return 0;
}

static int ev_re_puts(EvRe *r, const char *s) { return ev_re_put(r, s, strlen(s)); }

/* A multi-byte UTF-8 character, for '.' and negated classes. */
static const char ev_re_utf8_multi[] =
    "[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf][\x80-\xbf]|"
    "[\xf0-\xf4][\x80-\xbf][\x80-\xbf][\x80-\xbf]";

/* An ASCII character set (bit k = byte k), as a POSIX bracket expression
 * that is safe wherever it lands (']' first, '-' last, no "[:"). */
static int ev_re_emit_set(EvRe *r, const bool set[128], bool negate)
{
    bool s[128];
    size_t count = 0;
    for (int k = 0; k < 128; k++) {
        s[k] = (k != 0) && (negate ? !set[k] : set[k]);
        count += s[k];
    }
    if (negate)
        return ev_re_puts(r, "(") || (count && ev_re_emit_set(r, s, false)) ||
               ev_re_puts(r, count ? "|" : "") ||
               ev_re_puts(r, ev_re_utf8_multi) || ev_re_puts(r, ")");
    if (!count)
        return ev_re_fail(r, "empty character class");
    if (count == 1 && s['^'])
        return ev_re_puts(r, "\\^");
    char buf[140];
    size_t n = 0;
    buf[n++] = '[';
    if (s[']'])
        buf[n++] = ']';
    for (int k = 1; k < 128; k++)
        if (s[k] && k != ']' && k != '[' && k != '^' && k != '-')
            buf[n++] = (char)k;
    if (s['['])
        buf[n++] = '[';
    if (s['^'] && n == 1) {
        /* '^' may not come first: put '-' before it */
        buf[n++] = '-';
        buf[n++] = '^';
    } else {
        if (s['^'])
            buf[n++] = '^';
        if (s['-'])
            buf[n++] = '-';
    }
    buf[n++] = ']';
    return ev_re_put(r, buf, n);
}

static void ev_re_range(bool set[128], int lo, int hi)
{
    for (int k = lo; k <= hi && k < 128; k++)
        set[k] = true;
}

/* \d \w \s (and the upper-case negations when neg_ok) as a set. */
static bool ev_re_perl_class(char ch, bool set[128], bool *neg)
{
    bool t[128] = {false};
    switch (ch | 0x20) {
    case 'd':
        ev_re_range(t, '0', '9');
        break;
    case 'w':
        ev_re_range(t, '0', '9');
        ev_re_range(t, 'A', 'Z');
        ev_re_range(t, 'a', 'z');
        t['_'] = true;
        break;
    case 's':
        t[' '] = t['\t'] = t['\n'] = t['\f'] = t['\r'] = true;
        break;
    default:
        return false;
    }
    *neg = ch >= 'A' && ch <= 'Z';
    for (int k = 0; k < 128; k++)
        set[k] = set[k] || t[k];
    return true;
}

static int ev_hex(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch |= 0x20;
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The character escaped after '\' at r->i (already past the '\'):
 * \n \t \r \f \v \a, \xHH, \x{H..}, \0oo, or punctuation. -1 if none. */
static long ev_re_escape_char(EvRe *r)
{
    char ch = r->p[r->i];
    static const char from[] = "ntrfva", to[] = "\n\t\r\f\v\a";
    const char *f = strchr(from, ch);
    if (f && ch) {
        r->i++;
        return to[f - from];
    }
    if (ch == 'x') {
        long v = 0;
        r->i++;
        if (r->i < r->n && r->p[r->i] == '{') {
            size_t j = r->i + 1, digits = 0;
            while (j < r->n && ev_hex(r->p[j]) >= 0 && digits < 8) {
                v = v * 16 + ev_hex(r->p[j++]);
                digits++;
            }
            if (!digits || j >= r->n || r->p[j] != '}' || v > 0x10ffff)
                return -1;
            r->i = j + 1;
            return v;
        }
        if (r->i + 2 > r->n || ev_hex(r->p[r->i]) < 0 ||
            ev_hex(r->p[r->i + 1]) < 0)
            return -1;
        v = ev_hex(r->p[r->i]) * 16 + ev_hex(r->p[r->i + 1]);
        r->i += 2;
        return v;
    }
    if ((ch >= 0x21 && ch <= 0x2f) || (ch >= 0x3a && ch <= 0x40) ||
        (ch >= 0x5b && ch <= 0x60) || (ch >= 0x7b && ch <= 0x7e)) {
        r->i++;
        return (unsigned char)ch;
    }
    return -1;
}

/* A literal code point outside brackets. */
static int ev_re_literal(EvRe *r, long cp)
{
    char b[8];
    size_t n = 0;
    if (cp == 0)
        return ev_re_fail(r, "NUL in pattern");
    if (cp < 0x80) {
        if (strchr(".[]()*+?{}|^$\\", (int)cp))
            b[n++] = '\\';
        b[n++] = (char)cp;
    } else if (cp < 0x800) {
        b[n++] = (char)(0xc0 | (cp >> 6));
        b[n++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        b[n++] = (char)(0xe0 | (cp >> 12));
        b[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[n++] = (char)(0x80 | (cp & 0x3f));
    } else {
        b[n++] = (char)(0xf0 | (cp >> 18));
        b[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[n++] = (char)(0x80 | (cp & 0x3f));
    }
    return ev_re_put(r, b, n);
}

/* Is ASCII byte b in POSIX class k (the order of ev_re_class_names)? */
static const char *const ev_re_class_names[] = {"alnum", "alpha", "digit",
    "lower", "upper", "space", "punct", "xdigit", "word", "blank", "cntrl",
    "graph", "print", "ascii"};

static bool ev_re_in_posix(size_t k, int b)
{
    bool digit = b >= '0' && b <= '9';
    bool alpha = (b | 0x20) >= 'a' && (b | 0x20) <= 'z';
    switch (k) {
    case 0: return digit || alpha;
    case 1: return alpha;
    case 2: return digit;
    case 3: return b >= 'a' && b <= 'z';
    case 4: return b >= 'A' && b <= 'Z';
    case 5: return b == ' ' || (b >= '\t' && b <= '\r');
    case 6: return b > 0x20 && b < 0x7f && !digit && !alpha;
    case 7: return digit || ((b | 0x20) >= 'a' && (b | 0x20) <= 'f');
    case 8: return digit || alpha || b == '_';
    case 9: return b == ' ' || b == '\t';
    case 10: return b < 0x20 || b == 0x7f;
    case 11: return b > 0x20 && b < 0x7f;
    case 12: return b >= 0x20 && b < 0x7f;
    default: return true;
    }
}

/* "[:name:]" at r->i inside a class: merged into set; returns -2. */
static long ev_re_posix_class(EvRe *r, bool set[128])
{
    const size_t n_names = sizeof ev_re_class_names / sizeof ev_re_class_names[0];
    const char *name = r->p + r->i + 2;
    const char *end = NULL;
    for (size_t j = r->i + 2; j + 1 < r->n && !end; j++)
        if (r->p[j] == ':' && r->p[j + 1] == ']')
            end = r->p + j;
    size_t k = n_names;
    if (end)
        for (k = 0; k < n_names; k++)
            if ((size_t)(end - name) == strlen(ev_re_class_names[k]) &&
                !strncmp(name, ev_re_class_names[k], (size_t)(end - name)))
                break;
    if (k == n_names)
        return ev_re_fail(r, "unknown [:class:]");
    for (int b = 0; b < 128; b++)
        set[b] = set[b] || ev_re_in_posix(k, b);
    r->i = (size_t)(end - r->p) + 2;
    return -2;
}

/* One class member (a char, or a \d-like class merged into set); returns
 * the char, -2 after a merged class, -1 on failure. */
static long ev_re_class_atom(EvRe *r, bool set[128])
{
    if (r->i >= r->n)
        return ev_re_fail(r, "unterminated [");
    unsigned char ch = (unsigned char)r->p[r->i];
    if (ch >= 0x80)
        return ev_re_fail(r, "non-ASCII character in [...]");
    if (ch == '[' && r->i + 1 < r->n && r->p[r->i + 1] == ':')
        return ev_re_posix_class(r, set);
    r->i++;
    if (ch != '\\')
        return ch;
    if (r->i >= r->n)
        return ev_re_fail(r, "trailing \\");
    bool neg;
    if (ev_re_perl_class(r->p[r->i], set, &neg)) {
        if (neg)
            return ev_re_fail(r, "\\D, \\W or \\S inside [...]");
        r->i++;
        return -2;
    }
    long cp = ev_re_escape_char(r);
    if (cp < 0)
        return ev_re_fail(r, "unknown escape in [...]");
    if (cp >= 0x80)
        return ev_re_fail(r, "non-ASCII character in [...]");
    return cp;
}

static int ev_re_class(EvRe *r)
{
    bool set[128] = {false}, negate = false;
    r->i++; /* '[' */
    if (r->i < r->n && r->p[r->i] == '^') {
        negate = true;
        r->i++;
    }
    bool first = true;
    for (;;) {
        if (r->i >= r->n)
            return ev_re_fail(r, "unterminated [");
        if (r->p[r->i] == ']' && !first)
            break;
        first = false;
        long lo = ev_re_class_atom(r, set);
        if (lo == -1)
            return -1;
        if (lo == -2)
            continue;
        if (r->i + 1 < r->n && r->p[r->i] == '-' && r->p[r->i + 1] != ']') {
            r->i++;
            long hi = ev_re_class_atom(r, set);
            if (hi == -1)
                return -1;
            if (hi == -2 || hi < lo)
                return ev_re_fail(r, "bad range in [...]");
            ev_re_range(set, (int)lo, (int)hi);
        } else {
            set[lo] = true;
        }
    }
    r->i++; /* ']' */
    return ev_re_emit_set(r, set, negate);
}

/* "{n}", "{n,}" or "{n,m}" at r->i: copied; otherwise a literal '{'. */
static int ev_re_brace(EvRe *r, bool *quant)
{
    size_t j = r->i + 1, digits = 0;
    while (j < r->n && r->p[j] >= '0' && r->p[j] <= '9')
        j++, digits++;
    if (digits && j < r->n && r->p[j] == ',') {
        j++;
        while (j < r->n && r->p[j] >= '0' && r->p[j] <= '9')
            j++;
    }
    if (!digits || j >= r->n || r->p[j] != '}' || j - r->i > 12) {
        *quant = false;
        r->i++;
        return ev_re_puts(r, "\\{");
    }
    *quant = true;
    int rc = ev_re_put(r, r->p + r->i, j + 1 - r->i);
    r->i = j + 1;
    return rc;
}

/* "(?" at r->i: flags at the very start, or a (non-capturing) group. */
static int ev_re_group(EvRe *r, int *cflags)
{
    size_t j = r->i + 2;
    if (j < r->n && r->p[j] == ':') {
        r->i = j + 1;
        return ev_re_puts(r, "(");
    }
    if (j + 1 < r->n && r->p[j] == '<' &&
        (r->p[j + 1] == '=' || r->p[j + 1] == '!'))
        return ev_re_fail(r, "lookbehind (not RE2 syntax)");
    if (j < r->n && (r->p[j] == 'P' || r->p[j] == '<')) {
        const char *end = memchr(r->p + j, '>', r->n - j);
        if (!end)
            return ev_re_fail(r, "bad group name");
        r->i = (size_t)(end - r->p) + 1;
        return ev_re_puts(r, "(");
    }
    bool at_start = r->i == 0;
    for (; j < r->n && r->p[j] != ')'; j++) {
        if (r->p[j] == 'i')
            *cflags |= REG_ICASE;
        else if (r->p[j] == 's')
            r->dotnl = true;
        else
            return ev_re_fail(r, "(?...) other than (?:, named groups "
                                 "and the flags i and s");
    }
    if (j >= r->n || !at_start)
        return ev_re_fail(r, "flags only at the start of the pattern");
    r->i = j + 1;
    return 0;
}

/* "\" at r->i, outside brackets. */
static int ev_re_escape(EvRe *r)
{
    r->i++;
    if (r->i >= r->n)
        return ev_re_fail(r, "trailing \\");
    char ch = r->p[r->i];
    bool set[128] = {false}, neg;
    if (ev_re_perl_class(ch, set, &neg)) {
        r->i++;
        return ev_re_emit_set(r, set, neg);
    }
    switch (ch) {
    case 'A':
        r->i++;
        return ev_re_puts(r, "^");
    case 'z':
        r->i++;
        return ev_re_puts(r, "$");
    case 'b':
    case 'B':
        r->i++;
        return ev_re_puts(r, ch == 'b' ? "\\b" : "\\B");
    case 'Q': {
        size_t start = r->i + 1;
        const char *end = NULL;
        for (size_t j = start; j + 1 < r->n && !end; j++)
            if (r->p[j] == '\\' && r->p[j + 1] == 'E')
                end = r->p + j;
        size_t stop = end ? (size_t)(end - r->p) : r->n;
        for (size_t j = start; j < stop; j++)
            if (ev_re_literal(r, (unsigned char)r->p[j]))
                return -1;
        r->i = end ? stop + 2 : r->n;
        return 0;
    }
    }
    long cp = ev_re_escape_char(r);
    if (cp < 0)
        return ev_re_fail(r, "unknown escape");
    return ev_re_literal(r, cp);
}

/* Translates the whole pattern into r->out, wrapped as ^(...)$. */
static int ev_re_translate(EvRe *r, int *cflags)
{
    bool quant = false; /* the last item was a quantifier */
    if (ev_re_puts(r, "^("))
        return -1;
    while (r->i < r->n && !r->failed) {
        char ch = r->p[r->i];
        bool was_quant = quant;
        quant = false;
        if (ch == '?' && was_quant) {
            r->i++; /* lazy: same full-match answer */
            continue;
        }
        switch (ch) {
        case '\\':
            ev_re_escape(r);
            break;
        case '[':
            ev_re_class(r);
            break;
        case '.':
            r->i++;
            ev_re_puts(r, r->dotnl ? "([^\x80-\xff]|" : "([^\n\x80-\xff]|");
            ev_re_puts(r, ev_re_utf8_multi);
            ev_re_puts(r, ")");
            break;
        case '{':
            ev_re_brace(r, &quant);
            break;
        case '*':
        case '+':
        case '?':
            if (was_quant)
                return ev_re_fail(r, "repeated quantifier");
            quant = true;
            r->i++;
            ev_re_put(r, &ch, 1);
            break;
        case '(':
            if (r->i + 1 < r->n && r->p[r->i + 1] == '?') {
                ev_re_group(r, cflags);
                break;
            }
            /* fall through */
        default:
            if (ch == 0)
                return ev_re_fail(r, "NUL in pattern");
            r->i++;
            ev_re_put(r, &ch, 1);
        }
    }
    if (r->failed || ev_re_puts(r, ")$"))
        return -1;
    return 0;
}

static int ev_regex_full_match(EvCtx *c)
{
    EvValue *x = ev_str_in(c, 0);
    if (!x)
        return -1;
    const IrAttr *pa = ev_attr(c, "pattern");
    if (!pa || !pa->has_s)
        return ev_fail(c, "pattern attribute is required");
    EvRe r = {.c = c, .p = pa->s.data ? (const char *)pa->s.data : "",
              .n = pa->s.len};
    size_t cap;
    if (!mem_mul_size(r.n, 96, &cap) || !mem_add_size(cap, 64, &cap))
        return ev_fail(c, "pattern too long");
    r.cap = cap;
    r.out = ev_tmp(c, cap, 1);
    if (!r.out)
        return -1;
    int cflags = REG_EXTENDED | REG_NOSUB;
    if (ev_re_translate(&r, &cflags))
        return -1;
    regex_t re;
    int rc = regcomp(&re, r.out, cflags);
    if (rc) {
        char msg[128];
        regerror(rc, &re, msg, sizeof msg);
        return ev_fail(c, "pattern '%.*s' rejected by regcomp: %s",
                       (int)(r.n > 80 ? 80 : r.n), r.p, msg);
    }
    EvValue *y = ev_out_tensor(c, 0, IR_BOOL, x->rank, x->dims);
    if (!y) {
        regfree(&re);
        return -1;
    }
    const EvStr *xs = x->data;
    uint8_t *ys = y->data;
    for (size_t k = 0; k < x->numel; k++) {
        regmatch_t m[1];
        int ef = 0;
#ifdef REG_STARTEND
        /* strings may hold NUL bytes */
        m[0].rm_so = 0;
        m[0].rm_eo = (regoff_t)xs[k].len;
        ef = REG_STARTEND;
#endif
        ys[k] = regexec(&re, xs[k].p ? xs[k].p : "", 1, m, ef) == 0;
    }
    regfree(&re);
    return 0;
}

/* ---- StringNormalizer ------------------------------------------------- */

/* Upper (to_upper) or lower case of a code point in the covered blocks;
 * cp itself otherwise. Every pair keeps the UTF-8 length. */
static uint32_t ev_case_map(uint32_t cp, bool to_upper)
{
    if (cp < 0x80) {
        if (to_upper && cp >= 'a' && cp <= 'z')
            return cp - 32;
        if (!to_upper && cp >= 'A' && cp <= 'Z')
            return cp + 32;
        return cp;
    }
    if (to_upper) {
        if ((cp >= 0xe0 && cp <= 0xfe && cp != 0xf7) ||
            (cp >= 0x3b1 && cp <= 0x3cb && cp != 0x3c2) ||
            (cp >= 0x430 && cp <= 0x44f))
            return cp - 32;
        if (cp == 0x3c2)
            return 0x3a3;
        if (cp == 0xff)
            return 0x178;
        if (cp >= 0x450 && cp <= 0x45f)
            return cp - 80;
    } else {
        if ((cp >= 0xc0 && cp <= 0xde && cp != 0xd7) ||
            (cp >= 0x391 && cp <= 0x3ab && cp != 0x3a2) ||
            (cp >= 0x410 && cp <= 0x42f))
            return cp + 32;
        if (cp == 0x178)
            return 0xff;
        if (cp >= 0x400 && cp <= 0x40f)
            return cp + 80;
    }
    /* Latin Extended-A: pairs, upper case first; the odd-aligned runs */
    bool odd_run = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17e);
    bool even_run = (cp >= 0x100 && cp <= 0x12f) ||
                    (cp >= 0x132 && cp <= 0x137) || (cp >= 0x14a && cp <= 0x177);
    if (even_run || odd_run) {
        bool is_upper = even_run ? !(cp & 1) : (cp & 1);
        if (to_upper && !is_upper)
            return cp - 1;
        if (!to_upper && is_upper)
            return cp + 1;
    }
    return cp;
}

/* Maps the case of s (n bytes) in place; invalid UTF-8 is left alone. */
static void ev_case_change(char *s, size_t n, bool to_upper)
{
    unsigned char *p = (unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) {
            p[i] = (unsigned char)ev_case_map(p[i], to_upper);
            i++;
        } else if ((p[i] & 0xe0) == 0xc0 && i + 1 < n &&
                   (p[i + 1] & 0xc0) == 0x80) {
            uint32_t cp = ((uint32_t)(p[i] & 0x1f) << 6) | (p[i + 1] & 0x3f);
            uint32_t m = ev_case_map(cp, to_upper);
            if (m >= 0x80 && m < 0x800) {
                p[i] = (unsigned char)(0xc0 | (m >> 6));
                p[i + 1] = (unsigned char)(0x80 | (m & 0x3f));
            }
            i += 2;
        } else {
            i++;
        }
    }
}

static bool ev_stopword(EvCtx *c, const EvStr *s, const IrBytes *stop,
                        long n_stop, bool sensitive)
{
    char *low = NULL;
    if (!sensitive) {
        low = ev_tmp(c, s->len + 1, 1);
        if (!low)
            return false;
        if (s->len)
            memcpy(low, s->p, s->len);
        ev_case_change(low, s->len, false);
    }
    for (long k = 0; k < n_stop; k++) {
        if (stop[k].len != s->len)
            continue;
        if (!s->len)
            return true;
        if (sensitive && !memcmp(stop[k].data, s->p, s->len))
            return true;
        if (!sensitive) {
            char *w = ev_tmp(c, s->len + 1, 1);
            if (!w)
                return false;
            memcpy(w, stop[k].data, s->len);
            ev_case_change(w, s->len, false);
            if (!memcmp(w, low, s->len))
                return true;
        }
    }
    return false;
}

static int ev_string_normalizer(EvCtx *c)
{
    EvValue *x = ev_str_in(c, 0);
    if (!x)
        return -1;
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
        return ev_fail(c, "X must have shape [C] or [1, C]");
    const char *action = ev_attr_s(c, "case_change_action");
    const char *locale = ev_attr_s_or(c, "locale", "");
    if (!action || !locale)
        return ev_fail(c, "bad string attribute");
    int mode;
    if (!strcmp(action, "NONE"))
        mode = 0;
    else if (!strcmp(action, "LOWER"))
        mode = 1;
    else if (!strcmp(action, "UPPER"))
        mode = 2;
    else
        return ev_fail(c, "unknown case_change_action '%s'", action);
    if (!strncmp(locale, "tr", 2) || !strncmp(locale, "az", 2))
        return ev_fail(c, "locale '%s' needs Turkic case mapping, not supported",
                       locale);
    bool sensitive = ev_attr_i(c, "is_case_sensitive") != 0;
    const IrBytes *stop = NULL;
    long n_stop = ev_attr_strings(c, "stopwords", &stop);
    const EvStr *xs = x->data;
    bool *keep = ev_tmp(c, x->numel ? x->numel : 1, sizeof *keep);
    if (!keep)
        return -1;
    size_t kept = 0;
    for (size_t k = 0; k < x->numel; k++) {
        keep[k] = !ev_stopword(c, &xs[k], stop, n_stop, sensitive);
        kept += keep[k];
    }
    int64_t dims[2] = {1, (int64_t)(kept ? kept : 1)};
    if (x->rank == 1)
        dims[0] = dims[1];
    EvValue *y = ev_out_tensor(c, 0, IR_STRING, x->rank, dims);
    if (!y)
        return -1;
    EvStr *ys = y->data;
    size_t j = 0;
    for (size_t k = 0; k < x->numel; k++) {
        if (!keep[k])
            continue;
        if (ev_str_set(c, &ys[j], xs[k].p, xs[k].len))
            return -1;
        if (mode)
            ev_case_change(ys[j].p, ys[j].len, mode == 2);
        j++;
    }
    if (!kept && ev_str_set(c, &ys[0], "", 0))
        return -1;
    return 0;
}

const EvOp ev_ops_string[] = {
    {"", "StringConcat", ev_string_concat},
    {"", "StringSplit", ev_string_split},
    {"", "RegexFullMatch", ev_regex_full_match},
    {"", "StringNormalizer", ev_string_normalizer},
    {NULL, NULL, NULL},
};
