// SPDX-License-Identifier: Apache-2.0
#include "base/usage_error.h"

#include <algorithm>
#include <cstdio>

#include "base/closest_name.h"

namespace vigil {
namespace {

// The subcommand chain the parse reached: the app itself, then each parsed subcommand.
std::vector<CLI::App*> ParsedChain(CLI::App& app) {
  std::vector<CLI::App*> chain = {&app};
  for (;;) {
    std::vector<CLI::App*> subs = chain.back()->get_subcommands();
    if (subs.empty()) return chain;
    chain.push_back(subs.back());
  }
}

std::string CommandPath(const std::vector<CLI::App*>& chain) {
  std::string path;
  for (const CLI::App* a : chain) {
    if (a->get_name().empty()) continue;
    path += (path.empty() ? "" : " ") + a->get_name();
  }
  return path.empty() ? "this program" : path;
}

// Subcommand names (and aliases) of `app`, in --help order; hidden ones (no group) left out.
std::vector<std::string> SubcommandNames(CLI::App* app, bool with_aliases) {
  std::vector<std::string> names;
  for (CLI::App* sub : app->get_subcommands([](CLI::App* s) { return !s->get_group().empty(); })) {
    names.push_back(sub->get_name());
    if (with_aliases) {
      for (const std::string& alias : sub->get_aliases()) names.push_back(alias);
    }
  }
  return names;
}

// Every flag a token at the end of `chain` could have meant: its own and, as options fall
// through to the parent, those of the commands above it.
std::vector<std::string> FlagNames(const std::vector<CLI::App*>& chain) {
  std::vector<std::string> names;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const CLI::Option* opt : (*it)->get_options()) {
      for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
      for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
    }
  }
  return names;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

int ReportParseError(CLI::App& app, const CLI::ParseError& error) {
  const std::string kind = error.get_name();
  if (kind == "CallForHelp" || kind == "CallForAllHelp" || kind == "CallForVersion") {
    return app.exit(error);  // The help or version text, on stdout.
  }
  const std::vector<CLI::App*> chain = ParsedChain(app);
  CLI::App* at = chain.back();
  const std::string path = CommandPath(chain);
  std::vector<std::string> left = app.remaining(true);
  left.erase(std::remove(left.begin(), left.end(), "--"), left.end());
  if (!left.empty()) {
    const std::string& token = left.front();
    if (token.size() > 1 && token[0] == '-') {
      const std::string flag = token.substr(0, token.find('='));
      const std::string near = ClosestName(flag, FlagNames(chain));
      if (!near.empty()) {
        std::fprintf(stderr, "%s: unknown flag '%s'; did you mean '%s'?\n", path.c_str(),
                     flag.c_str(), near.c_str());
      } else {
        std::fprintf(stderr, "%s: unknown flag '%s' (see '%s --help')\n", path.c_str(),
                     flag.c_str(), path.c_str());
      }
      return kUsageExitCode;
    }
    const std::vector<std::string> commands = SubcommandNames(at, false);
    if (!commands.empty() && at->get_subcommands().empty()) {
      const std::string near = ClosestName(token, SubcommandNames(at, true));
      if (!near.empty()) {
        std::fprintf(stderr, "%s: unknown command '%s'; did you mean '%s'?\n", path.c_str(),
                     token.c_str(), near.c_str());
      } else {
        std::fprintf(stderr, "%s: unknown command '%s'; the commands are: %s\n", path.c_str(),
                     token.c_str(), JoinNames(commands).c_str());
      }
      return kUsageExitCode;
    }
    std::fprintf(stderr, "%s: unexpected argument '%s' (see '%s --help')\n", path.c_str(),
                 token.c_str(), path.c_str());
    return kUsageExitCode;
  }
  const std::vector<std::string> commands = SubcommandNames(at, false);
  if (kind == "RequiredError" && !commands.empty() && at->get_subcommands().empty() &&
      std::string_view(error.what()).find("ubcommand") != std::string_view::npos) {
    std::fprintf(stderr, "%s: needs a command: %s (see '%s --help')\n", path.c_str(),
                 JoinNames(commands).c_str(), path.c_str());
    return kUsageExitCode;
  }
  std::fprintf(stderr, "%s: %s (see '%s --help')\n", path.c_str(), error.what(), path.c_str());
  return kUsageExitCode;
}

}  // namespace vigil
