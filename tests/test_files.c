/*
 * test_files.c - files written and mapped (issue 18): side files named
 * two ways, duplicated external_data keys, output targets that are not
 * regular files, planted temporary names, a crash at each step of an
 * in-place rewrite, a mapped file that shrinks, SIGTERM during a write.
 *
 * Models are built byte by byte (wire.h) in a temporary folder. The
 * command-line cases run onnx-convert: argv[1], else the one beside the
 * tests folder of this program (build/tests/test_files -> build/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/guard.h"
#include "ir/ir.h"
#include "io/load.h"
#include "io/save.h"
#include "t.h"
#include "wire.h"

static char g_tmp[512];
static char g_cli[PATH_MAX];

/* The 8 floats the two tensors hold: a = 1..4, b = 5..8. */
static const float g_vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static char *path_of(const char *rel)
{
    static char buf[8][PATH_MAX];
    static int k;
    char *p = buf[k++ % 8];
    if (snprintf(p, PATH_MAX, "%s/%s", g_tmp, rel) >= PATH_MAX)
        die(rel);
    return p;
}

static void write_whole(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f))
        die(path);
}

static int one_line(const char *s)
{
    size_t n = strlen(s);
    return n > 1 && s[n - 1] == '\n' && !memchr(s, '\n', n - 1);
}

/* One external_data entry. */
static void ext_entry(WireBuf *t, const char *key, const char *value)
{
    WireBuf e = {0};
    wire_fstr(&e, 1, key);
    wire_fstr(&e, 2, value);
    wire_fmsg(t, 13, &e);
}

/* FLOAT[4] tensor `name` stored at (loc, off) of a side file; `dup_key`
 * (or NULL) is given a second time. */
static void ext_tensor(WireBuf *g, const char *name, const char *loc,
                       const char *off, const char *dup_key)
{
    WireBuf t = {0};
    wire_fvarint(&t, 1, 4);
    wire_fvarint(&t, 2, 1);
    wire_fstr(&t, 8, name);
    ext_entry(&t, "location", loc);
    ext_entry(&t, "offset", off);
    ext_entry(&t, "length", "16");
    if (dup_key)
        ext_entry(&t, dup_key, !strcmp(dup_key, "location") ? "../x.bin" : "0");
    wire_fvarint(&t, 14, 1);
    wire_fmsg(g, 5, &t);
}

/* Writes DIR/model.onnx (opset 17): a and b in side files at locA/locB,
 * and either Add(a, b) -> y (FLOAT[4]) or SequenceConstruct(a, b) -> y;
 * and DIR/w.bin with a's and b's bytes at offsets 0 and 16. */
static void make_model(const char *dir, const char *locA, const char *locB,
                       const char *dup_key, bool seq)
{
    WireBuf m = {0}, g = {0}, op = {0}, n = {0}, vi = {0}, tp = {0}, tt = {0},
            inner = {0};
    wire_fvarint(&m, 1, 8);
    wire_fvarint(&op, 2, 17);
    wire_fmsg(&m, 8, &op);
    wire_fstr(&n, 1, "a");
    wire_fstr(&n, 1, "b");
    wire_fstr(&n, 2, "y");
    wire_fstr(&n, 4, seq ? "SequenceConstruct" : "Add");
    wire_fmsg(&g, 1, &n);
    wire_fstr(&g, 2, "g");
    ext_tensor(&g, "a", locA, "0", dup_key);
    ext_tensor(&g, "b", locB, "16", NULL);
    wire_fvarint(&tt, 1, 1);
    if (seq) {
        wire_fmsg(&inner, 1, &tt);
        wire_fmsg(&tt, 1, &inner);
        wire_fmsg(&tp, 4, &tt);
    } else {
        WireBuf shape = {0}, dim = {0};
        wire_fvarint(&dim, 1, 4);
        wire_fmsg(&shape, 1, &dim);
        wire_fmsg(&tt, 2, &shape);
        wire_fmsg(&tp, 1, &tt);
    }
    wire_fstr(&vi, 1, "y");
    wire_fmsg(&vi, 2, &tp);
    wire_fmsg(&g, 12, &vi);
    wire_fmsg(&m, 7, &g);
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/model.onnx", dir) >= (int)sizeof p)
        die(dir);
    write_whole(p, m.p, m.n);
    free(m.p);
    if (snprintf(p, sizeof p, "%s/w.bin", dir) >= (int)sizeof p)
        die(dir);
    write_whole(p, g_vals, sizeof g_vals);
}

static void fresh_dir(const char *rel)
{
    char cmd[2 * PATH_MAX + 32];
    if (snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", path_of(rel),
                 path_of(rel)) >= (int)sizeof cmd)
        die(rel);
    if (system(cmd))
        die(cmd);
}

static const IrTensor *find_init(const IrModel *m, const char *name)
{
    for (size_t i = 0; m->graph && i < m->graph->inits.n; i++) {
        const IrTensor *t = m->graph->inits.p[i];
        if (t->name && !strcmp(t->name, name))
            return t;
    }
    return NULL;
}

/* Whether `path` loads and its a and b hold 1..4 and 5..8. */
static bool model_intact(const char *path, char *why, size_t wn)
{
    IrModel *m = NULL;
    IrError err = {{0}};
    if (load_model_file(path, NULL, &m, &err)) {
        snprintf(why, wn, "does not load: %s", err.msg);
        return false;
    }
    bool ok = true;
    for (int k = 0; k < 2 && ok; k++) {
        const IrTensor *t = find_init(m, k ? "b" : "a");
        const uint8_t *d = t && t->ext.bound ? t->ext.data
                         : t && t->has_raw ? t->raw.data : NULL;
        size_t len = t && t->ext.bound ? t->ext.len : t ? t->raw.len : 0;
        ok = d && len == 16 && !memcmp(d, g_vals + 4 * k, 16);
        if (!ok)
            snprintf(why, wn, "tensor %s does not hold its values", k ? "b" : "a");
    }
    ir_model_free(m);
    return ok;
}

/* Runs the CLI (sh -c), stderr to a file; returns the exit status (or
 * 128 + signal) and stderr in err. */
static int cli(char *err, size_t en, const char *fmt, ...)
{
    char args[4 * PATH_MAX], cmd[6 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    if (snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", g_cli, args,
                 path_of("stderr")) >= (int)sizeof cmd)
        die("command too long");
    int st = system(cmd);
    err[0] = 0;
    FILE *f = fopen(path_of("stderr"), "r");
    if (f) {
        size_t k = fread(err, 1, en - 1, f);
        err[k] = 0;
        fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Entries of a folder whose name contains `part` (NULL: all). */
static int count_entries(const char *rel, const char *part)
{
    DIR *d = opendir(path_of(rel));
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (!part || strstr(e->d_name, part)))
            n++;
    if (d)
        closedir(d);
    return n;
}

static size_t longest_name(const char *rel)
{
    DIR *d = opendir(path_of(rel));
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strlen(e->d_name) > n)
            n = strlen(e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* ---- 1. one side file per distinct file -------------------------------- */

static void test_same_file_two_names(void)
{
    char why[600] = "", err[2048];
    fresh_dir("in");
    fresh_dir("out");
    make_model(path_of("in"), "w.bin", "./w.bin", NULL, false);
    IrModel *m = NULL;
    IrError e = {{0}};
    T_CHECK(load_model_file(path_of("in/model.onnx"), NULL, &m, &e) == 0,
            "load: %s", e.msg);
    if (m) {
        T_CHECK(save_model_file(m, path_of("out/model.onnx"), NULL, &e) == 0,
                "save: %s", e.msg);
        ir_model_free(m);
    }
    T_CHECK(model_intact(path_of("out/model.onnx"), why, sizeof why),
            "w.bin and ./w.bin, library save: %s", why);
    T_CHECK(count_entries("out", NULL) == 2, "out holds %d files, not model "
            "and one side file", count_entries("out", NULL));
    /* the same through the command line, and a/./b, a//b */
    fresh_dir("out");
    fresh_dir("in/sub");
    make_model(path_of("in"), "sub//w.bin", "sub/./w.bin", NULL, false);
    rename(path_of("in/w.bin"), path_of("in/sub/w.bin"));
    mkdir(path_of("out/sub"), 0755);
    int rc = cli(err, sizeof err, "convert '%s' -o '%s'",
                 path_of("in/model.onnx"), path_of("out/model.onnx"));
    T_CHECK(rc == 0, "convert sub//w.bin + sub/./w.bin: exit %d: %s", rc, err);
    T_CHECK(model_intact(path_of("out/model.onnx"), why, sizeof why),
            "convert sub//w.bin and sub/./w.bin: %s", why);
}

/* ---- 2. duplicated external_data keys ----------------------------------- */

static void test_duplicate_keys(void)
{
    const char *keys[] = {"location", "offset", "length"};
    for (size_t k = 0; k < 3; k++) {
        char err[2048];
        fresh_dir("in");
        fresh_dir("out");
        make_model(path_of("in"), "w.bin", "w.bin", keys[k], false);
        IrModel *m = NULL;
        IrError e = {{0}};
        int rc = load_model_file(path_of("in/model.onnx"), NULL, &m, &e);
        T_CHECK(rc == -1 && strstr(e.msg, "'a'") && strstr(e.msg, keys[k]) &&
                strstr(e.msg, "model.onnx") && !strchr(e.msg, '\n'),
                "key '%s' twice: loader rc %d \"%s\"", keys[k], rc, e.msg);
        if (!rc)
            ir_model_free(m);
        rc = cli(err, sizeof err, "check '%s'", path_of("in/model.onnx"));
        T_CHECK(rc == 1 && one_line(err) && strstr(err, keys[k]),
                "key '%s' twice: check exit %d: %s", keys[k], rc, err);
        rc = cli(err, sizeof err, "convert '%s' -o '%s'",
                 path_of("in/model.onnx"), path_of("out/model.onnx"));
        T_CHECK(rc == 1 && one_line(err) && count_entries("out", NULL) == 0,
                "key '%s' twice: convert exit %d, %d files: %s", keys[k], rc,
                count_entries("out", NULL), err);
    }
}

/* ---- 3. output targets --------------------------------------------------- */

/* convert onto out/NAME must fail with one line and leave out/NAME of
 * the same type (and device numbers). */
static void refused_target(const char *name, const char *label)
{
    char err[2048];
    struct stat a, b;
    if (lstat(path_of(name), &a))
        die(name);
    int rc = cli(err, sizeof err, "convert '%s' -o '%s'",
                 path_of("in/model.onnx"), path_of(name));
    T_CHECK(rc == 1 && one_line(err), "-o onto %s: exit %d: %s", label, rc, err);
    /* a pipe or a device is most often meant as standard output */
    bool stream = S_ISFIFO(a.st_mode) || S_ISCHR(a.st_mode);
    T_CHECK(!stream || strstr(err, "use -o -"), "-o onto %s: no hint of -o -: %s", label, err);
    T_CHECK(lstat(path_of(name), &b) == 0 &&
            (a.st_mode & S_IFMT) == (b.st_mode & S_IFMT) &&
            a.st_rdev == b.st_rdev && a.st_ino == b.st_ino,
            "-o onto %s: the node was replaced", label);
}

static void test_targets(void)
{
    char why[600] = "", err[2048];
    fresh_dir("in");
    fresh_dir("out");
    make_model(path_of("in"), "w.bin", "w.bin", NULL, false);
    if (mkfifo(path_of("out/fifo.onnx"), 0644))
        die("mkfifo");
    refused_target("out/fifo.onnx", "a FIFO");
    if (mknod(path_of("out/null.onnx"), S_IFCHR | 0666, makedev(1, 3)) == 0)
        refused_target("out/null.onnx", "a character device");
    else
        T_CHECK(errno == EPERM, "mknod: %s", strerror(errno));
    if (symlink("/dev/null", path_of("out/devlink.onnx")))
        die("symlink");
    refused_target("out/devlink.onnx", "a link to /dev/null");
    if (mkdir(path_of("out/dir.onnx"), 0755))
        die("mkdir");
    refused_target("out/dir.onnx", "a folder");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path_of("out/sock.onnx")) < sizeof sa.sun_path) {
        strcpy(sa.sun_path, path_of("out/sock.onnx"));
        if (s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0)
            refused_target("out/sock.onnx", "a socket");
    }
    if (s >= 0)
        close(s);

    /* a link to a regular file: the file is replaced where it is, with
     * its mode; the link stays a link */
    mkdir(path_of("out/real"), 0755);
    write_whole(path_of("out/real/model.onnx"), "old", 3);
    chmod(path_of("out/real/model.onnx"), 0600);
    if (symlink("real/model.onnx", path_of("out/ln.onnx")))
        die("symlink");
    int rc = cli(err, sizeof err, "convert '%s' -o '%s'",
                 path_of("in/model.onnx"), path_of("out/ln.onnx"));
    struct stat st;
    T_CHECK(rc == 0 && lstat(path_of("out/ln.onnx"), &st) == 0 &&
            S_ISLNK(st.st_mode), "-o onto a link: exit %d, link kept? %s", rc, err);
    T_CHECK(model_intact(path_of("out/real/model.onnx"), why, sizeof why),
            "-o onto a link: the file it names: %s", why);
    T_CHECK(stat(path_of("out/real/model.onnx"), &st) == 0 &&
            (st.st_mode & 07777) == 0600, "-o onto a link: mode %o, not 0600",
            (unsigned)(st.st_mode & 07777));

    /* a plain file of mode 0600 keeps it */
    write_whole(path_of("out/m600.onnx"), "old", 3);
    chmod(path_of("out/m600.onnx"), 0600);
    /* and its owner, where we may give files away (as root) */
    bool chowned = chown(path_of("out/m600.onnx"), 4321, 4321) == 0;
    rc = cli(err, sizeof err, "convert '%s' -o '%s'", path_of("in/model.onnx"),
             path_of("out/m600.onnx"));
    T_CHECK(rc == 0 && stat(path_of("out/m600.onnx"), &st) == 0 &&
            (st.st_mode & 07777) == 0600, "replaced 0600 file: exit %d, mode %o",
            rc, (unsigned)(st.st_mode & 07777));
    if (chowned)
        T_CHECK(st.st_uid == 4321 && st.st_gid == 4321,
                "replaced file of owner 4321: now %u:%u", (unsigned)st.st_uid,
                (unsigned)st.st_gid);

    /* a missing folder */
    rc = cli(err, sizeof err, "convert '%s' -o '%s'", path_of("in/model.onnx"),
             path_of("out/none/model.onnx"));
    T_CHECK(rc == 1 && one_line(err) && strstr(err, "none"),
            "-o into a missing folder: exit %d: %s", rc, err);
}

/* ---- 4. planted temporary names ---------------------------------------- */

static void test_planted_tmp(void)
{
    char err[2048];
    fresh_dir("in");
    fresh_dir("out");
    fresh_dir("inputs");
    make_model(path_of("in"), "w.bin", "w.bin", NULL, true);
    write_whole(path_of("outside.txt"), "precious", 8);
    if (symlink(path_of("outside.txt"), path_of("out/output_0.pb.tmp")))
        die("symlink");
    int rc = cli(err, sizeof err, "run '%s' --inputs '%s' -o '%s'",
                 path_of("in/model.onnx"), path_of("inputs"), path_of("out"));
    char buf[64] = "";
    FILE *f = fopen(path_of("outside.txt"), "r");
    size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[k] = 0;
    if (f)
        fclose(f);
    T_CHECK(rc == 0 && !strcmp(buf, "precious"),
            "run with output_0.pb.tmp planted as a link: exit %d, the file "
            "outside holds \"%.20s\": %s", rc, buf, err);
    struct stat st;
    T_CHECK(stat(path_of("out/output_0.pb"), &st) == 0 && st.st_size > 32,
            "run: no output_0.pb");
    T_CHECK(count_entries("out", ".tmp") == 1, "run left %d temporary files",
            count_entries("out", ".tmp") - 1);
}

/* A temporary file is removed when SIGTERM comes while it lives. */
static void test_sigterm(void)
{
    fresh_dir("out");
    char *made = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        save_cleanup_on_signals("test_files");
        int fd = guard_tmp_open(path_of("out/model.onnx.tmp-"), &made);
        if (fd < 0)
            _exit(3);
        raise(SIGTERM);
        _exit(4);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
            "SIGTERM: child status %x", st);
    T_CHECK(count_entries("out", NULL) == 0, "SIGTERM left %d files",
            count_entries("out", NULL));
}

/* ---- 5. a crash at each step of an in-place rewrite ------------------------ */

static void test_crash_points(void)
{
    static const char *points[] = {"after-side-files", "before-model-rename",
                                   "after-model-rename", NULL};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        for (int layout = 0; layout < 2; layout++) {
            char why[600] = "";
            const char *label = points[i] ? points[i] : "no crash";
            fresh_dir("in");
            make_model(path_of("in"), "w.bin", "w.bin", NULL, false);
            pid_t pid = fork();
            if (pid == 0) {
                IrModel *m = NULL;
                IrError e;
                if (load_model_file(path_of("in/model.onnx"), NULL, &m, &e))
                    _exit(3);
                /* --external-data w.bin moves b to offset 4096 */
                SaveOptions o = {"w.bin", 0};
                save_test_die_at(points[i]);
                int rc = save_model_file(m, path_of("in/model.onnx"),
                                         layout ? &o : NULL, &e);
                _exit(rc ? 4 : 0);
            }
            int st = 0;
            waitpid(pid, &st, 0);
            int want = points[i] ? 99 : 0;
            T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == want,
                    "%s (layout %d): child status %x", label, layout, st);
            T_CHECK(model_intact(path_of("in/model.onnx"), why, sizeof why),
                    "crash %s (layout %d): the model: %s", label, layout, why);
            if (!points[i])
                T_CHECK(count_entries("in", NULL) == 2, "rewrite in place "
                        "left %d files, not 2", count_entries("in", NULL));
        }
    }
    /* twice more in place: the side file's name does not grow */
    char why[600] = "";
    fresh_dir("in");
    make_model(path_of("in"), "w.bin", "w.bin", NULL, false);
    for (int k = 0; k < 3; k++) {
        IrModel *m = NULL;
        IrError e;
        SaveOptions o = {"w.bin", 0};
        if (load_model_file(path_of("in/model.onnx"), NULL, &m, &e) == 0) {
            T_CHECK(save_model_file(m, path_of("in/model.onnx"), &o, &e) == 0,
                    "rewrite %d: %s", k, e.msg);
            ir_model_free(m);
        }
    }
    T_CHECK(model_intact(path_of("in/model.onnx"), why, sizeof why) &&
            count_entries("in", NULL) == 2 && longest_name("in") <= 17,
            "three rewrites in place: %s, %d files", why,
            count_entries("in", NULL));
}

/* Saving again and again onto one target leaves one side file: the one
 * the replaced model used goes, unless the input model still reads it. */
static void test_repeat_saves(void)
{
    char why[600] = "";
    fresh_dir("in");
    fresh_dir("out");
    make_model(path_of("in"), "w.bin", "w.bin", NULL, false);
    for (int k = 0; k < 3; k++) {
        IrModel *m = NULL;
        IrError e;
        SaveOptions o = {"b.bin", 0};
        if (load_model_file(path_of("in/model.onnx"), NULL, &m, &e) == 0) {
            T_CHECK(save_model_file(m, path_of("out/b.onnx"), &o, &e) == 0 &&
                    save_model_file(m, path_of("in/copy.onnx"), NULL, &e) == 0,
                    "save %d: %s", k, e.msg);
            ir_model_free(m);
        }
    }
    T_CHECK(model_intact(path_of("out/b.onnx"), why, sizeof why) &&
            count_entries("out", NULL) == 2, "three saves onto out/b.onnx: "
            "%s, %d files, not 2", why, count_entries("out", NULL));
    T_CHECK(model_intact(path_of("in/copy.onnx"), why, sizeof why) &&
            model_intact(path_of("in/model.onnx"), why, sizeof why) &&
            count_entries("in", NULL) == 4, "three saves beside the input "
            "sharing its folder: %s, %d files, not 4", why,
            count_entries("in", NULL));
}

/* A target model naming files outside its folder as its side files: they
 * are not removed when it is replaced. */
static void test_old_sides_outside(void)
{
    char err[2048];
    fresh_dir("in");
    fresh_dir("out");
    fresh_dir("out2");
    make_model(path_of("in"), "w.bin", "w.bin", NULL, false);
    write_whole(path_of("victim.bin"), "precious", 8);
    /* out/model.onnx names ../victim.bin and out2/../victim.bin */
    make_model(path_of("out"), "../victim.bin", "out2/../../victim.bin", NULL,
               false);
    int rc = cli(err, sizeof err, "convert '%s' -o '%s'",
                 path_of("in/model.onnx"), path_of("out/model.onnx"));
    T_CHECK(rc == 0 && access(path_of("victim.bin"), F_OK) == 0,
            "replacing a model that names ../victim.bin: exit %d, victim %s: %s",
            rc, access(path_of("victim.bin"), F_OK) ? "removed" : "kept", err);
}

/* ---- 6. a mapped side file that shrinks ---------------------------------- */

static void test_shrunk_mapping(void)
{
    fresh_dir("in");
    fresh_dir("out");
    make_model(path_of("in"), "w.bin", "w.bin", NULL, false);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path_of("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(3);
        save_cleanup_on_signals("test_files");
        IrModel *m = NULL;
        IrError e;
        if (load_model_file(path_of("in/model.onnx"), NULL, &m, &e))
            _exit(3);
        if (truncate(path_of("in/w.bin"), 0))
            _exit(3);
        SaveOptions o = {"out.bin", 0};
        save_model_file(m, path_of("out/model.onnx"), &o, &e);
        _exit(5); /* the bytes were read: they must not have been */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char err[2048] = "";
    FILE *f = fopen(path_of("stderr"), "r");
    size_t k = f ? fread(err, 1, sizeof err - 1, f) : 0;
    err[k] = 0;
    if (f)
        fclose(f);
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1,
            "side file truncated while mapped: status %x (signal %d)", st,
            WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    T_CHECK(one_line(err) && strstr(err, "w.bin") && strstr(err, "changed size"),
            "side file truncated while mapped: \"%s\"", err);
    T_CHECK(count_entries("out", NULL) == 0,
            "side file truncated while mapped: %d files left in out",
            count_entries("out", NULL));
}

/* The same for a side file big enough to be copied file to file
 * (copy_file_range meets the end early instead of a fault). */
static void test_shrunk_copy(void)
{
    fresh_dir("in");
    fresh_dir("out");
    WireBuf m = {0}, g = {0}, op = {0}, t = {0};
    wire_fvarint(&m, 1, 8);
    wire_fvarint(&op, 2, 17);
    wire_fmsg(&m, 8, &op);
    wire_fstr(&g, 2, "g");
    wire_fvarint(&t, 1, 524288);
    wire_fvarint(&t, 2, 1);
    wire_fstr(&t, 8, "a");
    ext_entry(&t, "location", "w.bin");
    ext_entry(&t, "length", "2097152");
    wire_fvarint(&t, 14, 1);
    wire_fmsg(&g, 5, &t);
    wire_fmsg(&m, 7, &g);
    write_whole(path_of("in/model.onnx"), m.p, m.n);
    free(m.p);
    uint8_t *w = calloc(1, 2097152);
    if (!w)
        die("calloc");
    write_whole(path_of("in/w.bin"), w, 2097152);
    free(w);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path_of("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(3);
        save_cleanup_on_signals("test_files");
        IrModel *md = NULL;
        IrError e;
        if (load_model_file(path_of("in/model.onnx"), NULL, &md, &e))
            _exit(3);
        if (truncate(path_of("in/w.bin"), 4096))
            _exit(3);
        if (save_model_file(md, path_of("out/model.onnx"), NULL, &e) == 0)
            _exit(5);
        fprintf(stderr, "test_files: %s\n", e.msg);
        _exit(1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char err[2048] = "";
    FILE *f = fopen(path_of("stderr"), "r");
    size_t k = f ? fread(err, 1, sizeof err - 1, f) : 0;
    err[k] = 0;
    if (f)
        fclose(f);
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1 && one_line(err) &&
            strstr(err, "w.bin") && strstr(err, "changed size"),
            "big side file truncated while copied: status %x: \"%s\"", st, err);
    T_CHECK(count_entries("out", NULL) == 0,
            "big side file truncated while copied: %d files left in out",
            count_entries("out", NULL));
}

/* The model file itself shrinks while its embedded weights, still in
 * the mapping, are being written out. */
static void test_shrunk_model(void)
{
    fresh_dir("in");
    fresh_dir("out");
    WireBuf m = {0}, g = {0}, op = {0}, t = {0};
    wire_fvarint(&m, 1, 8);
    wire_fvarint(&op, 2, 17);
    wire_fmsg(&m, 8, &op);
    wire_fstr(&g, 2, "g");
    wire_fvarint(&t, 1, 16384);
    wire_fvarint(&t, 2, 1);
    wire_fstr(&t, 8, "a");
    uint8_t *w = calloc(1, 65536);
    if (!w)
        die("calloc");
    wire_fbytes(&t, 9, w, 65536);
    free(w);
    wire_fmsg(&g, 5, &t);
    wire_fmsg(&m, 7, &g);
    write_whole(path_of("in/model.onnx"), m.p, m.n);
    free(m.p);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path_of("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(3);
        save_cleanup_on_signals("test_files");
        IrModel *md = NULL;
        IrError e;
        if (load_model_file(path_of("in/model.onnx"), NULL, &md, &e))
            _exit(3);
        if (truncate(path_of("in/model.onnx"), 0))
            _exit(3);
        SaveOptions o = {"w.bin", 0};
        if (save_model_file(md, path_of("out/model.onnx"), &o, &e) == 0)
            _exit(5);
        fprintf(stderr, "test_files: %s\n", e.msg);
        _exit(1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char err[2048] = "";
    FILE *f = fopen(path_of("stderr"), "r");
    size_t k = f ? fread(err, 1, sizeof err - 1, f) : 0;
    err[k] = 0;
    if (f)
        fclose(f);
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1 && one_line(err) &&
            strstr(err, "model.onnx") && strstr(err, "changed size"),
            "model file truncated while mapped: status %x: \"%s\"", st, err);
    T_CHECK(count_entries("out", NULL) == 0,
            "model file truncated while mapped: %d files left in out",
            count_entries("out", NULL));
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        snprintf(g_cli, sizeof g_cli, "%s", argv[1]);
    } else {
        /* build/tests/test_files -> build/onnx-convert */
        snprintf(g_cli, sizeof g_cli, "%s", argv[0]);
        char *s = strrchr(g_cli, '/');
        if (s)
            *s = 0;
        s = strrchr(g_cli, '/');
        if (s)
            strcpy(s + 1, "onnx-convert");
        else
            snprintf(g_cli, sizeof g_cli, "../onnx-convert");
    }
    if (access(g_cli, X_OK))
        fprintf(stderr, "FAIL: %s not built: the command-line cases fail\n",
                g_cli);
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_tmp, sizeof g_tmp, "%s/oc-files-XXXXXX", base);
    if (!mkdtemp(g_tmp))
        die("mkdtemp");
    test_same_file_two_names();
    test_duplicate_keys();
    test_targets();
    test_planted_tmp();
    test_sigterm();
    test_crash_points();
    test_repeat_saves();
    test_old_sides_outside();
    test_shrunk_mapping();
    test_shrunk_copy();
    test_shrunk_model();
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", g_tmp);
    return t_done("test_files");
}
