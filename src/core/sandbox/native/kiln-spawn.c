/*
 * kiln-spawn: starts processes for Kiln without copying a Node process.
 *
 * Node starts a child with fork(), which copies the parent's page tables and then takes
 * copy-on-write faults on both sides: ~0.8 ms of CPU per child even from a small helper. This
 * program starts each child with posix_spawn (glibc: clone(CLONE_VM | CLONE_VFORK), ~0.1 ms), as
 * Bazel's process-wrapper starts actions natively. NativeSpawner (native-spawner.ts) drives it.
 *
 * Protocol on stdin / stdout, frames of: u32 length (of what follows), u8 type, u32 id, payload.
 * Integers are little-endian.
 *   in  'R' run:  u32 argc, u32 envc, then NUL-terminated strings: cwd, stdout path, stderr path
 *                 ('' = a pipe whose bytes come back in 'O' / 'E' frames), argv[argc], env[envc].
 *                 argv[0] without a '/' is looked up on the PATH of env (default /usr/bin:/bin).
 *   in  'K' kill: u32 signal, sent to the child's process group.
 *   out 'O' / 'E': bytes the child wrote to its stdout / stderr pipe.
 *   out 'X' exit:  i32 exit code (-1 when a signal ended it), i32 signal number. Sent once the
 *                 child has exited and both its pipes are closed.
 *   out 'F' failed to start: i32 errno, then the errno's name (ENOENT...). No 'X' follows.
 *   in  'B' run in a sandbox (only after `--sandbox BASE`, see sandbox.c): as 'R' with a u32 count
 *                 of steps and a u32 count of cgroup.procs files after envc, and after env the steps,
 *                 each a kind byte (see struct sandbox_op) and its NUL-terminated strings: two for
 *                 binds and symlinks, else one; then the cgroup.procs files, NUL-terminated.
 *                 The cwd and PATH are inside the sandbox. 'O', 'E' and 'X' answer as for 'R';
 *                 'F' with EPERM when the helper was started without `--sandbox`.
 *   out 'N' (id 0, then the program exits): `--sandbox` cannot work here, and the reason.
 * Every child leads a new session (so a process group); when it exits, what it left running in its
 * group is killed. When stdin closes, or Kiln dies, or SIGTERM / SIGINT / SIGHUP arrives, every group is
 * killed and the program ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kiln-spawn.h"

struct child {
  uint32_t id;
  pid_t pid;
  int out, err; /* pipe read ends, -1 once closed or when a file was given */
  int exited;
  int status;
  int sandboxed; /* pid is a sandbox's pid 1: killing it ends everything inside */
  int status_fd; /* a sandbox's status pipe (its exit code before its teardown), or -1 */
};

static struct child *children;
static size_t nchildren, capchildren;

/* Kills a child's process group and, for a sandbox, its pid 1 (which may not lead its group yet). */
static void kill_child(const struct child *c, int sig) {
  kill(-c->pid, sig);
  if (c->sandboxed) kill(c->pid, sig);
}

static void die(const char *what) {
  perror(what);
  for (size_t i = 0; i < nchildren; i++) kill_child(&children[i], SIGKILL);
  exit(1);
}

static void write_all(const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(1, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("kiln-spawn: write");
    }
    p += n;
    len -= (size_t)n;
  }
}

static void send_frame(char type, uint32_t id, const void *payload, uint32_t len) {
  unsigned char header[9];
  uint32_t total = 5 + len;
  memcpy(header, &total, 4);
  header[4] = (unsigned char)type;
  memcpy(header + 5, &id, 4);
  write_all(header, sizeof header);
  if (len > 0) write_all(payload, len);
}

static int read_all(void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = read(0, p, len);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    p += n;
    len -= (size_t)n;
  }
  return 1;
}

const char *resolve_program(const char *argv0, const char *path, const char *cwd, char *buf, size_t size) {
  if (strchr(argv0, '/')) return argv0;
  const char *dirs = path ? path : "/usr/bin:/bin";
  while (*dirs) {
    const char *end = strchr(dirs, ':');
    size_t dlen = end ? (size_t)(end - dirs) : strlen(dirs);
    const char *dir = dlen == 0 ? "." : dirs;
    size_t used = dlen == 0 ? 1 : dlen;
    int n = dir[0] == '/' ? snprintf(buf, size, "%.*s/%s", (int)used, dir, argv0)
                          : snprintf(buf, size, "%s/%.*s/%s", cwd, (int)used, dir, argv0);
    struct stat st;
    if (n > 0 && (size_t)n < size && stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return buf;
    if (!end) break;
    dirs = end + 1;
  }
  return NULL;
}

static void fail_start(uint32_t id, int err) {
  char payload[64];
  int32_t code = err;
  memcpy(payload, &code, 4);
  const char *name = strerrorname_np(err);
  size_t len = strlen(name ? name : "EIO");
  memcpy(payload + 4, name ? name : "EIO", len);
  send_frame('F', id, payload, (uint32_t)(4 + len));
}

/* Reads `n` NUL-terminated strings from [*p, end); 0 when the payload ends first. */
static int take_strings(char **p, char *end, char **out, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    char *nul = memchr(*p, 0, (size_t)(end - *p));
    if (!nul) return 0;
    out[i] = *p;
    *p = nul + 1;
  }
  return 1;
}

/* Parses a 'R' or 'B' payload into `r`; the arrays it allocates are freed by free_request. */
static void parse_request(char *payload, uint32_t len, int sandboxed, struct run_request *r) {
  uint32_t counts[4] = {0, 0, 0, 0};
  size_t head = sandboxed ? 16 : 8;
  if (len < head) die("kiln-spawn: short run request");
  memcpy(counts, payload, head);
  uint32_t argc = counts[0], envc = counts[1], opc = counts[2], cgc = counts[3];
  char *p = payload + head, *end = payload + len;
  char *fixed[3];
  r->argv = calloc((size_t)argc + 1, sizeof(char *));
  r->env = calloc((size_t)envc + 1, sizeof(char *));
  r->ops = calloc(opc ? opc : 1, sizeof *r->ops);
  r->nops = opc;
  r->cgroups = calloc((size_t)cgc + 1, sizeof(char *));
  r->ncgroups = cgc;
  if (!r->argv || !r->env || !r->ops || !r->cgroups) die("kiln-spawn: calloc");
  if (!take_strings(&p, end, fixed, 3) || !take_strings(&p, end, r->argv, argc) || !take_strings(&p, end, r->env, envc))
    die("kiln-spawn: malformed run request");
  r->cwd = fixed[0];
  r->out_path = fixed[1];
  r->err_path = fixed[2];
  r->path = NULL;
  for (uint32_t i = 0; i < envc; i++)
    if (strncmp(r->env[i], "PATH=", 5) == 0) r->path = r->env[i] + 5;
  for (uint32_t i = 0; i < opc; i++) {
    if (p >= end) die("kiln-spawn: malformed sandbox step");
    struct sandbox_op *op = &r->ops[i];
    op->kind = *p++;
    int two = op->kind == 'r' || op->kind == 'w' || op->kind == 'l' || op->kind == 'L';
    char *strings[2] = {NULL, NULL};
    if (!take_strings(&p, end, strings, two ? 2 : 1)) die("kiln-spawn: malformed sandbox step");
    op->from = two ? strings[0] : NULL;
    op->at = two ? strings[1] : strings[0];
  }
  if (!take_strings(&p, end, r->cgroups, cgc)) die("kiln-spawn: malformed cgroup list");
}

static void free_request(struct run_request *r) {
  free(r->argv);
  free(r->env);
  free(r->ops);
  free(r->cgroups);
}

/* A plain run: posix_spawn in a new session, with `in`, `out`, `err` as its 0, 1, 2. */
static pid_t spawn_plain(const struct run_request *r, int in, int out, int err, int *error) {
  char found[4096];
  const char *program = r->argv[0] ? resolve_program(r->argv[0], r->path, r->cwd, found, sizeof found) : NULL;
  if (!program) {
    *error = ENOENT;
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in, 0);
  posix_spawn_file_actions_adddup2(&fa, out, 1);
  posix_spawn_file_actions_adddup2(&fa, err, 2);
  posix_spawn_file_actions_addchdir_np(&fa, r->cwd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGCHLD);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGHUP);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  *error = posix_spawn(&pid, program, &fa, &attr, r->argv, r->env);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return *error ? -1 : pid;
}

/* A stream's descriptor for the child: the sink file, or a pipe's write end (its read end in *ours). */
static int open_stream(const char *path, int *ours) {
  *ours = -1;
  if (*path) return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int pipes[2];
  if (pipe2(pipes, O_CLOEXEC) != 0) return -1;
  /* Our end never blocks: a read with nothing to read just says so. */
  fcntl(pipes[0], F_SETFL, O_NONBLOCK);
  *ours = pipes[0];
  return pipes[1];
}

static void start(uint32_t id, char *payload, uint32_t len, int sandboxed) {
  struct run_request r;
  parse_request(payload, len, sandboxed, &r);
  int out_read = -1, err_read = -1, err = 0;
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int out = open_stream(r.out_path, &out_read);
  if (out < 0) err = errno;
  int err_fd = err ? -1 : open_stream(r.err_path, &err_read);
  if (!err && err_fd < 0) err = errno;
  if (!err && in < 0) err = errno;
  pid_t pid = -1;
  int status_pipe[2] = {-1, -1};
  if (!err && sandboxed) {
    if (pipe2(status_pipe, O_CLOEXEC) != 0) err = errno;
    if (!err) fcntl(status_pipe[0], F_SETFL, O_NONBLOCK);
    if (!err) pid = sandbox_start(&r, in, out, err_fd, status_pipe[1]);
    if (!err && pid < 0) err = errno;
    if (status_pipe[1] >= 0) close(status_pipe[1]);
    if (err && status_pipe[0] >= 0) close(status_pipe[0]);
  } else if (!err) {
    pid = spawn_plain(&r, in, out, err_fd, &err);
  }
  free_request(&r);
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (err_fd >= 0) close(err_fd);
  if (err) {
    if (out_read >= 0) close(out_read);
    if (err_read >= 0) close(err_read);
    fail_start(id, err);
    return;
  }
  if (nchildren == capchildren) {
    capchildren = capchildren ? capchildren * 2 : 64;
    children = realloc(children, capchildren * sizeof *children);
    if (!children) die("kiln-spawn: realloc");
  }
  children[nchildren++] = (struct child){id, pid, out_read, err_read, 0, 0, sandboxed, status_pipe[0]};
}

/* Sends 'X' for a child that has exited and whose pipes are closed, and forgets it. */
static void finish_if_done(size_t i) {
  struct child *c = &children[i];
  if (!c->exited || c->out >= 0 || c->err >= 0) return;
  if (c->status_fd >= 0) close(c->status_fd);
  int32_t result[2];
  result[0] = WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1;
  result[1] = WIFSIGNALED(c->status) ? WTERMSIG(c->status) : 0;
  send_frame('X', c->id, result, sizeof result);
  children[i] = children[--nchildren];
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < nchildren; i++) {
      if (children[i].pid != pid) continue;
      children[i].exited = 1;
      children[i].status = status;
      kill(-pid, SIGKILL); /* whatever it left running in its group */
      finish_if_done(i);
      /* A sandbox that reported its status was forgotten already: reaping it is all that is left. */
      break;
    }
  }
}

/* A sandbox's status: the command is done, even though its pid 1 may still be tearing down. */
static void read_status(size_t i) {
  struct child *c = &children[i];
  int32_t code;
  ssize_t n = read(c->status_fd, &code, sizeof code);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  close(c->status_fd);
  c->status_fd = -1;
  if (n != sizeof code) return; /* it ended without one: its exit, when reaped, says how */
  c->exited = 1;
  c->status = (code & 0xff) << 8; /* as waitpid reports an exit with this code */
  finish_if_done(i);
}

static void drain(size_t i, int *fd, char type) {
  static char buf[65536];
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n > 0) {
    send_frame(type, children[i].id, buf, (uint32_t)n);
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  close(*fd);
  *fd = -1;
  finish_if_done(i);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  /* kiln-spawn [--sandbox BASE [--user UID:GID] [--network-per-run]] */
  int sandbox = argc >= 3 && strcmp(argv[1], "--sandbox") == 0;
  struct sandbox_config config = {-1, -1, 0};
  int usage = argc > 1 && !sandbox;
  for (int i = 3; sandbox && i < argc && !usage; i++) {
    if (strcmp(argv[i], "--user") == 0 && i + 1 < argc && sscanf(argv[i + 1], "%d:%d", &config.uid, &config.gid) == 2) i++;
    else if (strcmp(argv[i], "--network-per-run") == 0) config.network_per_run = 1;
    else usage = 1;
  }
  if (usage) {
    fprintf(stderr, "usage: kiln-spawn [--sandbox BASE [--user UID:GID] [--network-per-run]]\n");
    return 2;
  }
  /* SIGCHLD, and the signals that end us, come through a descriptor; ending kills every group. */
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGHUP);
  sigprocmask(SIG_BLOCK, &handled, NULL);
  prctl(PR_SET_PDEATHSIG, SIGTERM); /* Kiln died: end as if asked to */
  int sfd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) die("kiln-spawn: signalfd");
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);
  if (sandbox) {
    char why[1024];
    if (sandbox_setup_helper(argv[2], &config, why, sizeof why) != 0) {
      send_frame('N', 0, why, (uint32_t)strlen(why));
      return 1;
    }
  }
  send_frame('S', 0, NULL, 0); /* started */

  struct pollfd *fds = NULL;
  size_t capfds = 0;
  for (;;) {
    size_t need = 2 + 3 * nchildren;
    if (need > capfds) {
      capfds = need * 2;
      fds = realloc(fds, capfds * sizeof *fds);
      if (!fds) die("kiln-spawn: realloc");
    }
    size_t n = 0;
    fds[n++] = (struct pollfd){0, POLLIN, 0};
    fds[n++] = (struct pollfd){sfd, POLLIN, 0};
    for (size_t i = 0; i < nchildren; i++) {
      fds[n++] = (struct pollfd){children[i].out, POLLIN, 0}; /* a negative fd is skipped */
      fds[n++] = (struct pollfd){children[i].err, POLLIN, 0};
      fds[n++] = (struct pollfd){children[i].exited ? -1 : children[i].status_fd, POLLIN, 0};
    }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      die("kiln-spawn: poll");
    }
    if (fds[1].revents) {
      struct signalfd_siginfo info;
      int end = 0;
      while (read(sfd, &info, sizeof info) > 0)
        if (info.ssi_signo != SIGCHLD) end = 1;
      if (end) break;
      reap();
    }
    /* Children's pipes, from the end: finishing a child moves the last one into its place. */
    for (size_t k = nchildren; k-- > 0;) {
      if (2 + 3 * k + 2 >= n) continue; /* added after this poll */
      short out_ev = fds[2 + 3 * k].revents, err_ev = fds[2 + 3 * k + 1].revents, status_ev = fds[2 + 3 * k + 2].revents;
      if (k < nchildren && out_ev && children[k].out >= 0) drain(k, &children[k].out, 'O');
      if (k < nchildren && err_ev && children[k].err >= 0) drain(k, &children[k].err, 'E');
      if (k < nchildren && status_ev && children[k].status_fd >= 0 && !children[k].exited) read_status(k);
    }
    if (fds[0].revents) {
      unsigned char header[9];
      uint32_t total, id;
      if (!read_all(header, sizeof header)) break;
      memcpy(&total, header, 4);
      memcpy(&id, header + 5, 4);
      uint32_t len = total - 5;
      char *payload = malloc(len ? len : 1);
      if (!payload || !read_all(payload, len)) break;
      if (header[4] == 'R') start(id, payload, len, 0);
      else if (header[4] == 'B' && sandbox) start(id, payload, len, 1);
      else if (header[4] == 'B') fail_start(id, EPERM); /* started without --sandbox */
      else if (header[4] == 'K' && len >= 4) {
        int32_t sig;
        memcpy(&sig, payload, 4);
        for (size_t i = 0; i < nchildren; i++)
          if (children[i].id == id && !children[i].exited) kill_child(&children[i], sig);
      }
      free(payload);
    }
  }
  for (size_t i = 0; i < nchildren; i++) kill_child(&children[i], SIGKILL);
  return 0;
}
