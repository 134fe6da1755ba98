// SPDX-License-Identifier: Apache-2.0
// Text renderings of vigil-fleet's replies for `vigil fleet`: the attribution report (from the
// fleet API or computed with PromQL; both have the /api/v1/attribution shape) as a table or CSV,
// and the jobs list and one job (GPU-hours plus MFU, model FLOP/s and step time from
// libvigil_client). Owner: cli. Pure functions; thread-compatible.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vigil {

// "GPU-hours by team from ... to ..." and one row per key (per bucket when bucketed) plus TOTAL.
// --by job adds MFU, TFLOP/S (model) and STEP-S columns when the rows carry them; "notes" of a
// PromQL report are printed under the table.
std::string RenderAttributionTable(const nlohmann::json& reply);
// Header "<by>[,bucket_start],gpu_hours,...,cost" (plus mfu_ratio,model_flops_per_second,
// step_seconds for --by job), one line per row; empty cells for unknown values.
std::string RenderAttributionCsv(const nlohmann::json& reply);
// /api/v1/jobs: one line per job. No jobs: why, from /api/v1/hosts (`hosts`, null when it
// could not be read): no host has reported yet, or hosts report but ran no job in the window.
std::string RenderJobsTable(const nlohmann::json& reply, const nlohmann::json& hosts = nullptr);
// /api/v1/hosts: one line per reporting vigild; none yet says how hosts start reporting.
std::string RenderHostsTable(const nlohmann::json& reply);
// /api/v1/jobs/ID: "field: value" lines.
std::string RenderJob(const nlohmann::json& job);

}  // namespace vigil
