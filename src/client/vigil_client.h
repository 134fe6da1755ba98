/* SPDX-License-Identifier: Apache-2.0 */
/* libvigil_client: the C API for applications that are not PyTorch (or want more than Kineto
 * gives): register with the local vigild over the IPC fabric with job labels, receive trace
 * requests through a callback, and report progress (step time, input bytes, model FLOPs per
 * step), from which the daemon derives vigil_job_step_seconds, vigil_job_model_flops,
 * vigil_job_mfu_ratio and vigil_job_device_seconds_per_input_byte. Messages: docs/protocols.md,
 * "Kineto IPC fabric" (Vigil extensions). A client handle may be used from several threads;
 * the trace callback runs on the thread that polls (the caller's, or the background poller's).
 * Owner: client. */
#ifndef VIGIL_CLIENT_H_
#define VIGIL_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vigil_client vigil_client;

typedef struct vigil_client_options {
  const char* ipc_name;   /* Daemon's IPC name; NULL: "dynolog". */
  const char* socket_dir; /* NULL: $KINETO_IPC_SOCKET_DIR if set, else the abstract namespace. */
  const char* job_id;     /* NULL or "": the daemon resolves it (SLURM, Kubernetes, torchrun). */
  const char* team;
  const char* model;     /* The ML model, e.g. "llama-70b". */
  const char* framework; /* e.g. "jax". */
  double peak_flops;     /* This process's device peak FLOP/s, for MFU; 0 if unknown. */
  int gpu;               /* Device index, -1 if none. */
  int timeout_ms;        /* How long to wait for each daemon reply; 0: 1000. */
} vigil_client_options;

/* Receives the trace configuration (Kineto "KEY=VALUE" lines, including ACTIVITIES_LOG_FILE). */
typedef void (*vigil_trace_callback)(const char* config, void* user_data);

void vigil_client_options_init(vigil_client_options* options);

/* Registers with the daemon. NULL on failure, with a message in err (if err_len > 0). */
vigil_client* vigil_client_open(const vigil_client_options* options, char* err, size_t err_len);
void vigil_client_close(vigil_client* client);

/* The job id the daemon recorded for this process ("" if none). Valid until close. */
const char* vigil_client_job_id(const vigil_client* client);

void vigil_client_set_trace_callback(vigil_client* client, vigil_trace_callback callback,
                                     void* user_data);
/* Asks the daemon for a pending trace request: 1 delivered (callback ran), 0 none, -1 error. */
int vigil_client_poll(vigil_client* client);
/* Polls every interval_ms on a background thread until close. 0 ok, -1 already running. */
int vigil_client_start_polling(vigil_client* client, int interval_ms);

/* Reports `steps` steps that took step_seconds in total, consumed input_bytes, and cost
 * model_flops FLOPs each. 0 ok, -1 error (bad values or send failure). Never blocks. */
int vigil_client_report_steps(vigil_client* client, int64_t steps, double step_seconds,
                              uint64_t input_bytes, double model_flops);
/* Marks the end of one step: its duration is the time since the previous call (or since open). */
int vigil_client_step_end(vigil_client* client, uint64_t input_bytes, double model_flops);

#ifdef __cplusplus
}
#endif

#endif /* VIGIL_CLIENT_H_ */
