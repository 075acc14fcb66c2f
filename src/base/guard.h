/*
 * guard.h - temporary files and mapped files that a signal must not turn
 * into litter or a crash (prefix guard_).
 *
 * Every temporary file the library creates is listed here while it lives,
 * so that a handler can remove it on SIGINT/SIGTERM; every file the loader
 * maps is listed too, so that a SIGBUS from a file that shrank under us
 * becomes a one-line error instead of a crash. The library never installs
 * a handler by itself: a program that wants them calls
 * guard_install_signals once (the CLI does).
 */
#ifndef OC_GUARD_H
#define OC_GUARD_H

#include <stddef.h>

/* Creates `prefix` followed by random characters with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and lists it. Returns the fd and
 * the malloc'ed name in *path, or -1 with errno set. */
int guard_tmp_open(const char *prefix, char **path);
/* Lists / unlists a file to remove on a signal (path is copied). */
void guard_keep(const char *path);
void guard_forget(const char *path);
/* Unlinks and unlists. */
void guard_discard(const char *path);

/* Lists / unlists a mapping [base, base+len) of file `path`. */
void guard_map_add(const void *base, size_t len, const char *path);
void guard_map_remove(const void *base);

/* Installs handlers for SIGINT, SIGTERM, SIGHUP (remove the listed
 * temporary files, then die of the signal) and SIGBUS (inside a listed
 * mapping: print "PROG: FILE: file changed size while being read",
 * remove the temporary files, exit 1). */
void guard_install_signals(const char *prog);

#endif
