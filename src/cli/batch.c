/*
 * batch.c - one command over many models (prefix cli_).
 *
 * Every model runs in a worker process of its own (fork), at most -j at a
 * time. A model that crashes the tool, exhausts memory or trips a
 * sanitizer then costs that model only, and the library needs no thread
 * safety. A worker sends its result back through a pipe: a fixed CliBrief
 * (what the table needs) followed by its JSON object, written by the same
 * job_json a single conversion uses, so the batch report agrees with what
 * each single run says.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "onnxconvert.h"

/* Folders deeper than this below a named folder are not searched: each
 * is reported as a failed item instead, so a batch never misses models
 * silently. */
#define CLI_MAX_WALK_DEPTH 64
/* A worker's JSON object larger than this is cut (and reported so). */
#define CLI_MAX_REPORT_BYTES ((size_t)64 << 20)

/* What the table needs of one model's result (sent as bytes: the worker
 * is a fork of this very program). */
typedef struct CliBrief {
    int status;                  /* JobStatus */
    int verified;                /* JobReport.verified */
    int loaded;
    long long opset_from, opset_to;
    size_t nodes_before, nodes_after;
    char stage[16], reason[48];
    char where[160];             /* "node 'n' (Op-9): opset 9 -> 8", or "" (dg_where) */
    char msg[512];
} CliBrief;

typedef struct CliItem {
    char *in, *out;              /* out: NULL for check */
    CliBrief brief;
    char *json;                  /* the worker's JSON object */
    const char *unsearched;      /* a folder the walk did not enter: why */
} CliItem;

typedef struct CliList {
    CliItem *items;
    size_t n, cap;
} CliList;

/* ---- collecting the models ------------------------------------------ */

/* "a/b" in fresh memory. */
static char *cli_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n;
    if (!mem_add_size(la, lb, &n) || !mem_add_size(n, 2, &n))
        abort();
    char *p = mem_alloc(n);
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb + 1);
    return p;
}

static void cli_list_add(CliList *l, char *in, char *out)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->items = mem_grow(l->items, l->cap, sizeof *l->items);
    }
    l->items[l->n++] = (CliItem){.in = in, .out = out};
}

static int cli_strcmp_p(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool cli_ends(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && !strcmp(name + n - k, suffix);
}

static bool cli_is_onnx(const char *name)
{
    return cli_ends(name, ".onnx");
}

/* A folder named *.mlpackage is a model (a Core ML package), not a
 * folder to search. */
static bool cli_is_mlpackage(const char *name)
{
    return cli_ends(name, ".mlpackage") || cli_ends(name, ".mlpackage/");
}

/* The output path of input `sub` below --out-dir: the name keeps its
 * folders; its suffix becomes the written format's (.mlpackage with --to
 * coreml, .onnx for a package imported). */
static char *cli_out_path(const CliOpts *o, const char *sub)
{
    char *p = cli_join(o->out_dir, sub);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    const char *from = cli_is_onnx(p) ? ".onnx" : cli_is_mlpackage(p) ? ".mlpackage" : NULL;
    const char *to = o->job.to_coreml ? ".mlpackage" : ".onnx";
    if (!from || !strcmp(from, to))
        return p;
    size_t stem = n - strlen(from);
    char *q = malloc(stem + strlen(to) + 1);
    if (!q)
        return p;
    memcpy(q, p, stem);
    strcpy(q + stem, to);
    free(p);
    return q;
}

/* The names in folder `dir`, sorted (so batches run in a stable order);
 * NULL when it cannot be read. */
static char **cli_read_dir(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            names = mem_grow(names, cap, sizeof *names);
        }
        names[(*n)++] = mem_strdup(e->d_name);
    }
    closedir(d);
    qsort(names, *n, sizeof *names, cli_strcmp_p);
    return names;
}

typedef struct CliWalk {
    CliList *list;
    const CliOpts *o;
    struct stat out_dir;         /* skipped when met (st_ino 0: none) */
} CliWalk;

/* A folder (or name) the walk cannot search: a failed item of its own,
 * which takes ownership of path. */
static void cli_walk_refuse(CliWalk *w, char *path, const char *sub, const char *why)
{
    cli_list_add(w->list, path, w->o->out_dir ? cli_join(w->o->out_dir, sub) : NULL);
    w->list->items[w->list->n - 1].unsearched = why;
}

/* Adds every *.onnx below `dir` (rel: its path below the named folder).
 * Symbolic links to folders are not followed: they could loop. The walk
 * holds no folder open while it descends (cli_read_dir closes it). */
static void cli_walk(CliWalk *w, const char *dir, const char *rel, int depth)
{
    size_t n;
    char **names = cli_read_dir(dir, &n);
    if (!names) {   /* its job will fail to load it and say why */
        cli_list_add(w->list, mem_strdup(dir),
                     w->o->out_dir ? cli_join(w->o->out_dir, rel ? rel : ".") : NULL);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char *path = cli_join(dir, names[i]);
        char *sub = rel ? cli_join(rel, names[i]) : mem_strdup(names[i]);
        struct stat st;
        bool seen = lstat(path, &st) == 0;
        bool dir_here = seen && S_ISDIR(st.st_mode);
        bool is_out = dir_here && w->out_dir.st_ino && st.st_ino == w->out_dir.st_ino &&
                      st.st_dev == w->out_dir.st_dev;
        if (!seen && errno == ENAMETOOLONG) {
            cli_walk_refuse(w, path, sub, "path too long: not searched");
            path = NULL;
        } else if (dir_here && !is_out && depth >= CLI_MAX_WALK_DEPTH) {
            cli_walk_refuse(w, path, sub, "folder more than 64 levels deep: not searched");
            path = NULL;
        } else if (dir_here && !is_out && job_is_mlpackage(path)) {
            cli_list_add(w->list, path, w->o->out_dir ? cli_out_path(w->o, sub) : NULL);
            path = NULL;
        } else if (dir_here && !is_out)
            cli_walk(w, path, sub, depth + 1);
        if (path && !dir_here && cli_is_onnx(names[i]) && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            cli_list_add(w->list, path, w->o->out_dir ? cli_out_path(w->o, sub) : NULL);
            path = NULL;
        }
        free(path);
        free(sub);
        free(names[i]);
    }
    free(names);
}

/* Every model the arguments name: a file as given (even if it does not
 * exist: its job then reports why), a folder searched for *.onnx. */
static void cli_collect(const CliOpts *o, CliList *l)
{
    CliWalk w = {.list = l, .o = o};
    if (!o->out_dir || stat(o->out_dir, &w.out_dir) != 0)
        w.out_dir.st_ino = 0;
    for (size_t i = 0; i < o->n_inputs; i++) {
        const char *a = o->inputs[i];
        struct stat st;
        if (stat(a, &st) == 0 && S_ISDIR(st.st_mode) && !job_is_mlpackage(a)) {
            cli_walk(&w, a, NULL, 0);
            continue;
        }
        size_t len = strlen(a);
        while (len > 1 && a[len - 1] == '/')
            len--;
        char *name = mem_strdup(a);
        name[len] = '\0';
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        cli_list_add(l, mem_strdup(a), o->out_dir ? cli_out_path(o, base) : NULL);
        free(name);
    }
}

static int cli_item_cmp_out(const void *a, const void *b)
{
    const CliItem *x = *(CliItem *const *)a, *y = *(CliItem *const *)b;
    return strcmp(x->out, y->out);
}

/* Two models that would be written to one path: a usage error, found
 * before anything runs. */
static int cli_check_outputs(const CliOpts *o, const CliList *l)
{
    if (!o->out_dir || l->n < 2)
        return 0;
    CliItem **by = mem_array(l->n, sizeof *by);
    for (size_t i = 0; i < l->n; i++)
        by[i] = &l->items[i];
    qsort(by, l->n, sizeof *by, cli_item_cmp_out);
    int rc = 0;
    for (size_t i = 1; i < l->n && !rc; i++)
        if (!strcmp(by[i - 1]->out, by[i]->out)) {
            fprintf(stderr, "onnx-convert: %s and %s would both be written to %s\n",
                    by[i - 1]->in, by[i]->in, by[i]->out);
            rc = cli_usage(o->command, NULL);
        }
    free(by);
    return rc;
}

/* ---- the worker ----------------------------------------------------- */

/* Creates the folders above `path` (below and including --out-dir). */
static int cli_make_parents(char *path, IrError *err)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int rc = mkdir(path, 0777);
        int e = errno;
        *p = '/';
        if (rc != 0 && e != EEXIST) {
            *p = '\0';
            ir_fail(err, "%s: cannot create the folder: %s", path, strerror(e));
            *p = '/';
            return -1;
        }
    }
    return 0;
}

/* Runs one job; fills r. */
static void cli_run_job(const CliOpts *o, CliItem *it, JobReport *r)
{
    IrModel *keep = NULL;
    IrError err;
    if (!strcmp(o->command, "check"))
        job_check(it->in, o->strict, r, &keep);
    else if (cli_make_parents(it->out, &err) < 0)
        job_fail(r, o->command, it->in, DG_STAGE_SAVE, DG_SAVE, err.msg);
    else {
        /* The parent ends the worker at --timeout and reports it; the
         * worker's own evaluator gets a little longer, so that one clock,
         * the parent's, decides. */
        JobOptions jo = o->job;
        if (jo.eval.timeout > 0)
            jo.eval.timeout += 10;
        job_convert(&jo, it->in, it->out, r, &keep);
    }
    cli_drop_model(keep);
}

static void cli_brief_of(CliBrief *b, const JobReport *r)
{
    memset(b, 0, sizeof *b);
    b->status = (int)r->status;
    b->verified = r->verified;
    b->loaded = r->loaded;
    b->opset_from = r->opset_from;
    b->opset_to = r->opset_to;
    b->nodes_before = strcmp(r->command, "check") ? r->nodes_before : r->chk.n_nodes;
    b->nodes_after = r->nodes_after;
    snprintf(b->stage, sizeof b->stage, "%s", r->stage ? r->stage : "");
    snprintf(b->reason, sizeof b->reason, "%s", r->reason ? r->reason : "");
    snprintf(b->msg, sizeof b->msg, "%s", r->msg);
    DgDiag d = job_diag(r);
    dg_where(&d, b->where, sizeof b->where);
}

static bool cli_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

/* The JSON object of r, indented to sit in the batch document's array;
 * malloc'd (NULL when out of memory: the document then says null). */
static char *cli_json_text(const JobReport *r, size_t *len)
{
    char *json = NULL;
    *len = 0;
    FILE *mf = open_memstream(&json, len);
    if (!mf)
        return NULL;
    Js j;
    js_init(&j, mf, 2);
    job_json(&j, r);
    fclose(mf);
    return json;
}

/* The worker process: runs the job, sends brief and JSON, exits. */
static void cli_worker(const CliOpts *o, CliItem *it, int fd)
{
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);   /* the parent's stdout is the report */
        close(null);
    }
    JobReport r;
    cli_run_job(o, it, &r);
    CliBrief b;
    cli_brief_of(&b, &r);
    size_t len;
    char *json = cli_json_text(&r, &len);
    bool ok = cli_write_all(fd, &b, sizeof b) && (!json || cli_write_all(fd, json, len));
    _exit(ok ? 0 : 3);
}

/* ---- the runner ----------------------------------------------------- */

typedef struct CliSlot {
    pid_t pid;
    size_t item;
    double started;              /* cli_clock() at fork */
    bool timed_out;              /* killed at --timeout */
    char *buf;
    size_t len, cap;
    bool truncated;
} CliSlot;

typedef struct CliRun {
    const CliOpts *o;
    CliList *l;
    size_t next, done, failed;
    bool progress;               /* stderr is a terminal */
} CliRun;

static void cli_progress(const CliRun *run, const char *what)
{
    if (!run->progress)
        return;
    fprintf(stderr, "\r\033[K[%zu/%zu] %zu failed  %.60s", run->done, run->l->n,
            run->failed, what ? what : "");
    fflush(stderr);
}

static double cli_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Fills the item of a worker that did not report (crash, kill, fork, or
 * `reason` "timeout"). */
static void cli_item_lost_as(const CliRun *run, CliItem *it, DgReason reason,
                             const char *why)
{
    JobReport r;
    job_fail(&r, run->o->command, it->in, DG_STAGE_RUN, reason, why);
    cli_brief_of(&it->brief, &r);
    size_t len;
    it->json = cli_json_text(&r, &len);
    job_report_free(&r);
}

static void cli_item_lost(const CliRun *run, CliItem *it, const char *why)
{
    cli_item_lost_as(run, it, DG_CRASH, why);
}

/* A worker finished: its output is complete (EOF); reap and decode it. */
static void cli_item_done(CliRun *run, CliSlot *s)
{
    CliItem *it = &run->l->items[s->item];
    int st = 0;
    while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
        ;
    char why[200];
    if (s->timed_out) {
        snprintf(why, sizeof why, "%s: over the time limit of %g s; raise "
                 "--timeout", it->in, run->o->job.eval.timeout);
        cli_item_lost_as(run, it, DG_TIMEOUT, why);
    } else if (WIFSIGNALED(st)) {
        snprintf(why, sizeof why, "%s: the worker was killed by signal %d (%s)", it->in,
                 WTERMSIG(st), strsignal(WTERMSIG(st)));
        cli_item_lost(run, it, why);
    } else if (s->len < sizeof(CliBrief) || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
               s->truncated) {
        snprintf(why, sizeof why, "%s: the worker ended without a complete report "
                 "(exit status %d)", it->in, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        cli_item_lost(run, it, why);
    } else {
        memcpy(&it->brief, s->buf, sizeof(CliBrief));
        it->brief.msg[sizeof it->brief.msg - 1] = '\0';
        size_t jl = s->len - sizeof(CliBrief);
        it->json = mem_alloc(jl + 1);
        memcpy(it->json, s->buf + sizeof(CliBrief), jl);
    }
    free(s->buf);
    s->buf = NULL;
    run->done++;
    if (it->brief.status != JOB_OK) {
        run->failed++;
        if (run->progress)
            fputs("\r\033[K", stderr);
        cli_print_failure(it->in, it->brief.msg);
    }
    cli_progress(run, it->in);
}

/* Starts the next model in slot s; false when fork failed (the item is
 * then done, as lost). */
static bool cli_start(CliRun *run, CliSlot *s, struct pollfd *pfd)
{
    size_t k = run->next++;
    CliItem *it = &run->l->items[k];
    if (it->unsearched) {   /* nothing to run: it fails as it stands */
        char why[600];
        snprintf(why, sizeof why, "%s: %s", it->in, it->unsearched);
        JobReport r;
        job_fail(&r, run->o->command, it->in, DG_STAGE_LOAD, DG_LOAD, why);
        cli_brief_of(&it->brief, &r);
        size_t len;
        it->json = cli_json_text(&r, &len);
        job_report_free(&r);
        run->done++, run->failed++;
        cli_print_failure(it->in, it->brief.msg);
        return false;
    }
    int fds[2];
    fflush(NULL);   /* nothing buffered may be written twice */
    if (pipe(fds) != 0) {
        cli_item_lost(run, it, "cannot create a pipe for the worker");
        run->done++, run->failed++;
        return false;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        cli_worker(run->o, it, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        cli_item_lost(run, it, "cannot start a worker process");
        run->done++, run->failed++;
        return false;
    }
    *s = (CliSlot){.pid = pid, .item = k, .started = cli_clock()};
    *pfd = (struct pollfd){.fd = fds[0], .events = POLLIN};
    cli_progress(run, it->in);
    return true;
}

/* Reads what is there from slot s; true at end of file. */
static bool cli_read_slot(CliSlot *s, int fd)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0)
        return errno != EINTR && errno != EAGAIN;
    if (n == 0)
        return true;
    if (s->len + (size_t)n > CLI_MAX_REPORT_BYTES) {
        s->truncated = true;
        return false;
    }
    if (s->len + (size_t)n > s->cap) {
        s->cap = (s->len + (size_t)n) * 2;
        s->buf = realloc(s->buf, s->cap);
        if (!s->buf)
            abort();
    }
    memcpy(s->buf + s->len, chunk, (size_t)n);
    s->len += (size_t)n;
    return false;
}

/* Kills the workers past --timeout; the milliseconds poll may wait
 * until the next one is due (-1: no limit). */
static int cli_reap_late(CliRun *run, CliSlot *slots, int active)
{
    double limit = run->o->job.eval.timeout, now = cli_clock(), next = -1;
    if (limit <= 0)
        return -1;
    for (int i = 0; i < active; i++) {
        if (slots[i].timed_out)
            continue;
        double left = slots[i].started + limit - now;
        if (left <= 0) {
            kill(slots[i].pid, SIGKILL);
            slots[i].timed_out = true;
        } else if (next < 0 || left < next) {
            next = left;
        }
    }
    return next < 0 ? -1 : (int)(next * 1000) + 1;
}

static void cli_run_all(CliRun *run, int jobs)
{
    CliSlot slots[CLI_MAX_JOBS];
    struct pollfd pfd[CLI_MAX_JOBS];
    int active = 0;
    while (run->done < run->l->n) {
        while (active < jobs && run->next < run->l->n)
            if (cli_start(run, &slots[active], &pfd[active]))
                active++;
        if (active <= 0)
            continue;
        int wait_ms = cli_reap_late(run, slots, active);
        if (poll(pfd, (nfds_t)active, wait_ms) < 0 && errno != EINTR)
            abort();
        for (int i = 0; i < active; i++) {
            if (!pfd[i].revents || !cli_read_slot(&slots[i], pfd[i].fd))
                continue;
            close(pfd[i].fd);
            cli_item_done(run, &slots[i]);
            slots[i] = slots[active - 1];
            pfd[i] = pfd[active - 1];
            active--;
            i--;
        }
    }
    if (run->progress)
        fputs("\r\033[K", stderr);
}

/* ---- the report ----------------------------------------------------- */

static const char *cli_brief_status(const CliBrief *b)
{
    return job_status_name((JobStatus)b->status);
}

/* "13 -> 17", "13" (nothing written) or "-". */
static void cli_cell_pair(char *buf, size_t cap, bool have, long long a, bool done,
                          long long b)
{
    if (!have)
        snprintf(buf, cap, "-");
    else if (done)
        snprintf(buf, cap, "%lld -> %lld", a, b);
    else
        snprintf(buf, cap, "%lld", a);
}

static void cli_table_row(FILE *f, const CliOpts *o, const CliItem *it)
{
    const CliBrief *b = &it->brief;
    bool ok = b->status == JOB_OK, check = !strcmp(o->command, "check");
    char opset[32], nodes[48];
    cli_cell_pair(opset, sizeof opset, b->loaded && b->opset_from > 0, b->opset_from,
                  ok && !check, b->opset_to);
    cli_cell_pair(nodes, sizeof nodes, b->loaded, (long long)b->nodes_before, ok && !check,
                  (long long)b->nodes_after);
    const char *verified = b->verified == 1 ? "yes" : b->verified < 0 ? "no" : "-";
    fprintf(f, "%-8s  %-9s  %-14s  %-8s  %s", cli_brief_status(b), opset, nodes,
            verified, it->in);
    if (!ok && strcmp(b->stage, b->reason))
        fprintf(f, "  (%s: %s%s%s)", b->stage, b->reason, b->where[0] ? ", " : "", b->where);
    else if (!ok)
        fprintf(f, "  (%s)", b->stage);
    fputc('\n', f);
}

/* Models per JobStatus, and how many --verify proved. */
static size_t cli_count(const CliList *l, size_t count[4])
{
    size_t verified = 0;
    memset(count, 0, 4 * sizeof *count);
    for (size_t i = 0; i < l->n; i++) {
        const CliBrief *b = &l->items[i].brief;
        if (b->status >= 0 && b->status < 4)
            count[b->status]++;
        verified += b->verified == 1;
    }
    return verified;
}

/* The table and the totals line. */
static void cli_table(FILE *f, const CliOpts *o, const CliList *l)
{
    size_t count[4];
    size_t verified = cli_count(l, count);
    fprintf(f, "%-8s  %-9s  %-14s  %-8s  %s\n", "status", "opset", "nodes", "verified",
            "model");
    for (size_t i = 0; i < l->n; i++)
        cli_table_row(f, o, &l->items[i]);
    fprintf(f, "%zu models: %zu ok, %zu refused, %zu invalid, %zu failed", l->n,
            count[JOB_OK], count[JOB_REFUSED], count[JOB_INVALID], count[JOB_ERROR]);
    if (o->job.verify)
        fprintf(f, "; %zu verified", verified);
    fputc('\n', f);
}

/* The batch JSON document: {schema, onnx_convert, command, models [...],
 * summary {models, ok, refused, invalid, error, verified}}. */
static void cli_batch_json(FILE *f, const CliOpts *o, const CliList *l)
{
    size_t count[4];
    size_t verified = cli_count(l, count);
    fprintf(f, "{\n  \"schema\": %d,\n  \"onnx_convert\": \"%s\",\n  \"command\": \"%s\",\n"
               "  \"models\": [",
            JS_REPORT_SCHEMA, ONNXCONVERT_VERSION, o->command);
    for (size_t i = 0; i < l->n; i++) {
        const CliItem *it = &l->items[i];
        fprintf(f, "%s\n    %s", i ? "," : "", it->json ? it->json : "null");
    }
    fprintf(f, "%s],\n  \"summary\": {\"models\": %zu, \"ok\": %zu, \"refused\": %zu, "
               "\"invalid\": %zu, \"error\": %zu, \"verified\": %zu}\n}\n",
            l->n ? "\n  " : "", l->n, count[JOB_OK], count[JOB_REFUSED],
            count[JOB_INVALID], count[JOB_ERROR], verified);
}

static void cli_list_free(CliList *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].in);
        free(l->items[i].out);
        free(l->items[i].json);
    }
    free(l->items);
}

int cli_batch(CliOpts *o)
{
    CliList l = {0};
    cli_collect(o, &l);
    int rc = cli_check_outputs(o, &l);
    if (rc) {
        cli_list_free(&l);
        return rc;
    }
    if (l.n == 0) {
        cli_list_free(&l);
        fprintf(stderr, "onnx-convert: %s: no .onnx models found\n", o->command);
        return CLI_FAIL;
    }
    int jobs = o->jobs ? o->jobs : 1;
    /* N workers each running OpenBLAS's own threads would fight for cores */
    if (jobs > 1)
        openblas_set_num_threads(1);
    if (o->out_dir && mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "onnx-convert: %s: cannot create the folder: %s\n", o->out_dir,
                strerror(errno));
        cli_list_free(&l);
        return CLI_FAIL;
    }
    CliRun run = {.o = o, .l = &l, .progress = isatty(STDERR_FILENO)};
    cli_run_all(&run, jobs);
    if (o->json)
        cli_batch_json(stdout, o, &l);
    cli_table(o->json ? stderr : stdout, o, &l);
    rc = run.failed ? CLI_FAIL : CLI_OK;
    cli_list_free(&l);
    if (fflush(stdout) || ferror(stdout)) {
        fputs("onnx-convert: cannot write to standard output\n", stderr);
        return CLI_FAIL;
    }
    return rc;
}
