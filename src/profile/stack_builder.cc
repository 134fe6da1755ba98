// SPDX-License-Identifier: Apache-2.0
#include "profile/stack_builder.h"

#include <algorithm>

#include "base/file_util.h"
#include "base/strings.h"
#include "profile/dwarf_unwinder.h"
#include "profile/python_merge.h"

namespace vigil {

StackBuilder::StackBuilder(StackBuilderOptions options, Symbolizer* symbolizer,
                           DwarfUnwinder* unwinder)
    : options_(std::move(options)), symbolizer_(symbolizer), unwinder_(unwinder) {}

StackBuilder::~StackBuilder() = default;

StackBuilder::ProcessInfo& StackBuilder::InfoOf(int pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) {
    return it->second;
  }
  ProcessInfo info;
  StatusOr<std::string> comm =
      ReadSmallFile(options_.proc_root + "/" + std::to_string(pid) + "/comm", 256);
  info.name = comm.ok() ? std::string(Trim(*comm)) : "pid " + std::to_string(pid);
  if (options_.python) {
    StatusOr<std::unique_ptr<PythonProcess>> python =
        PythonProcess::Attach(pid, options_.proc_root);
    if (python.ok()) {
      info.python = std::move(*python);
    }
  }
  return processes_.emplace(pid, std::move(info)).first->second;
}

void StackBuilder::Prepare(int pid) {
  InfoOf(pid);
  symbolizer_->MapsOf(pid);
  if (unwinder_ != nullptr) {
    unwinder_->Prepare(pid);
  }
}

std::vector<ProfileFrame> StackBuilder::Frames(const RawSample& sample) {
  std::vector<ProfileFrame> frames;
  for (uint64_t ip : sample.kernel_ips) {
    Frame f = symbolizer_->Symbolize(sample.pid, ip);
    ProfileFrame frame;
    frame.kind = FrameKind::kKernel;
    frame.module = "[kernel]";
    frame.function = f.known() ? f.function : "[kernel]";
    frames.push_back(std::move(frame));
  }
  const std::vector<uint64_t>* ips = &sample.user_ips;
  if (unwinder_ != nullptr && !sample.user_stack.empty() &&
      unwinder_->Unwind(sample, &user_ips_).ok() && user_ips_.size() > 1) {
    ips = &user_ips_;
    ++stats_.dwarf_unwound;
  }
  std::vector<ProfileFrame> user;
  for (size_t i = 0; i < ips->size(); ++i) {
    // Callers' addresses are return addresses: look up the call instruction instead.
    const uint64_t ip = (*ips)[i];
    Frame f = symbolizer_->Symbolize(sample.pid, i == 0 || ip == 0 ? ip : ip - 1);
    ProfileFrame frame;
    frame.function = f.function;
    frame.module = f.module;
    user.push_back(std::move(frame));
  }
  ProcessInfo& info = InfoOf(sample.pid);
  if (info.python != nullptr) {
    StatusOr<PythonThread> thread = info.python->ReadThread(sample.tid);
    if (thread.ok() && !thread->frames.empty()) {
      user = MergePythonFrames(user, thread->frames, info.python->module());
      ++stats_.python_samples;
      stats_.gil_samples += thread->holds_gil ? 1 : 0;
    } else if (!thread.ok() && thread.status().code() != StatusCode::kNotFound) {
      ++stats_.python_read_errors;
    }
  }
  frames.insert(frames.end(), user.begin(), user.end());
  if (options_.process_root) {
    ProfileFrame root;
    root.kind = FrameKind::kProcess;
    root.function = info.name;
    frames.push_back(std::move(root));
  }
  return frames;
}

void StackBuilder::Add(const RawSample& sample, Profile* profile) {
  std::vector<ProfileFrame> frames = Frames(sample);
  std::vector<int> ids;
  ids.reserve(frames.size());
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    ids.push_back(profile->Intern(*it));
  }
  profile->Add(ids);
}

}  // namespace vigil
