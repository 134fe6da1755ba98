// SPDX-License-Identifier: Apache-2.0
#include "profile/profile_session.h"

#include <ctime>
#include <memory>

#include "profile/dwarf_unwinder.h"
#include "profile/perf_sampler.h"
#include "profile/symbolizer.h"

namespace vigil {

StatusOr<ProfileSessionResult> RunProfileSession(const ProfileSessionOptions& options) {
  SamplerOptions sampler_options;
  sampler_options.pids = options.pids;
  sampler_options.all = options.all;
  sampler_options.frequency_hz = options.frequency_hz;
  sampler_options.kernel_stacks = options.kernel_stacks;
  sampler_options.copy_user_stack = options.unwind == UnwindMode::kDwarf;
  sampler_options.proc_root = options.proc_root;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<PerfSampler> sampler, PerfSampler::Start(sampler_options));

  SymbolizerOptions symbolizer_options;
  symbolizer_options.proc_root = options.proc_root;
  symbolizer_options.debug_root = options.debug_root;
  Symbolizer symbolizer(symbolizer_options);
  std::unique_ptr<DwarfUnwinder> unwinder;
  if (options.unwind == UnwindMode::kDwarf) {
    unwinder = std::make_unique<DwarfUnwinder>(options.proc_root, options.debug_root);
  }
  StackBuilderOptions builder_options;
  builder_options.python = options.python;
  builder_options.proc_root = options.proc_root;
  StackBuilder builder(builder_options, &symbolizer, unwinder.get());

  for (int pid : options.pids) {
    builder.Prepare(pid);
  }
  ProfileSessionResult result;
  ProfileInfo& info = result.profile.info();
  info.event = sampler->event_name();
  info.frequency_hz = options.frequency_hz;
  info.pids = options.pids;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  info.start_unix_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  const auto start = std::chrono::steady_clock::now();
  VIGIL_RETURN_IF_ERROR(sampler->Run(start + options.duration, [&](const RawSample& sample) {
    builder.Add(sample, &result.profile);
  }));
  info.duration_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  info.lost_samples = sampler->stats().lost;
  info.python_samples = builder.stats().python_samples;
  info.gil_samples = builder.stats().gil_samples;
  result.stacks = builder.stats();
  result.samples = sampler->stats().samples;
  result.lost = sampler->stats().lost;
  result.threads = sampler->stats().threads_seen;
  result.kernel_stacks = sampler->kernel_stacks();
  return result;
}

}  // namespace vigil
