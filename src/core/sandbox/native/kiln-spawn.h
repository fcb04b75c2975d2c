/* Shared between kiln-spawn.c (the protocol and the plain runs) and sandbox.c (sandboxed runs). */
#ifndef KILN_SPAWN_H
#define KILN_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One step of building a sandbox, applied in order (see sandbox-plan.ts, which writes them). */
struct sandbox_op {
  char kind; /* 'r' read-only bind, 'w' writable bind, 'd' dir, 'l' symlink, 'L' symlink on a host
                mount (removed when the command ends), 't' tmpfs, 'p' proc, 'v' dev */
  const char *from; /* bind: the host path; symlink: its target; else NULL */
  const char *at;   /* the absolute path inside the sandbox */
};

/* A parsed run request ('R' plain, 'B' sandboxed). Strings point into the request's payload. */
struct run_request {
  const char *cwd, *out_path, *err_path; /* '' paths: a pipe */
  char **argv;                           /* NULL-terminated */
  char **env;                            /* NULL-terminated */
  const char *path;                      /* PATH from env, or NULL */
  struct sandbox_op *ops;
  size_t nops;
  char **cgroups; /* cgroup.procs files the sandbox joins before anything runs in it */
  size_t ncgroups;
};

/* How the helper's sandboxes differ from the defaults (see sandbox_setup_helper). */
struct sandbox_config {
  int uid, gid;         /* the user the commands run as (root helper only), or -1: the helper's */
  int network_per_run;  /* each sandbox gets a network namespace of its own, without network */
};

/* The program to exec: argv0 itself when it has a '/', else the first executable file on PATH. */
const char *resolve_program(const char *argv0, const char *path, const char *cwd, char *buf, size_t size);

/*
 * Puts the helper in namespaces of its own for the sandboxes it starts: user (unless it is
 * privileged already), network (loopback only), ipc and mount, with a private tmpfs at `base`.
 * `config` says whom the commands run as and whether each sandbox gets its own network namespace.
 * Then starts one throwaway sandbox to prove the kernel allows every step. 0, or -1 with the
 * reason in `why`.
 */
int sandbox_setup_helper(const char *base, const struct sandbox_config *config, char *why, size_t size);

/*
 * Starts the request in a new sandbox: a child in new mount, pid, uts and cgroup namespaces (and
 * network, with network_per_run), first moved into the request's cgroups by the helper, builds
 * the file tree of `ops` in a tmpfs, makes it its root, drops every capability and runs the
 * command, as pid 1 of its namespace, reaping until the command exits. `in`, `out` and `err` are
 * the descriptors the command gets as 0, 1 and 2. Once the command and everything it left are
 * gone and the streams closed, the child writes the exit code (i32) to `status_fd`, then exits;
 * a child that ends without writing it failed before the command ran (or was killed).
 * Returns the child's pid, or -1 with errno set.
 */
pid_t sandbox_start(const struct run_request *request, int in, int out, int err, int status_fd);

#endif
