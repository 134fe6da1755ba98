// SPDX-License-Identifier: Apache-2.0
// The main() the fuzz harnesses get in the ordinary (g++, ASan+UBSan) test build, where
// libFuzzer is not available: it runs LLVMFuzzerTestOneInput on every file of the given corpus
// and regression directories, then on a fixed number of deterministic mutations of them (a
// seeded PRNG: bit flips, byte edits, insertions, deletions, duplicated ranges, splices of two
// inputs), so `make test` exercises each harness briefly and the same way on every run. A crash,
// sanitizer report or broken invariant saves the input that caused it (as crash-<runs>-<hash>
// in $VIGIL_FUZZ_ARTIFACT_DIR, else the working directory) and fails the test.
//
//   <harness>_replay [--runs=N] [--max-seconds=S] [--seed=K] [--max-len=B] DIR|FILE...
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
// Provided by the sanitizer runtime when the build is sanitized; null otherwise.
extern "C" __attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));

// g++ links ASan and UBSan as two runtimes and the death callback above reaches only ASan's; a
// UBSan report (halt_on_error) must abort so that the SIGABRT handler below saves the input.
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1"; }

namespace {

constexpr size_t kMaxFileBytes = 1 << 20;

// The input being run, kept where a signal handler or the sanitizer's death callback can save it.
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;
uint64_t g_current_run = 0;
char g_artifact_dir[512] = ".";

// Async-signal-safe: only open/write/close and hand-rolled formatting.
void SaveCurrentInput() {
  static bool saved = false;
  if (saved || g_current == nullptr) {
    return;
  }
  saved = true;
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a, to tell artifacts apart.
  for (size_t i = 0; i < g_current_size; ++i) {
    hash = (hash ^ g_current[i]) * 1099511628211ULL;
  }
  char path[640];
  int n = 0;
  for (const char* p = g_artifact_dir; *p != '\0' && n < 512; ++p) {
    path[n++] = *p;
  }
  const char prefix[] = "/crash-";
  for (const char* p = prefix; *p != '\0'; ++p) {
    path[n++] = *p;
  }
  char digits[24];
  int d = 0;
  uint64_t run = g_current_run;
  do {
    digits[d++] = static_cast<char>('0' + run % 10);
    run /= 10;
  } while (run != 0);
  while (d > 0) {
    path[n++] = digits[--d];
  }
  path[n++] = '-';
  for (int shift = 60; shift >= 0; shift -= 4) {
    path[n++] = "0123456789abcdef"[(hash >> shift) & 0xf];
  }
  path[n] = '\0';
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    size_t off = 0;
    while (off < g_current_size) {
      const ssize_t w = write(fd, g_current + off, g_current_size - off);
      if (w <= 0) {
        break;
      }
      off += static_cast<size_t>(w);
    }
    close(fd);
    const char msg[] = "\nreplay: input saved as ";
    [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    ignored = write(STDERR_FILENO, path, static_cast<size_t>(n));
    ignored = write(STDERR_FILENO, "\n", 1);
  }
}

void OnFatalSignal(int sig) {
  SaveCurrentInput();
  signal(sig, SIG_DFL);
  raise(sig);
}

struct Options {
  uint64_t runs = 1000;
  double max_seconds = 30;
  uint64_t seed = 1;
  size_t max_len = 64 * 1024;
  std::vector<std::string> inputs;
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return false;
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  if (out->size() > kMaxFileBytes) {
    out->resize(kMaxFileBytes);
  }
  return true;
}

// Files of `path` (itself when a file), sorted by name so every run sees the same order.
std::vector<std::string> ListInputs(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return {};
  }
  if (!S_ISDIR(st.st_mode)) {
    return {path};
  }
  std::vector<std::string> out;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == ".." || name.starts_with(".")) {
        continue;
      }
      for (std::string& sub : ListInputs(path + "/" + name)) {
        out.push_back(std::move(sub));
      }
    }
    closedir(dir);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One to four random edits of `in`, bounded by max_len; `other` is another input for splicing.
std::string Mutate(const std::string& in, const std::string& other, size_t max_len,
                   std::mt19937_64& rng) {
  std::string s = in;
  auto pick = [&rng](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  static constexpr const char* kTokens[] = {"0",
                                            "-1",
                                            "1e308",
                                            "-9223372036854775808",
                                            "18446744073709551616",
                                            "\"",
                                            "{",
                                            "}",
                                            "[",
                                            "]",
                                            ",",
                                            ":",
                                            "\\u0000",
                                            "\n",
                                            "=",
                                            "/",
                                            "..",
                                            "%",
                                            "\x1f\x8b",
                                            "\xff\xff\xff\x7f",
                                            "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
                                            "null",
                                            "NaN",
                                            "true"};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 9) {
      case 0:  // Flip a bit.
        if (!s.empty()) {
          s[pick(s.size())] ^= static_cast<char>(1 << (rng() % 8));
        }
        break;
      case 1:  // Set a byte.
        if (!s.empty()) {
          s[pick(s.size())] = static_cast<char>(rng());
        }
        break;
      case 2:  // Insert a byte.
        s.insert(s.begin() + static_cast<long>(pick(s.size() + 1)), static_cast<char>(rng()));
        break;
      case 3: {  // Erase a range.
        if (!s.empty()) {
          const size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(s.size() - at, 64)));
        }
        break;
      }
      case 4: {  // Duplicate a range.
        if (!s.empty()) {
          const size_t at = pick(s.size());
          const std::string chunk = s.substr(at, 1 + pick(std::min<size_t>(s.size() - at, 64)));
          s.insert(pick(s.size() + 1), chunk);
        }
        break;
      }
      case 5:  // Insert a token parsers care about.
        s.insert(pick(s.size() + 1), kTokens[pick(std::size(kTokens))]);
        break;
      case 6:  // Truncate.
        s.resize(pick(s.size() + 1));
        break;
      case 7: {  // Splice: a prefix of this input and a suffix of another.
        const size_t cut = pick(s.size() + 1);
        s = s.substr(0, cut) + other.substr(pick(other.size() + 1));
        break;
      }
      default: {  // Overwrite with a run of one byte (lengths, counts, padding).
        if (!s.empty()) {
          const size_t at = pick(s.size());
          const size_t n = 1 + pick(std::min<size_t>(s.size() - at, 8));
          s.replace(at, n, n, static_cast<char>(rng() % 2 == 0 ? 0xff : 0x00));
        }
        break;
      }
    }
  }
  if (s.size() > max_len) {
    s.resize(max_len);
  }
  return s;
}

int Run(const std::string& input, uint64_t run) {
  g_current = reinterpret_cast<const uint8_t*>(input.data());
  g_current_size = input.size();
  g_current_run = run;
  const int rc = LLVMFuzzerTestOneInput(g_current, g_current_size);
  g_current = nullptr;
  return rc;
}

bool ParseFlag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') {
    return false;
  }
  *value = arg + n + 1;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (ParseFlag(argv[i], "--runs", &v)) {
      opt.runs = std::strtoull(v.c_str(), nullptr, 10);
    } else if (ParseFlag(argv[i], "--max-seconds", &v)) {
      opt.max_seconds = std::strtod(v.c_str(), nullptr);
    } else if (ParseFlag(argv[i], "--seed", &v)) {
      opt.seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (ParseFlag(argv[i], "--max-len", &v)) {
      opt.max_len = std::strtoull(v.c_str(), nullptr, 10);
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "replay: unknown flag %s\n", argv[i]);
      return 2;
    } else {
      opt.inputs.push_back(argv[i]);
    }
  }
  if (const char* dir = std::getenv("VIGIL_FUZZ_ARTIFACT_DIR"); dir != nullptr && *dir != '\0') {
    std::snprintf(g_artifact_dir, sizeof g_artifact_dir, "%s", dir);
  }
  if (__sanitizer_set_death_callback != nullptr) {
    __sanitizer_set_death_callback(SaveCurrentInput);
  }
  signal(SIGABRT, OnFatalSignal);
  signal(SIGSEGV, OnFatalSignal);
  signal(SIGBUS, OnFatalSignal);
  signal(SIGFPE, OnFatalSignal);
  if (LLVMFuzzerInitialize != nullptr) {
    LLVMFuzzerInitialize(&argc, &argv);
  }

  std::vector<std::string> corpus;
  for (const std::string& path : opt.inputs) {
    const std::vector<std::string> files = ListInputs(path);
    if (files.empty()) {
      std::fprintf(stderr, "replay: no inputs in %s\n", path.c_str());
      return 2;
    }
    for (const std::string& file : files) {
      std::string bytes;
      if (!ReadFile(file, &bytes)) {
        std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
        return 2;
      }
      corpus.push_back(std::move(bytes));
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "replay: give at least one corpus directory or file\n");
    return 2;
  }

  uint64_t run = 0;
  for (const std::string& input : corpus) {
    Run(input, run++);
  }
  Run(std::string(), run++);  // The empty input.

  std::mt19937_64 rng(opt.seed);
  const auto start = std::chrono::steady_clock::now();
  uint64_t mutations = 0;
  for (; mutations < opt.runs; ++mutations) {
    if ((mutations & 63) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
            opt.max_seconds) {
      std::fprintf(stderr, "replay: time budget of %.0f s reached after %llu of %llu mutations\n",
                   opt.max_seconds, static_cast<unsigned long long>(mutations),
                   static_cast<unsigned long long>(opt.runs));
      break;
    }
    const std::string& base = corpus[rng() % corpus.size()];
    const std::string& other = corpus[rng() % corpus.size()];
    Run(Mutate(base, other, opt.max_len, rng), run++);
  }
  std::printf("replay: %zu corpus inputs and %llu mutations (seed %llu) ran without a crash\n",
              corpus.size(), static_cast<unsigned long long>(mutations),
              static_cast<unsigned long long>(opt.seed));
  return 0;
}
