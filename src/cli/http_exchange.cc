// SPDX-License-Identifier: Apache-2.0
#include "cli/http_exchange.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>

#include <fmt/format.h>

namespace vigil {
namespace {

// The plugin sits in lib/ next to bin/: <prefix>/bin/vigil and <prefix>/lib/vigil/http_client.so.
std::string PluginPath() {
  char exe[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string dir = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string("./vigil");
  dir = dir.substr(0, dir.rfind('/') + 1);
  return dir + "../lib/" + kHttpPluginFile;
}

StatusOr<HttpPluginEntry> LoadPlugin() {
  static std::once_flag once;
  static StatusOr<HttpPluginEntry> entry = InternalError("unset");
  std::call_once(once, [] {
    const std::string path = PluginPath();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    void* symbol = handle ? dlsym(handle, kHttpPluginSymbol) : nullptr;
    if (symbol) {
      entry = reinterpret_cast<HttpPluginEntry>(symbol);
    } else {
      const char* why = dlerror();
      entry = FailedPreconditionError(fmt::format(
          "the HTTP client plugin {} cannot be loaded ({}); it is built with vigil and must stay "
          "in lib/vigil/ beside its bin/",
          path, why ? why : "no entry point"));
    }
  });
  return entry;
}

}  // namespace

StatusOr<HttpReply> HttpExchange(const HttpRequest& request) {
  VIGIL_ASSIGN_OR_RETURN(HttpPluginEntry call, LoadPlugin());
  StatusOr<HttpReply> reply = InternalError("no reply");
  call(request, &reply);
  return reply;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string WithQuery(std::string path, const HttpParams& params) {
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [key, value] : params) {
    path += sep;
    path += PercentEncode(key);
    path += '=';
    path += PercentEncode(value);
    sep = '&';
  }
  return path;
}

}  // namespace vigil
