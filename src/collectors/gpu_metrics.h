// SPDX-License-Identifier: Apache-2.0
// Every metric family the GPU collector emits (names fixed by DESIGN.md where listed there).
// docs/gpu.md lists each with its unit and source. Owner: collectors (GPU). Constants only.
#pragma once

#include "metrics/metric.h"

namespace vigil::gpu_metrics {

using K = MetricKind;
// Identity and health.
inline constexpr MetricDesc kInfo{
    "vigil_gpu_info", "GPU identity (name, PCI bus id, backend); always 1.", K::kGauge, "info"};
inline constexpr MetricDesc kBackendInfo{
    "vigil_gpu_backend_info", "GPU backend in use and whether FLOP/s can be estimated; always 1.",
    K::kGauge, "info"};
inline constexpr MetricDesc kUp{
    "vigil_gpu_up", "1 when the GPU answered this tick, 0 when it is lost or unreadable.",
    K::kGauge, ""};
// Device telemetry.
inline constexpr MetricDesc kUtil{"vigil_gpu_utilization_ratio",
                                  "Fraction of the sample period a kernel was running.", K::kGauge,
                                  "ratio"};
inline constexpr MetricDesc kMemUtil{
    "vigil_gpu_memory_utilization_ratio",
    "Fraction of the sample period device memory was read or written.", K::kGauge, "ratio"};
inline constexpr MetricDesc kMemUsed{"vigil_gpu_memory_used_bytes", "Device memory allocated.",
                                     K::kGauge, "bytes"};
inline constexpr MetricDesc kMemFree{"vigil_gpu_memory_free_bytes", "Device memory unallocated.",
                                     K::kGauge, "bytes"};
inline constexpr MetricDesc kMemTotal{"vigil_gpu_memory_total_bytes", "Device memory installed.",
                                      K::kGauge, "bytes"};
inline constexpr MetricDesc kMemReserved{"vigil_gpu_memory_reserved_bytes",
                                         "Device memory reserved by driver and firmware.",
                                         K::kGauge, "bytes"};
inline constexpr MetricDesc kPower{"vigil_gpu_power_watts", "Board power draw.", K::kGauge,
                                   "watts"};
inline constexpr MetricDesc kEnergy{"vigil_gpu_energy_joules_total",
                                    "Device energy integrated by the daemon since it started.",
                                    K::kCounter, "joules"};
inline constexpr MetricDesc kTemp{"vigil_gpu_temperature_celsius",
                                  "Temperature of the GPU die or of its memory (sensor label).",
                                  K::kGauge, "celsius"};
inline constexpr MetricDesc kSmClock{"vigil_gpu_sm_clock_hertz", "Current SM clock.", K::kGauge,
                                     "hertz"};
inline constexpr MetricDesc kMemClock{"vigil_gpu_memory_clock_hertz", "Current memory clock.",
                                      K::kGauge, "hertz"};
inline constexpr MetricDesc kClockReason{
    "vigil_gpu_clock_event_reason_active",
    "1 while the clock-event (throttle) reason in the reason label holds clocks down.", K::kGauge,
    ""};
inline constexpr MetricDesc kPcieTx{"vigil_gpu_pcie_transmit_bytes_per_second",
                                    "PCIe traffic from the GPU.", K::kGauge, "bytes_per_second"};
inline constexpr MetricDesc kPcieRx{"vigil_gpu_pcie_receive_bytes_per_second",
                                    "PCIe traffic to the GPU.", K::kGauge, "bytes_per_second"};
inline constexpr MetricDesc kNvLinkTxRate{"vigil_gpu_nvlink_transmit_bytes_per_second",
                                          "NVLink traffic from the GPU over all links (GPM).",
                                          K::kGauge, "bytes_per_second"};
inline constexpr MetricDesc kNvLinkRxRate{"vigil_gpu_nvlink_receive_bytes_per_second",
                                          "NVLink traffic to the GPU over all links (GPM).",
                                          K::kGauge, "bytes_per_second"};
inline constexpr MetricDesc kNvLinkUp{
    "vigil_gpu_nvlink_up", "1 when the NVLink in the link label is active.", K::kGauge, ""};
inline constexpr MetricDesc kNvLinkTx{
    "vigil_gpu_nvlink_transmit_bytes_total",
    "Data sent over the NVLink in the link label since driver load.", K::kCounter, "bytes"};
inline constexpr MetricDesc kNvLinkRx{
    "vigil_gpu_nvlink_receive_bytes_total",
    "Data received over the NVLink in the link label since driver load.", K::kCounter, "bytes"};
inline constexpr MetricDesc kEcc{"vigil_gpu_ecc_errors_total",
                                 "Volatile ECC error count by type (corrected, uncorrected).",
                                 K::kCounter, ""};
inline constexpr MetricDesc kRemapped{"vigil_gpu_remapped_rows",
                                      "Memory rows remapped, by kind (correctable, uncorrectable).",
                                      K::kGauge, ""};
inline constexpr MetricDesc kRemapPending{
    "vigil_gpu_row_remap_pending", "1 when a row remap waits for a GPU reset.", K::kGauge, ""};
inline constexpr MetricDesc kRemapFailure{"vigil_gpu_row_remap_failure",
                                          "1 when a row remap failed.", K::kGauge, ""};
inline constexpr MetricDesc kXid{"vigil_gpu_xid_errors_total",
                                 "Xid critical error events since the daemon started.", K::kCounter,
                                 ""};
inline constexpr MetricDesc kLastXid{"vigil_gpu_last_xid",
                                     "Code of the most recent Xid critical error.", K::kGauge, ""};
inline constexpr MetricDesc kMigEnabled{"vigil_gpu_mig_enabled", "1 when MIG mode is on.",
                                        K::kGauge, ""};
inline constexpr MetricDesc kMigInstance{
    "vigil_gpu_mig_instance_info",
    "One MIG instance (mig_uuid, gpu_instance_id, compute_instance_id); always 1.", K::kGauge,
    "info"};
inline constexpr MetricDesc kProcessMemory{"vigil_gpu_process_memory_used_bytes",
                                           "Device memory used by the process in the pid label.",
                                           K::kGauge, "bytes"};
inline constexpr MetricDesc kProcessSm{
    "vigil_gpu_process_sm_utilization_ratio",
    "Share of the last sample period the process in the pid label had kernels on the SMs.",
    K::kGauge, "ratio"};
// Profiling counters and topline efficiency.
inline constexpr MetricDesc kSmActive{
    "vigil_gpu_sm_active_ratio",
    "Fraction of cycles an SM had at least one warp resident, averaged over SMs.", K::kGauge,
    "ratio"};
inline constexpr MetricDesc kSmOccupancy{
    "vigil_gpu_sm_occupancy_ratio",
    "Resident warps as a fraction of the maximum, averaged over SMs.", K::kGauge, "ratio"};
inline constexpr MetricDesc kPipeActive{
    "vigil_gpu_pipe_active_ratio",
    "Fraction of cycles the pipe in the pipe label was active, averaged over SMs.", K::kGauge,
    "ratio"};
inline constexpr MetricDesc kDramActive{"vigil_gpu_dram_active_ratio",
                                        "Device-memory bandwidth used as a fraction of peak.",
                                        K::kGauge, "ratio"};
inline constexpr MetricDesc kHbmBandwidth{
    "vigil_gpu_memory_bandwidth_used_bytes_per_second",
    "Device-memory bandwidth used: DRAM activity x the model's peak bandwidth.", K::kGauge,
    "bytes_per_second"};
inline constexpr MetricDesc kHbmPeak{"vigil_gpu_memory_bandwidth_peak_bytes_per_second",
                                     "Peak device-memory bandwidth of the GPU model.", K::kGauge,
                                     "bytes_per_second"};
inline constexpr MetricDesc kFlops{
    "vigil_gpu_flops_estimated",
    "FLOP/s estimated from pipe activity x SMs x FLOP per clock per SM x SM clock.", K::kGauge, ""};
inline constexpr MetricDesc kFlopsPeak{"vigil_gpu_flops_dense_peak",
                                       "Dense FP16/BF16 tensor peak FLOP/s of the GPU model.",
                                       K::kGauge, ""};
inline constexpr MetricDesc kFlopsRatio{
    "vigil_gpu_flops_dense_peak_ratio",
    "Estimated FLOP/s as a fraction of the dense FP16/BF16 tensor peak.", K::kGauge, "ratio"};
// Accounting (integrated over wall time).
inline constexpr MetricDesc kAllocated{"vigil_gpu_allocated_seconds_total",
                                       "Seconds the GPU was held by a process of the job.",
                                       K::kCounter, "seconds"};
inline constexpr MetricDesc kBusy{
    "vigil_gpu_busy_seconds_total",
    "Allocated seconds weighted by SM activity (utilisation where SM activity is unknown).",
    K::kCounter, "seconds"};
inline constexpr MetricDesc kHeldIdle{"vigil_gpu_held_idle_seconds_total",
                                      "Allocated seconds with no GPU activity.", K::kCounter,
                                      "seconds"};
inline constexpr MetricDesc kJobEnergy{
    "vigil_job_gpu_energy_joules_total",
    "GPU energy attributed to the job (split equally among jobs sharing a GPU).", K::kCounter,
    "joules"};

inline constexpr const MetricDesc* kAll[] = {
    &kInfo,          &kBackendInfo,  &kUp,          &kUtil,        &kMemUtil,    &kMemUsed,
    &kMemFree,       &kMemTotal,     &kMemReserved, &kPower,       &kEnergy,     &kTemp,
    &kSmClock,       &kMemClock,     &kClockReason, &kPcieTx,      &kPcieRx,     &kNvLinkTxRate,
    &kNvLinkRxRate,  &kNvLinkUp,     &kNvLinkTx,    &kNvLinkRx,    &kEcc,        &kRemapped,
    &kRemapPending,  &kRemapFailure, &kXid,         &kLastXid,     &kMigEnabled, &kMigInstance,
    &kProcessMemory, &kProcessSm,    &kSmActive,    &kSmOccupancy, &kPipeActive, &kDramActive,
    &kHbmBandwidth,  &kHbmPeak,      &kFlops,       &kFlopsPeak,   &kFlopsRatio, &kAllocated,
    &kBusy,          &kHeldIdle,     &kJobEnergy};

}  // namespace vigil::gpu_metrics
