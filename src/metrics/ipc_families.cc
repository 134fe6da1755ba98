// SPDX-License-Identifier: Apache-2.0
#include "metrics/ipc_families.h"

namespace vigil {

const MetricDesc kIpcDatagrams{"vigil_daemon_ipc_datagrams_total", "IPC fabric datagrams received.",
                               MetricKind::kCounter, ""};
const MetricDesc kIpcDropped{"vigil_daemon_ipc_dropped_total",
                             "IPC fabric datagrams dropped, by reason.", MetricKind::kCounter, ""};
const MetricDesc kIpcReplies{"vigil_daemon_ipc_replies_total", "IPC fabric replies, by outcome.",
                             MetricKind::kCounter, ""};
const MetricDesc kIpcProcesses{"vigil_daemon_ipc_processes",
                               "Processes registered over the IPC fabric.", MetricKind::kGauge, ""};

const MetricDesc kJobStepSeconds{"vigil_job_step_seconds",
                                 "Mean training step time reported by the job's processes.",
                                 MetricKind::kGauge, "seconds"};
const MetricDesc kJobModelFlops{"vigil_job_model_flops",
                                "Model FLOPs per step per process, as reported by the job.",
                                MetricKind::kGauge, ""};
const MetricDesc kJobMfuRatio{"vigil_job_mfu_ratio",
                              "Achieved model FLOP/s over the declared peak FLOP/s of the "
                              "reporting processes.",
                              MetricKind::kGauge, "ratio"};
const MetricDesc kJobDeviceSecondsPerInputByte{
    "vigil_job_device_seconds_per_input_byte",
    "Device-seconds spent per input byte consumed (one device per reporting process).",
    MetricKind::kGauge, ""};  // A rate in seconds per byte: no base unit ends the name.

}  // namespace vigil
