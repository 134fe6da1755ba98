// SPDX-License-Identifier: Apache-2.0
// The push pipeline of the batch sinks (JSON lines, remote-write, fleet push): push_pipeline.h
// over sample batches, whose weight is their sample count. Null batches are ignored.
// Thread-safe as PushPipeline.
#pragma once

#include <cstddef>
#include <utility>

#include "metrics/metric.h"
#include "sinks/push_pipeline.h"

namespace vigil {

using PipelineStage = PushStage<BatchPtr>;

class SinkPipeline : public PushPipeline<BatchPtr> {
 public:
  SinkPipeline(PipelineOptions options, PipelineStage* stage)
      : PushPipeline(std::move(options), stage, &SampleCount) {}

  void Push(BatchPtr batch) {
    if (batch) PushPipeline::Push(std::move(batch));
  }

 private:
  static size_t SampleCount(const BatchPtr& batch) { return batch->samples.size(); }
};

}  // namespace vigil
