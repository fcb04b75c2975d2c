/*
 * The namespace sandbox of kiln-spawn, as Bazel's linux-sandbox does it natively.
 *
 * bubblewrap costs ~3 ms of CPU per process here: its own exec and dynamic linking, a new user
 * namespace, parsing /proc/self/mountinfo, and two forks. Here the helper makes the namespaces
 * every sandbox can share once (user, network with only loopback, ipc), and each run is one fork
 * of this small process that builds its root from the request's steps and starts the command.
 *
 * Each sandbox: new mount, pid, uts and cgroup namespaces; a tmpfs root holding only what the
 * steps put there (binds of host paths, read-only or writable, dirs, symlinks, /proc, a minimal
 * /dev, tmpfs); pivot_root into it with the host's tree detached; no capabilities and no new
 * privileges; hostname "localhost". Its pid 1 is the child that built it, which reaps until the
 * command exits, kills whatever else still runs inside, and reports the command's status (128 +
 * the signal when a signal ended it, as bwrap reports it) on a status pipe before it exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kiln-spawn.h"

#define SANDBOX_CLONE_FLAGS (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWCGROUP)

/* mount_setattr(2) (Linux 5.12), by number: older C libraries have no wrapper. */
struct kiln_mount_attr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
#define KILN_ATTR_RDONLY 0x1
#define KILN_ATTR_NOSUID 0x2
#define KILN_ATTR_NODEV 0x4
#define KILN_AT_RECURSIVE 0x8000

static char root[4096]; /* where each sandbox mounts its root tmpfs before pivoting into it */
static struct sandbox_config config = {-1, -1, 0};
static char dev[4096];  /* the minimal /dev, made once by the helper and bound into each sandbox */

/*
 * In a sandbox being built: says what failed on the command's stderr and ends the sandbox. Paths
 * inside it are built relative to its root ("./usr"), and shown without the dot.
 */
static void fail(const char *what, const char *path) {
  dprintf(2, "kiln-sandbox: cannot %s %s: %s\n", what, path[0] == '.' && path[1] == '/' ? path + 1 : path, strerror(errno));
  _exit(1);
}

/* `dir` and `name` joined by `separator` into a 4096-byte `buf`. */
static void join(char *buf, const char *dir, const char *separator, const char *name) {
  if (snprintf(buf, 4096, "%s%s%s", dir, separator, name) >= 4096) {
    errno = ENAMETOOLONG;
    fail("place", name);
  }
}

/* Directories this sandbox made (or found): mkdir -p starts below the deepest of them. */
static char *made[512];
static size_t nmade;

static int is_made(const char *path) {
  if (strcmp(path, ".") == 0) return 1;
  for (size_t i = nmade; i-- > 0;)
    if (strcmp(made[i], path) == 0) return 1;
  return 0;
}

static void remember(const char *path) {
  if (nmade < sizeof made / sizeof *made) made[nmade++] = strdup(path);
}

/* mkdir -p of a path relative to the root, each missing directory made once, top down. */
static int make_dirs(char *path, mode_t mode) {
  if (is_made(path)) return 0;
  char *start = path + strlen(path);
  while (start > path) { /* back to the deepest directory known to exist */
    char *slash = start - 1;
    while (slash > path && *slash != '/') slash--;
    if (slash == path) break;
    *slash = 0;
    int known = is_made(path);
    *slash = '/';
    start = slash;
    if (known) break;
  }
  for (char *slash = strchr(start + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = 0;
    int ok = mkdir(path, 0755) == 0 || errno == EEXIST;
    if (ok) remember(path);
    *slash = '/';
    if (!ok) return -1;
  }
  if (mkdir(path, mode) != 0 && errno != EEXIST) return -1;
  remember(path);
  return 0;
}

static void make_parent(char *path) {
  char *slash = strrchr(path, '/');
  if (!slash || slash == path) return;
  *slash = 0;
  int made_it = make_dirs(path, 0755);
  *slash = '/';
  if (made_it != 0) fail("make the directory of", path);
}

/* A mount point for `from`: a directory, or an empty file when `from` is not one. */
static void mount_point(const char *from, char *at) {
  struct stat st;
  if (stat(from, &st) != 0) fail("find", from);
  if (S_ISDIR(st.st_mode)) {
    if (make_dirs(at, 0755) != 0) fail("make the directory", at);
    return;
  }
  make_parent(at);
  int fd = open(at, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail("make the file", at);
  close(fd);
}

/* Sets mount attributes on `at` and everything mounted below it; remounts where the kernel is older. */
static void restrict_mount(const char *at, uint64_t attrs) {
#ifdef SYS_mount_setattr
  struct kiln_mount_attr attr = {attrs, 0, 0, 0};
  if (syscall(SYS_mount_setattr, AT_FDCWD, at, KILN_AT_RECURSIVE, &attr, sizeof attr) == 0) return;
  if (errno != ENOSYS) fail("restrict the mount", at);
#endif
  /* A remount must keep the flags the mount was locked with (nosuid, noexec...). */
  struct statvfs vfs;
  if (statvfs(at, &vfs) != 0) fail("inspect", at);
  unsigned long flags = MS_REMOUNT | MS_BIND;
  if (vfs.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (vfs.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (vfs.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (vfs.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  if ((attrs & KILN_ATTR_RDONLY) || (vfs.f_flag & ST_RDONLY)) flags |= MS_RDONLY;
  if ((attrs & KILN_ATTR_NOSUID) || (vfs.f_flag & ST_NOSUID)) flags |= MS_NOSUID;
  if ((attrs & KILN_ATTR_NODEV) || (vfs.f_flag & ST_NODEV)) flags |= MS_NODEV;
  if (mount(NULL, at, NULL, flags, NULL) != 0) fail("restrict the mount", at);
}

static void bind_path(const char *from, char *at, int writable) {
  mount_point(from, at);
  if (mount(from, at, NULL, MS_BIND | MS_REC, NULL) != 0) fail("mount", from);
  restrict_mount(at, KILN_ATTR_NOSUID | KILN_ATTR_NODEV | (writable ? 0 : KILN_ATTR_RDONLY));
}

static void link_at(const char *target, char *at) {
  if (symlink(target, at) == 0 || errno == EEXIST) return;
  if (errno != ENOENT) fail("make the symlink", at);
  make_parent(at);
  if (symlink(target, at) != 0 && errno != EEXIST) fail("make the symlink", at);
}

/*
 * bwrap's --dev, made once by the helper: the harmless device nodes bound from the host and the
 * usual links, with shm a link to the sandbox's own /tmp. Each sandbox binds it read-only, one
 * mount where making it would take twenty calls; writing to a device is no write to the mount.
 */
static int prepare_dev(char *why, size_t size) {
  static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
  static const char *const links[][2] = {
      {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
      {"/proc/self/fd/2", "stderr"}, {"/proc/kcore", "core"}, {"pts/ptmx", "ptmx"}, {"/tmp", "shm"},
  };
  if (mkdir(dev, 0755) != 0) return snprintf(why, size, "cannot make %s: %s", dev, strerror(errno)), -1;
  char path[4096], host[64];
  for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
    snprintf(host, sizeof host, "/dev/%s", nodes[i]);
    if (snprintf(path, sizeof path, "%s/%s", dev, nodes[i]) >= (int)sizeof path) return snprintf(why, size, "base path too long"), -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0) close(fd);
    if (fd < 0 || mount(host, path, NULL, MS_BIND, NULL) != 0)
      return snprintf(why, size, "cannot bind %s for the sandbox's /dev: %s", host, strerror(errno)), -1;
  }
  for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
    if (snprintf(path, sizeof path, "%s/%s", dev, links[i][1]) >= (int)sizeof path) return snprintf(why, size, "base path too long"), -1;
    if (symlink(links[i][0], path) != 0) return snprintf(why, size, "cannot make %s: %s", path, strerror(errno)), -1;
  }
  return 0;
}

static void apply(const struct sandbox_op *op) {
  char at[4096];
  join(at, ".", "", op->at);
  switch (op->kind) {
  case 'r':
  case 'w':
    bind_path(op->from, at, op->kind == 'w');
    break;
  case 'd':
    if (make_dirs(at, 0755) != 0) fail("make the directory", at);
    break;
  case 'l':
  case 'L':
    link_at(op->from, at);
    break;
  case 't':
    /* A directory of the root's own tmpfs is as private and as short-lived as a tmpfs of its own. */
    if (make_dirs(at, 01777) != 0 || chmod(at, 01777) != 0) fail("make the directory", at);
    break;
  case 'm':
    /* A tmpfs of its own: the path may lie under a read-only bind, whose directories it hides. */
    if (make_dirs(at, 0755) != 0) fail("make the directory", at);
    if (mount("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) fail("mount a tmpfs at", at);
    break;
  case 'p':
    if (make_dirs(at, 0755) != 0) fail("make the directory", at);
    if (mount("proc", at, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) fail("mount /proc at", at);
    break;
  case 'v':
    if (make_dirs(at, 0755) != 0) fail("make the directory", at);
    if (mount(dev, at, NULL, MS_BIND | MS_REC, NULL) != 0) fail("mount /dev at", at);
    restrict_mount(at, KILN_ATTR_RDONLY | KILN_ATTR_NOSUID);
    break;
  default:
    errno = EINVAL;
    fail("apply a step to", op->at);
  }
}

/*
 * No capabilities from here on, and none regained by exec: root gets none from running a program
 * (SECBIT_NOROOT, locked) and no_new_privs ignores setuid bits and file capabilities. One call
 * each, where emptying the bounding set would take 64. With a configured user, the command runs as
 * that host user (no supplementary groups), a stranger to the helper's files.
 */
static void drop_privileges(void) {
  const unsigned long securebits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                   SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (prctl(PR_SET_SECUREBITS, securebits, 0, 0, 0) != 0) fail("set", "securebits");
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (config.uid >= 0) {
    if (setgroups(0, NULL) != 0 || setresgid(config.gid, config.gid, config.gid) != 0) fail("switch to the group of", "the sandbox user");
    if (setresuid(config.uid, config.uid, config.uid) != 0) fail("switch to", "the sandbox user");
  }
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) != 0) fail("drop", "capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("set", "no_new_privs");
}

/* The tmpfs root with `ops` applied, made the root of this mount namespace. */
static void build_root(const struct sandbox_op *ops, size_t nops) {
  if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) fail("mount the root tmpfs at", root);
  /* Every step's path is relative to the root: no walk down to it for each of them. */
  if (chdir(root) != 0) fail("enter", root);
  for (size_t i = 0; i < nops; i++) apply(&ops[i]);
  /* The old root ends up stacked on the new one, then detached: nothing of the host stays reachable. */
  if (syscall(SYS_pivot_root, ".", ".") != 0) fail("pivot_root into", root);
  if (umount2(".", MNT_DETACH) != 0) fail("detach the old root from", root);
  if (chdir("/") != 0) fail("enter", "/");
}

static void finish(const struct run_request *r, int code, int status_fd);

/* The sandbox's pid 1: builds it, starts the command, and exits as the command did. */
static void init_process(const struct run_request *r, int in, int out, int err, int status_fd, int go) {
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(1);
  /* Only 0, 1 and 2 may hold the streams: closing them must let Kiln see their end. */
  close(in);
  close(out);
  close(err);
  if (go >= 0) {
    /* Nothing runs before the helper has moved us into the run's cgroups: it says which it could not. */
    int32_t answer[2] = {-1, EPIPE};
    ssize_t n = read(go, answer, sizeof answer);
    if (n != sizeof answer || answer[0] >= 0) {
      errno = answer[1];
      fail("join the cgroup", n == sizeof answer && (size_t)answer[0] < r->ncgroups ? r->cgroups[answer[0]] : "of the run");
    }
    close(go);
  }
  setsid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  syscall(SYS_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */);
  build_root(r->ops, r->nops);
  if (sethostname("localhost", 9) != 0) fail("set", "the hostname");
  drop_privileges();

  char found[4096];
  const char *program = resolve_program(r->argv[0], r->path, r->cwd, found, sizeof found);
  if (!program || chdir(r->cwd) != 0) {
    dprintf(2, "kiln: cannot run '%s' in %s: %s\n", r->argv[0], r->cwd, strerror(program ? errno : ENOENT));
    _exit(127);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t command;
  int spawned = posix_spawn(&command, program, NULL, &attr, r->argv, r->env);
  if (spawned != 0) {
    dprintf(2, "kiln: cannot run '%s' in %s: %s\n", r->argv[0], r->cwd, strerror(spawned));
    _exit(127);
  }
  int code = 1;
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid == command) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (pid < 0 && errno != EINTR) break;
  }
  finish(r, code, status_fd);
}

/*
 * The command has exited: ends what it left running (pid 1 is spared by kill(-1)), removes the
 * links made on host mounts, closes the streams and reports the status, all before exiting. The
 * namespaces' teardown in the kernel then happens after Kiln has its answer, not before.
 */
static void finish(const struct run_request *r, int code, int status_fd) {
  kill(-1, SIGKILL);
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
  }
  for (size_t i = 0; i < r->nops; i++)
    if (r->ops[i].kind == 'L') unlink(r->ops[i].at);
  close(0);
  close(1);
  close(2);
  int32_t status = code;
  if (write(status_fd, &status, sizeof status) != sizeof status) _exit(code);
  _exit(code);
}

/* Writes `pid` into each of the request's cgroup.procs files: -1, or the index of the one that refused. */
static int32_t join_cgroups(const struct run_request *r, pid_t pid) {
  char text[32];
  int len = snprintf(text, sizeof text, "%d\n", (int)pid);
  for (size_t i = 0; i < r->ncgroups; i++) {
    int fd = open(r->cgroups[i], O_WRONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : write(fd, text, (size_t)len);
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    if (n != len) return (int32_t)i;
  }
  return -1;
}

pid_t sandbox_start(const struct run_request *request, int in, int out, int err, int status_fd) {
  if (!request->argv[0]) {
    errno = ENOENT;
    return -1;
  }
  int go[2] = {-1, -1};
  if (request->ncgroups > 0 && pipe2(go, O_CLOEXEC) != 0) return -1;
  unsigned long flags = SANDBOX_CLONE_FLAGS | (config.network_per_run ? CLONE_NEWNET : 0);
  /* Like fork(): the child has a copy of this (single-threaded) process and its descriptors. */
  pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid == 0) {
    if (go[1] >= 0) close(go[1]);
    init_process(request, in, out, err, status_fd, go[0]);
  }
  int saved = errno;
  if (go[0] >= 0) close(go[0]);
  if (pid > 0 && go[1] >= 0) {
    /* The child waits for this answer: it joins from outside its cgroup namespace, before it runs anything. */
    int32_t answer[2] = {join_cgroups(request, pid), 0};
    answer[1] = answer[0] >= 0 ? errno : 0;
    if (write(go[1], answer, sizeof answer) != sizeof answer) kill(pid, SIGKILL);
  }
  if (go[1] >= 0) close(go[1]);
  errno = saved;
  return pid;
}

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A user namespace mapping only our own user and group: what an unprivileged helper needs. */
static int enter_user_namespace(char *why, size_t size) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER) != 0) return snprintf(why, size, "cannot create a user namespace: %s", strerror(errno)), -1;
  char map[64];
  snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
  if (write_file("/proc/self/uid_map", map) != 0) return snprintf(why, size, "cannot map the user: %s", strerror(errno)), -1;
  write_file("/proc/self/setgroups", "deny\n");
  snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
  if (write_file("/proc/self/gid_map", map) != 0) return snprintf(why, size, "cannot map the group: %s", strerror(errno)), -1;
  return 0;
}

static void loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  close(s);
}

/* Starts a sandbox with each kind of step and waits for it: the kernel allows every step, or says which not. */
static int probe(char *why, size_t size) {
  int pipes[2];
  if (pipe2(pipes, O_CLOEXEC) != 0) return snprintf(why, size, "pipe: %s", strerror(errno)), -1;
  static char *argv[] = {"true", NULL};
  static char *env[] = {NULL};
  struct sandbox_op ops[] = {{'p', NULL, "/proc"}, {'v', NULL, "/dev"}, {'t', NULL, "/tmp"}, {'r', "/usr", "/usr"}};
  struct run_request request = {"/", "", "", argv, env, "/kiln-sandbox-probe", ops, sizeof ops / sizeof *ops, NULL, 0};
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t pid = sandbox_start(&request, null, null, pipes[1], -1);
  int started = errno;
  close(null);
  close(pipes[1]);
  if (pid < 0) {
    close(pipes[0]);
    return snprintf(why, size, "cannot create the sandbox's namespaces: %s", strerror(started)), -1;
  }
  char said[512] = "";
  ssize_t n = read(pipes[0], said, sizeof said - 1);
  close(pipes[0]);
  said[n > 0 ? n : 0] = 0;
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  /* 127: `true` is not found in the empty root, which is as far as the probe goes. */
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && strstr(said, "kiln: cannot run")) return 0;
  char *newline = strchr(said, '\n');
  if (newline) *newline = 0;
  return snprintf(why, size, "%s", said[0] ? said : "the probe sandbox failed"), -1;
}

int sandbox_setup_helper(const char *base, const struct sandbox_config *given, char *why, size_t size) {
  config = *given;
  if (snprintf(root, sizeof root, "%s/root", base) >= (int)sizeof root || snprintf(dev, sizeof dev, "%s/dev", base) >= (int)sizeof dev)
    return snprintf(why, size, "base path too long"), -1;
  const int shared = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS;
  /* Privileged (root with CAP_SYS_ADMIN) needs no user namespace; anyone else does. */
  if (geteuid() != 0 || unshare(shared) != 0) {
    if (enter_user_namespace(why, size) != 0) return -1;
    if (unshare(shared) != 0) return snprintf(why, size, "cannot create network, ipc and mount namespaces: %s", strerror(errno)), -1;
  }
  /* Nothing mounted from here on propagates back to the host. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return snprintf(why, size, "cannot make mounts private: %s", strerror(errno)), -1;
  if (mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0) return snprintf(why, size, "cannot mount a tmpfs at %s: %s", base, strerror(errno)), -1;
  if (mkdir(root, 0700) != 0) return snprintf(why, size, "cannot make %s: %s", root, strerror(errno)), -1;
  if (prepare_dev(why, size) != 0) return -1;
  loopback_up();
  return probe(why, size);
}
