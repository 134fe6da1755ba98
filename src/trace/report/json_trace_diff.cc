// SPDX-License-Identifier: Apache-2.0
// JSON of --diff: the top-level "diff" object (docs/trace-json-schema.md).
#include "trace/report/op_sections.h"

namespace vigil::trace {

void WriteTraceDiffJson(const TraceDiff& d, JsonWriter* w) {
  w->BeginObject();
  w->Key("base").BeginObject().Field("device", d.base_device).Field("runtime", d.base_runtime);
  w->EndObject();
  w->Key("test").BeginObject().Field("device", d.test_device).Field("runtime", d.test_runtime);
  w->EndObject();
  w->Field("same_vendor", d.SameVendor());
  auto pair = [&](std::string_view key, int64_t base, int64_t test) {
    w->Key(key).BeginObject().FieldMicros("base_us", base).FieldMicros("test_us", test);
    w->FieldMicros("delta_us", test - base).EndObject();
  };
  pair("gpu_span", d.base_span_ns, d.test_span_ns);
  pair("compute", d.base_compute_ns, d.test_compute_ns);
  pair("comm", d.base_comm_ns, d.test_comm_ns);
  pair("idle", d.base_idle_ns, d.test_idle_ns);
  pair("mean_step", d.base_step_ns, d.test_step_ns);
  w->Key("categories").BeginArray();
  for (const CategoryDelta& c : d.categories) {
    w->BeginObject().Field("category", KernelCategoryName(c.category));
    w->FieldMicros("base_us", c.base_ns).FieldMicros("test_us", c.test_ns);
    w->FieldMicros("delta_us", c.test_ns - c.base_ns);
    w->Field("base_count", c.base_count).Field("test_count", c.test_count).EndObject();
  }
  w->EndArray();
  w->Key("operators").BeginObject();
  w->Field("matched", d.operators_matched).Field("base_only", d.operators_base_only);
  w->Field("test_only", d.operators_test_only);
  w->FieldMicros("matched_base_us", d.matched_base_ns);
  w->FieldMicros("matched_test_us", d.matched_test_ns);
  w->Key("changed").BeginArray();
  for (const OperatorDelta& o : d.operators) {
    w->BeginObject().Field("category", KernelCategoryName(o.category)).Field("operator", o.op);
    w->FieldMicros("base_us", o.base_ns).FieldMicros("test_us", o.test_ns);
    w->FieldMicros("delta_us", o.test_ns - o.base_ns);
    w->Field("base_count", o.base_count).Field("test_count", o.test_count).EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("kernels").BeginArray();
  for (const KernelDelta& k : d.kernels) {
    w->BeginObject().Field("name", k.name);
    w->FieldMicros("base_us", k.base_ns).FieldMicros("test_us", k.test_ns);
    w->FieldMicros("delta_us", k.test_ns - k.base_ns);
    w->Field("base_count", k.base_count).Field("test_count", k.test_count).EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace vigil::trace
