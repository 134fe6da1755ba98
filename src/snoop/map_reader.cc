// SPDX-License-Identifier: Apache-2.0
#include "snoop/map_reader.h"

#include <algorithm>
#include <cstring>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

namespace vigil::snoop {
namespace {

template <typename K, typename V>
std::vector<std::pair<K, V>> ReadAll(int fd, size_t cap) {
  std::vector<std::pair<K, V>> out;
  if (fd < 0) return out;
  K key;
  K next;
  bool first = true;
  while (out.size() < cap) {
    if (bpf_map_get_next_key(fd, first ? nullptr : &key, &next) != 0) break;
    first = false;
    V value;
    if (bpf_map_lookup_elem(fd, &next, &value) == 0) out.emplace_back(next, value);
    key = next;
  }
  return out;
}

template <typename K>
void DeleteWhere(int fd, uint32_t pid) {
  if (fd < 0) return;
  std::vector<K> doomed;
  K key;
  K next;
  bool first = true;
  while (bpf_map_get_next_key(fd, first ? nullptr : &key, &next) == 0) {
    first = false;
    if (next.pid == pid) doomed.push_back(next);
    key = next;
    if (doomed.size() > (1u << 20)) break;
  }
  for (const K& k : doomed) bpf_map_delete_elem(fd, &k);
}

}  // namespace

MapContents ReadMaps(const ProbeMapFds& fds, size_t max_entries) {
  MapContents c;
  c.launches = ReadAll<launch_key, uint64_t>(fds.launches, max_entries);
  c.syncs = ReadAll<sync_key, sync_stats>(fds.syncs, max_entries);
  c.sync_stacks = ReadAll<sync_stack_key, count_ns>(fds.sync_stacks, max_entries);
  c.outstanding = ReadAll<alloc_key, alloc_info>(fds.outstanding, max_entries);
  c.memory = ReadAll<mem_key, mem_stats>(fds.memory, max_entries);
  c.copies = ReadAll<copy_key, copy_stats>(fds.copies, max_entries);
  return c;
}

uint64_t ReadCounter(int counters_fd, uint32_t index) {
  int cpus = libbpf_num_possible_cpus();
  if (counters_fd < 0 || cpus <= 0 || index >= VS_CTR_COUNT) return 0;
  std::vector<uint64_t> values(static_cast<size_t>(cpus) * VS_CTR_COUNT);
  uint32_t key = 0;
  if (bpf_map_lookup_elem(counters_fd, &key, values.data()) != 0) return 0;
  uint64_t sum = 0;
  for (int cpu = 0; cpu < cpus; ++cpu)
    sum += values[static_cast<size_t>(cpu) * VS_CTR_COUNT + index];
  return sum;
}

StackRecord ReadStack(int stacks_fd, int64_t stack_id) {
  StackRecord record;
  if (stacks_fd < 0 || stack_id < 0) return record;
  stack_frames value{};
  uint64_t id = static_cast<uint64_t>(stack_id);
  if (bpf_map_lookup_elem(stacks_fd, &id, &value) != 0) return record;
  for (uint64_t ip : value.ips) {
    if (ip == 0) break;
    record.ips.push_back(ip);
  }
  const uint32_t depth = std::min<uint32_t>(value.py_depth, VS_MAX_PY_DEPTH);
  for (uint32_t i = 0; i < depth; ++i) {
    record.python.push_back(
        {value.py[i].code, value.py[i].position, ((value.py_entry >> i) & 1) != 0});
  }
  record.python_truncated = value.py_truncated != 0;
  return record;
}

std::optional<std::string> ReadFuncName(int func_names_fd, uint32_t pid, uint64_t handle) {
  func_name_key k{};
  k.pid = pid;
  k.handle = handle;
  func_name v{};
  if (func_names_fd < 0 || bpf_map_lookup_elem(func_names_fd, &k, &v) != 0) return std::nullopt;
  v.name[VS_NAME_LEN - 1] = '\0';
  return std::string(v.name);
}

void DeletePid(const ProbeMapFds& fds, uint32_t pid) {
  DeleteWhere<launch_key>(fds.launches, pid);
  DeleteWhere<sync_key>(fds.syncs, pid);
  DeleteWhere<sync_stack_key>(fds.sync_stacks, pid);
  DeleteWhere<alloc_key>(fds.outstanding, pid);
  DeleteWhere<mem_key>(fds.memory, pid);
  DeleteWhere<copy_key>(fds.copies, pid);
  DeleteWhere<func_name_key>(fds.func_names, pid);
  DeleteWhere<inflight_key>(fds.inflights, pid);
  DeleteWhere<thread_key>(fds.thread_devices, pid);
  DeleteWhere<ctx_key>(fds.ctx_devices, pid);
}

}  // namespace vigil::snoop
