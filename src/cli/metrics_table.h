// SPDX-License-Identifier: Apache-2.0
// The `vigil metrics` table: one `name{labels}  value  unit` row per series, fitted to the
// terminal. Label sets are the long part (a GPU series carries uuid, model, job, user, ...), so
// when a row is wider than the terminal it first leaves out the labels that every row shares
// (nothing to tell rows apart by), then keeps both ends of long values (ids differ at the ends:
// "GPU-51..000001"), and only then cuts the labels to end in "...}". The metric name, the value
// and the unit always stay whole; a note under the table says how many rows were shortened,
// which labels were left out, and that --wide prints them whole. Pure function;
// thread-compatible.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vigil {

// `width`: terminal columns, 0 = no limit (--wide, or output that is not a terminal).
std::string RenderMetricsTable(const nlohmann::json& latest_reply, int width);

}  // namespace vigil
