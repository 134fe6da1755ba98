// SPDX-License-Identifier: Apache-2.0
#include "profile/pprof_output.h"

#include <map>

#include "base/gzip.h"
#include "profile/pprof_profile.pb.h"

namespace vigil {
namespace {

class StringTable {
 public:
  explicit StringTable(perftools::profiles::Profile* out) : out_(out) { Index(""); }
  int64_t Index(const std::string& s) {
    auto [it, inserted] = ids_.emplace(s, static_cast<int64_t>(ids_.size()));
    if (inserted) {
      out_->add_string_table(s);
    }
    return it->second;
  }

 private:
  perftools::profiles::Profile* out_;
  std::map<std::string, int64_t> ids_;
};

}  // namespace

std::string WritePprofUncompressed(const Profile& profile) {
  perftools::profiles::Profile out;
  StringTable strings(&out);
  auto* samples = out.add_sample_type();
  samples->set_type(strings.Index("samples"));
  samples->set_unit(strings.Index("count"));
  auto* cpu = out.add_sample_type();
  cpu->set_type(strings.Index("cpu"));
  cpu->set_unit(strings.Index("nanoseconds"));
  const int64_t period = 1000000000 / std::max(1, profile.info().frequency_hz);
  out.mutable_period_type()->set_type(strings.Index("cpu"));
  out.mutable_period_type()->set_unit(strings.Index("nanoseconds"));
  out.set_period(period);
  out.set_time_nanos(profile.info().start_unix_ns);
  out.set_duration_nanos(profile.info().duration_ns);

  std::map<std::string, uint64_t> mappings;
  for (const ProfileFrame& frame : profile.frames()) {
    const std::string module = frame.module.empty() ? "[unknown]" : frame.module;
    if (frame.kind == FrameKind::kProcess || mappings.count(module) != 0) {
      continue;
    }
    const uint64_t id = mappings.size() + 1;
    mappings[module] = id;
    auto* m = out.add_mapping();
    m->set_id(id);
    m->set_filename(strings.Index(module));
    m->set_has_functions(true);
    m->set_has_filenames(frame.kind == FrameKind::kPython);
    m->set_has_line_numbers(frame.kind == FrameKind::kPython);
  }
  // Location and function ids are frame id + 1 (0 is reserved).
  for (size_t i = 0; i < profile.frames().size(); ++i) {
    const ProfileFrame& frame = profile.frames()[i];
    const uint64_t id = i + 1;
    auto* fn = out.add_function();
    fn->set_id(id);
    const std::string name =
        frame.kind == FrameKind::kKernel ? frame.function + " [kernel]" : frame.function;
    fn->set_name(strings.Index(name));
    fn->set_system_name(strings.Index(frame.function));
    fn->set_filename(strings.Index(frame.kind == FrameKind::kPython ? frame.file : frame.module));
    auto* loc = out.add_location();
    loc->set_id(id);
    if (frame.kind != FrameKind::kProcess) {
      loc->set_mapping_id(mappings[frame.module.empty() ? "[unknown]" : frame.module]);
    }
    auto* line = loc->add_line();
    line->set_function_id(id);
    line->set_line(frame.line);
  }
  for (const auto& [ids, count] : profile.stacks()) {
    auto* sample = out.add_sample();
    for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
      sample->add_location_id(static_cast<uint64_t>(*it) + 1);
    }
    sample->add_value(static_cast<int64_t>(count));
    sample->add_value(static_cast<int64_t>(count) * period);
  }
  return out.SerializeAsString();
}

std::string WritePprof(const Profile& profile) { return Gzip(WritePprofUncompressed(profile)); }

}  // namespace vigil
