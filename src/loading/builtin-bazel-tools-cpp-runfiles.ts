/**
 * `@bazel_tools//tools/cpp/runfiles`, written for Kiln: the C++ runfiles library with the API of
 * Bazel's (tools/cpp/runfiles/runfiles_src.h): `Runfiles::Create(argv0, &error)`,
 * `Runfiles::CreateForTest(&error)`, `Rlocation(path)` and `EnvVars()`. It finds the runfiles as the
 * Bash library does (builtin-bazel-tools-runfiles.ts): RUNFILES_DIR or RUNFILES_MANIFEST_FILE, else
 * `<argv0>.runfiles_manifest`, `<argv0>.runfiles/MANIFEST`, `<argv0>.runfiles`; a manifest entry
 * that is an exec path is found in the tree beside the manifest.
 */

const RUNFILES_H = `// The C++ runfiles library of Kiln's @bazel_tools (Bazel's API).
#ifndef TOOLS_CPP_RUNFILES_RUNFILES_H_
#define TOOLS_CPP_RUNFILES_RUNFILES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bazel {
namespace tools {
namespace cpp {
namespace runfiles {

class Runfiles {
 public:
  virtual ~Runfiles() {}

  // The runfiles of the program argv0 names; nullptr and *error set when there are none.
  static Runfiles* Create(const std::string& argv0, std::string* error = nullptr);
  static Runfiles* Create(const std::string& argv0, const std::string& source_repository,
                          std::string* error = nullptr);
  // The runfiles of a test, from TEST_SRCDIR / RUNFILES_* as the test runner sets them.
  static Runfiles* CreateForTest(std::string* error = nullptr);
  static Runfiles* CreateForTest(const std::string& source_repository, std::string* error = nullptr);

  // The absolute path of a runfile ("repo/pkg/file"); "" when it is not one or path is malformed.
  std::string Rlocation(const std::string& path) const;
  std::string Rlocation(const std::string& path, const std::string& source_repository) const {
    return Rlocation(path);
  }

  // RUNFILES_MANIFEST_FILE, RUNFILES_DIR and JAVA_RUNFILES for child processes.
  const std::vector<std::pair<std::string, std::string> >& EnvVars() const { return env_; }

 private:
  Runfiles(std::map<std::string, std::string> manifest, std::string manifest_file,
           std::string directory);
  static Runfiles* Find(const std::string& argv0, const std::string& manifest,
                        const std::string& directory, std::string* error);

  const std::map<std::string, std::string> manifest_;
  const std::string manifest_file_;
  const std::string directory_;
  std::vector<std::pair<std::string, std::string> > env_;
};

}  // namespace runfiles
}  // namespace cpp
}  // namespace tools
}  // namespace bazel

#endif  // TOOLS_CPP_RUNFILES_RUNFILES_H_
`;

const RUNFILES_CC = `// The C++ runfiles library of Kiln's @bazel_tools.
#include "tools/cpp/runfiles/runfiles.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace bazel {
namespace tools {
namespace cpp {
namespace runfiles {

namespace {

bool IsFile(const std::string& path) {
  struct stat s;
  return !path.empty() && stat(path.c_str(), &s) == 0 && S_ISREG(s.st_mode);
}

bool IsDirectory(const std::string& path) {
  struct stat s;
  return !path.empty() && stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
}

bool Exists(const std::string& path) {
  struct stat s;
  return !path.empty() && stat(path.c_str(), &s) == 0;
}

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value == nullptr ? "" : value;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char* cwd = getcwd(nullptr, 0);
  std::string result = cwd == nullptr ? path : std::string(cwd) + "/" + path;
  free(cwd);
  return result;
}

bool IsNormalized(const std::string& path) {
  if (path.empty() || path.find("//") != std::string::npos) return false;
  std::string::size_type start = 0;
  while (start <= path.size()) {
    std::string::size_type end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool ReadManifest(const std::string& file, std::map<std::string, std::string>* out, std::string* error) {
  std::ifstream in(file.c_str());
  if (!in.is_open()) {
    if (error) *error = "ERROR: cannot open runfiles manifest \\"" + file + "\\"";
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    std::string::size_type space = line.find(' ');
    if (space == std::string::npos) {
      (*out)[line] = "";
    } else {
      (*out)[line.substr(0, space)] = line.substr(space + 1);
    }
  }
  return true;
}

}  // namespace

Runfiles::Runfiles(std::map<std::string, std::string> manifest, std::string manifest_file,
                   std::string directory)
    : manifest_(manifest), manifest_file_(manifest_file), directory_(directory) {
  if (!manifest_file_.empty()) env_.push_back(std::make_pair("RUNFILES_MANIFEST_FILE", manifest_file_));
  if (!directory_.empty()) {
    env_.push_back(std::make_pair("RUNFILES_DIR", directory_));
    env_.push_back(std::make_pair("JAVA_RUNFILES", directory_));
  }
}

Runfiles* Runfiles::Find(const std::string& argv0, const std::string& manifest_env,
                         const std::string& directory_env, std::string* error) {
  std::string manifest = manifest_env;
  std::string directory = directory_env;
  if (!IsFile(manifest) && !IsDirectory(directory) && !argv0.empty()) {
    if (IsFile(argv0 + ".runfiles_manifest")) {
      manifest = argv0 + ".runfiles_manifest";
    } else if (IsFile(argv0 + ".runfiles/MANIFEST")) {
      manifest = argv0 + ".runfiles/MANIFEST";
    }
    if (IsDirectory(argv0 + ".runfiles")) directory = argv0 + ".runfiles";
  }
  if (!IsFile(manifest)) manifest = "";
  if (!IsDirectory(directory)) {
    directory = "";
    if (EndsWith(manifest, ".runfiles_manifest")) {
      directory = manifest.substr(0, manifest.size() - 9);
    } else if (EndsWith(manifest, "/MANIFEST")) {
      directory = manifest.substr(0, manifest.size() - 9);
    }
    if (!IsDirectory(directory)) directory = "";
  }
  if (manifest.empty() && directory.empty()) {
    if (error) *error = "ERROR: cannot find runfiles (argv0=\\"" + argv0 + "\\")";
    return nullptr;
  }
  std::map<std::string, std::string> entries;
  if (!manifest.empty() && !ReadManifest(manifest, &entries, error)) return nullptr;
  if (error) error->clear();
  return new Runfiles(entries, Absolute(manifest), Absolute(directory));
}

Runfiles* Runfiles::Create(const std::string& argv0, std::string* error) {
  return Find(argv0, Env("RUNFILES_MANIFEST_FILE"), Env("RUNFILES_DIR"), error);
}

Runfiles* Runfiles::Create(const std::string& argv0, const std::string& source_repository,
                           std::string* error) {
  return Create(argv0, error);
}

Runfiles* Runfiles::CreateForTest(std::string* error) {
  std::string directory = Env("RUNFILES_DIR");
  if (directory.empty()) directory = Env("TEST_SRCDIR");
  return Find("", Env("RUNFILES_MANIFEST_FILE"), directory, error);
}

Runfiles* Runfiles::CreateForTest(const std::string& source_repository, std::string* error) {
  return CreateForTest(error);
}

std::string Runfiles::Rlocation(const std::string& path) const {
  if (path.empty()) return "";
  if (path[0] == '/') return path;
  if (!IsNormalized(path)) return "";
  if (!directory_.empty() && Exists(directory_ + "/" + path)) return directory_ + "/" + path;
  if (manifest_.empty()) return directory_.empty() ? "" : directory_ + "/" + path;
  // The entry itself, else the nearest directory entry above it.
  std::string prefix = path;
  std::string rest;
  while (true) {
    std::map<std::string, std::string>::const_iterator it = manifest_.find(prefix);
    if (it != manifest_.end()) {
      const std::string& target = it->second;
      if (!target.empty() && target[0] == '/') return target + rest;
      return directory_.empty() ? Absolute(target) + rest : directory_ + "/" + prefix + rest;
    }
    std::string::size_type slash = prefix.rfind('/');
    if (slash == std::string::npos) return "";
    rest = prefix.substr(slash) + rest;
    prefix = prefix.substr(0, slash);
  }
}

}  // namespace runfiles
}  // namespace cpp
}  // namespace tools
}  // namespace bazel
`;

const BUILD = `package(default_visibility = ["//visibility:public"])

cc_library(
    name = "runfiles",
    srcs = ["runfiles.cc"],
    hdrs = ["runfiles.h"],
)
`;

export const CPP_RUNFILES_FILES: Readonly<Record<string, string>> = {
  'tools/cpp/runfiles/BUILD': BUILD,
  'tools/cpp/runfiles/runfiles.h': RUNFILES_H,
  'tools/cpp/runfiles/runfiles.cc': RUNFILES_CC,
};
