// SPDX-License-Identifier: Apache-2.0
// Writes a synthetic PyTorch profiler (Kineto) trace of a chosen size for the vigil analyze
// benchmarks: training steps of CPU ops calling CUDA runtime launches, the kernels they launch
// (GEMMs, elementwise, NCCL all-reduce on a second stream), memcpy and memset, ac2g flows,
// python_function stacks, [memory] events, stream syncs, ProfilerStep annotations, with the
// args real traces carry (correlation, External id, grid/block, occupancy, collectives).
// Timestamps are float microseconds like recent PyTorch. Writes the .json and/or the .json.gz
// (gzip via zlib) in one pass.
//
// Usage: synth_kineto_trace --mb N [--json FILE] [--gz FILE] [--rank R] [--world W]
//                           [--level 1-9] [--seed S]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <zlib.h>

namespace {

struct Options {
  uint64_t bytes = 256ull << 20;
  std::string json_path;
  std::string gz_path;
  int rank = 0;
  int world = 1;
  int level = 6;
  uint64_t seed = 1;
};

// xorshift64*: deterministic and fast.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545F4914F6CDD1Dull;
  }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(Next() >> 11) / 9007199254740992.0;
  }
  int Pick(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t s_;
};

class Sink {
 public:
  bool Open(const Options& o) {
    if (!o.json_path.empty()) {
      json_ = std::fopen(o.json_path.c_str(), "wb");
      if (json_ == nullptr) return false;
    }
    if (!o.gz_path.empty()) {
      gz_ = gzopen(o.gz_path.c_str(), fmt::format("wb{}", o.level).c_str());
      if (gz_ == nullptr) return false;
      gzbuffer(gz_, 1 << 20);
    }
    return json_ != nullptr || gz_ != nullptr;
  }
  fmt::memory_buffer& buf() { return buf_; }
  uint64_t written() const { return written_ + buf_.size(); }
  bool Flush() {
    if (json_ != nullptr && std::fwrite(buf_.data(), 1, buf_.size(), json_) != buf_.size()) {
      return false;
    }
    if (gz_ != nullptr && buf_.size() > 0 &&
        gzwrite(gz_, buf_.data(), static_cast<unsigned>(buf_.size())) <= 0) {
      return false;
    }
    written_ += buf_.size();
    buf_.clear();
    return true;
  }
  bool Close() {
    bool ok = Flush();
    if (json_ != nullptr) ok = std::fclose(json_) == 0 && ok;
    if (gz_ != nullptr) ok = gzclose(gz_) == Z_OK && ok;
    return ok;
  }

 private:
  std::FILE* json_ = nullptr;
  gzFile gz_ = nullptr;
  fmt::memory_buffer buf_;
  uint64_t written_ = 0;
};

constexpr int kPid = 1234;
constexpr int kMainTid = 1234;
constexpr int kBwdTid = 1301;
constexpr int kComputeStream = 7;
constexpr int kCommStream = 20;

struct Gemm {
  const char* op;
  const char* kernel;
  int grid[3];
  int block[3];
  int regs;
  int smem;
};

constexpr Gemm kGemms[] = {
    {"aten::addmm", "ampere_sgemm_128x64_tn", {512, 4, 1}, {128, 1, 1}, 122, 49152},
    {"aten::mm",
     "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1",
     {96, 8, 1},
     {256, 1, 1},
     232,
     81920},
    {"aten::bmm",
     "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
     {64, 16, 2},
     {128, 1, 1},
     238,
     73728},
};

constexpr const char* kElementwise[][2] = {
    {"aten::gelu",
     "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl"},
    {"aten::add_", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"},
    {"aten::layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"},
    {"aten::softmax", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>"},
};

class Generator {
 public:
  Generator(const Options& o, Sink* sink) : o_(o), sink_(sink), rng_(o.seed + o.rank) {}

  bool Run() {
    auto& b = sink_->buf();
    fmt::format_to(
        std::back_inserter(b),
        R"({{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045608448, "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472, "numSms": 132, "sharedMemPerBlockOptin": 232448}}],
  "distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": {}}},
  "traceEvents": [
)",
        o_.rank, o_.world);
    first_ = true;
    double t = 1700000000000.0 + o_.rank * 3.5;  // us
    for (int step = 0; sink_->written() < o_.bytes; ++step) {
      t = Step(step, t);
      if (b.size() > (4u << 20) && !sink_->Flush()) return false;
    }
    fmt::format_to(std::back_inserter(b),
                   "\n],\n  \"traceName\": \"rank{}.pt.trace.json\",\n"
                   "  \"baseTimeNanoseconds\": 1700000000000000000\n}}\n",
                   o_.rank);
    return sink_->Close();
  }

  uint64_t steps() const { return steps_; }

 private:
  fmt::memory_buffer& B() {
    auto& b = sink_->buf();
    if (!first_) b.append(std::string_view(",\n"));
    first_ = false;
    return b;
  }

  void X(const char* cat, std::string_view name, double ts, double dur, int tid,
         std::string_view args) {
    fmt::format_to(
        std::back_inserter(B()),
        R"(  {{"ph": "X", "cat": "{}", "name": "{}", "pid": {}, "tid": {}, "ts": {:.3f}, "dur": {:.3f}, "args": {{{}}}}})",
        cat, name, kPid, tid, ts, dur, args);
  }
  void GpuX(const char* cat, std::string_view name, double ts, double dur, int stream,
            std::string_view args) {
    fmt::format_to(
        std::back_inserter(B()),
        R"(  {{"ph": "X", "cat": "{}", "name": "{}", "pid": 0, "tid": {}, "ts": {:.3f}, "dur": {:.3f}, "args": {{{}}}}})",
        cat, name, stream, ts, dur, args);
  }
  void Flow(bool start, int64_t id, int pid, int tid, double ts) {
    fmt::format_to(
        std::back_inserter(B()),
        R"(  {{"ph": "{}", "id": {}, "pid": {}, "tid": {}, "ts": {:.3f}, "cat": "ac2g", "name": "ac2g"{}}})",
        start ? "s" : "f", id, pid, tid, ts, start ? "" : R"(, "bp": "e")");
  }

  // A runtime launch at `ts` and the GPU work it starts; returns when the launch call returns.
  double Launch(const char* api, const char* gpu_cat, std::string_view kernel, double ts,
                int stream, double gpu_dur, int64_t ext, std::string_view extra_args, int tid) {
    const int64_t corr = ++corr_;
    const double call = rng_.Uniform(3.0, 9.0);
    X("cuda_runtime", api, ts, call, tid,
      fmt::format(R"("External id": {}, "cbid": 211, "correlation": {})", ext, corr));
    Flow(true, corr, kPid, tid, ts);
    double& free_at = stream == kCommStream ? comm_free_ : compute_free_;
    const double start = std::max(free_at, ts + rng_.Uniform(4.0, 12.0));
    GpuX(gpu_cat, kernel, start, gpu_dur, stream,
         fmt::format(
             R"("External id": {}, "device": 0, "context": 1, "stream": {}, "correlation": {}{})",
             ext, stream, corr, extra_args));
    Flow(false, corr, 0, stream, start);
    free_at = start + gpu_dur;
    return ts + call;
  }

  // One op of a layer: kind 0-2 a GEMM, 3-6 an elementwise kernel, 7 a copy, 8 a memset.
  double Op(double ts, int tid, int kind) {
    const int64_t ext = ++ext_;
    double t = ts + 1.5;
    std::string_view op;
    if (kind < 3) {
      const Gemm& g = kGemms[kind];
      op = g.op;
      fmt::format_to(
          std::back_inserter(B()),
          R"(  {{"ph": "X", "cat": "python_function", "name": "torch/nn/modules/linear.py(114): forward", "pid": {}, "tid": {}, "ts": {:.3f}, "dur": {:.3f}, "args": {{"Python parent id": {}, "Python id": {}, "Python thread": 0}}}})",
          kPid, tid, ts - 2.0, 60.0, ext - 1, ext);
      const double gpu = rng_.Uniform(15.0, 90.0);
      std::string args = fmt::format(
          R"(, "registers per thread": {}, "shared memory": {}, "blocks per SM": {:.6f}, "warps per SM": {:.6f}, "grid": [{}, {}, {}], "block": [{}, {}, {}], "est. achieved occupancy %": {})",
          g.regs, g.smem, g.grid[0] * g.grid[1] * g.grid[2] / 132.0,
          g.grid[0] * g.grid[1] * g.grid[2] * g.block[0] / 32.0 / 132.0, g.grid[0], g.grid[1],
          g.grid[2], g.block[0], g.block[1], g.block[2], 12 + rng_.Pick(20));
      t = Launch("cudaLaunchKernel", "kernel", g.kernel, t, kComputeStream, gpu, ext, args, tid);
    } else if (kind < 7) {
      const auto& ew = kElementwise[kind - 3];
      op = ew[0];
      t = Launch(
          "cudaLaunchKernel", "kernel", ew[1], t, kComputeStream, rng_.Uniform(3.0, 30.0), ext,
          R"(, "registers per thread": 30, "shared memory": 0, "blocks per SM": 15.5, "warps per SM": 62.0, "grid": [2048, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 97)",
          tid);
    } else if (kind == 7) {
      op = "aten::copy_";
      const int64_t bytes = 4096 * (1 + rng_.Pick(256));
      t = Launch("cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", t,
                 kComputeStream, bytes / 20000.0 + 2.0, ext,
                 fmt::format(R"j(, "bytes": {}, "memory bandwidth (GB/s)": {:.3f})j", bytes, 20.0),
                 tid);
    } else {
      op = "aten::zero_";
      const int64_t bytes = 4096 * (1 + rng_.Pick(512));
      t = Launch("cudaMemsetAsync", "gpu_memset", "Memset (Device)", t, kComputeStream,
                 bytes / 900000.0 + 1.0, ext,
                 fmt::format(R"j(, "bytes": {}, "memory bandwidth (GB/s)": {:.3f})j", bytes, 900.0),
                 tid);
    }
    const double end = t + rng_.Uniform(2.0, 8.0);
    X("cpu_op", op, ts, end - ts, tid,
      fmt::format(
          R"("External id": {}, "Record function id": 0, "Ev Idx": {}, "Input Dims": [[4096, 1024], [1024, 1024]], "Input type": ["float", "float"], "Input Strides": [[1024, 1], [1024, 1]], "Concrete Inputs": ["", ""])",
          ext, ext));
    if (rng_.Pick(16) == 0) {
      fmt::format_to(
          std::back_inserter(B()),
          R"(  {{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": {}, "tid": {}, "ts": {:.3f}, "args": {{"Total Reserved": 8589934592, "Total Allocated": {}, "Bytes": {}, "Addr": 139800000000000, "Device Id": 0, "Device Type": 1}}}})",
          kPid, tid, end - 1.0, 4000000000 + rng_.Pick(1000000) * 1024,
          (rng_.Pick(2) ? 1 : -1) * 1048576);
    }
    return end + rng_.Uniform(8.0, 30.0);  // Python between ops
  }

  // A transformer-like layer: the same ops in the same order every time, as in a real model.
  double Layer(double t, int tid, int layer, bool backward) {
    static constexpr int kForward[] = {5, 0, 4, 1, 2, 6, 2, 0, 3, 4, 0, 3};
    static constexpr int kBackward[] = {3, 0, 0, 4, 3, 2, 2, 6, 2, 1, 1, 4, 0, 0, 5, 3};
    if (backward) {
      for (int k : kBackward) t = Op(t, tid, k);
    } else {
      for (int k : kForward) t = Op(t, tid, k);
    }
    if (layer % 4 == 0) t = Op(t, tid, 7);
    if (layer % 8 == 0) t = Op(t, tid, 8);
    return t;
  }

  double Step(int step, double ts) {
    ++steps_;
    const double start = ts;
    double t = ts + 5.0;
    // Forward on the main thread, backward on the autograd thread.
    for (int layer = 0; layer < 48; ++layer) t = Layer(t, kMainTid, layer, false);
    for (int layer = 47; layer >= 0; --layer) t = Layer(t, kBwdTid, layer, true);
    // Gradient all-reduce.
    const int64_t ext = ++ext_;
    const double ar = t;
    t = Launch(
        "cudaLaunchKernel", "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 2.0,
        kCommStream, rng_.Uniform(2000.0, 6000.0), ext,
        R"(, "registers per thread": 96, "shared memory": 0, "blocks per SM": 0.2, "warps per SM": 1.6, "grid": [24, 1, 1], "block": [544, 1, 1], "est. achieved occupancy %": 2)",
        kBwdTid);
    X("cpu_op", "record_param_comms", ar, t - ar + 3.0, kBwdTid,
      fmt::format(
          R"("External id": {}, "Collective name": "allreduce", "In msg nelems": 25165824, "Out msg nelems": 25165824, "In msg size": 100663296, "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg", "Group size": {}, "Seq": {})",
          ext, o_.world, step));
    t += 5.0;
    // The optimizer waits for the GPU.
    const double sync_end = std::max(t + 4.0, std::max(compute_free_, comm_free_) + 3.0);
    X("cuda_runtime", "cudaStreamSynchronize", t, sync_end - t, kMainTid,
      fmt::format(R"("cbid": 131, "correlation": {})", ++corr_));
    t = sync_end + 2.0;
    const int64_t step_ext = ++ext_;
    X("user_annotation", fmt::format("ProfilerStep#{}", step), start, t - start, kMainTid,
      fmt::format(R"("External id": {}, "Record function id": 0, "Ev Idx": {})", step_ext,
                  step_ext));
    GpuX("gpu_user_annotation", fmt::format("ProfilerStep#{}", step), start + 10.0,
         std::max(compute_free_, comm_free_) - start - 10.0, kComputeStream,
         R"("External id": 0, "device": 0, "stream": 7)");
    return t + 20.0;
  }

  const Options& o_;
  Sink* sink_;
  Rng rng_;
  bool first_ = true;
  int64_t corr_ = 1000;
  int64_t ext_ = 0;
  double compute_free_ = 0;
  double comm_free_ = 0;
  uint64_t steps_ = 0;
};

int Usage() {
  std::fprintf(stderr,
               "usage: synth_kineto_trace --mb N [--json FILE] [--gz FILE] [--rank R] [--world W] "
               "[--level 1-9] [--seed S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i + 1 >= argc) return Usage();
    const char* v = argv[++i];
    if (a == "--mb") {
      o.bytes = std::strtoull(v, nullptr, 10) << 20;
    } else if (a == "--json") {
      o.json_path = v;
    } else if (a == "--gz") {
      o.gz_path = v;
    } else if (a == "--rank") {
      o.rank = std::atoi(v);
    } else if (a == "--world") {
      o.world = std::atoi(v);
    } else if (a == "--level") {
      o.level = std::atoi(v);
    } else if (a == "--seed") {
      o.seed = std::strtoull(v, nullptr, 10);
    } else {
      return Usage();
    }
  }
  if (o.json_path.empty() && o.gz_path.empty()) return Usage();
  if (o.level < 1 || o.level > 9) return Usage();
  Sink sink;
  if (!sink.Open(o)) {
    std::perror("synth_kineto_trace: open");
    return 1;
  }
  Generator gen(o, &sink);
  if (!gen.Run()) {
    std::perror("synth_kineto_trace: write");
    return 1;
  }
  std::printf("%llu bytes, %llu steps\n", static_cast<unsigned long long>(sink.written()),
              static_cast<unsigned long long>(gen.steps()));
  return 0;
}
