/* SPDX-License-Identifier: Apache-2.0 */
/* A fake librocm_smi64.so for tests without an AMD GPU. Exports the ROCm SMI C ABI as declared in
 * AMD's rocm_smi.h (written here independently of Vigil's loader) and serves values from the
 * script named by $FAKE_RSMI_SCRIPT. Each per-GPU value is a series indexed by that GPU's tick,
 * which advances on every rsmi_dev_busy_percent_get call; the last value repeats. Lines:
 *   gpus N | version_major M (5: 32-slot rsmi_frequencies_t; 6+: bool has_deep_sleep + 33 slots)
 *   gpu I name TEXT... | gpu I FIELD V0 V1 ... | gpu I procs pid:vram_bytes[,pid:vram_bytes]
 * FIELDs: unique_id busy membusy vram_total vram_used power_uw energy_count energy_res_uj
 *   temp_edge_mc temp_mem_mc sclk_hz mclk_hz */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int rsmi_status_t;
enum {
  RSMI_STATUS_SUCCESS = 0,
  RSMI_STATUS_INVALID_ARGS = 1,
  RSMI_STATUS_NOT_SUPPORTED = 2,
  RSMI_STATUS_INIT_ERROR = 8,
  RSMI_STATUS_NOT_FOUND = 10,
  RSMI_STATUS_INSUFFICIENT_SIZE = 11
};
typedef struct {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
  const char* build;
} rsmi_version_t;
typedef struct {
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[32];
} rsmi_frequencies_v5_t;
typedef struct {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[33];
} rsmi_frequencies_v6_t;
typedef struct {
  uint32_t process_id;
  uint32_t pasid;
  uint64_t vram_usage;
  uint64_t sdma_usage;
  uint32_t cu_occupancy;
} rsmi_process_info_t;

enum {
  F_UNIQUE_ID,
  F_BUSY,
  F_MEMBUSY,
  F_VRAM_TOTAL,
  F_VRAM_USED,
  F_POWER_UW,
  F_ENERGY_COUNT,
  F_ENERGY_RES,
  F_TEMP_EDGE,
  F_TEMP_MEM,
  F_SCLK,
  F_MCLK,
  F_COUNT
};
static const char* kFields[F_COUNT] = {
    "unique_id",    "busy",          "membusy",      "vram_total",  "vram_used", "power_uw",
    "energy_count", "energy_res_uj", "temp_edge_mc", "temp_mem_mc", "sclk_hz",   "mclk_hz"};

#define MAX_GPUS 8
#define MAX_STEPS 32
typedef struct {
  int n;
  double v[MAX_STEPS];
} Series;
typedef struct {
  char name[128];
  Series f[F_COUNT];
  int tick;
  int nprocs;
  uint32_t pid[8];
  uint64_t vram[8];
} Gpu;

static Gpu g_gpu[MAX_GPUS];
static int g_gpus = 1, g_major = 6, g_init;

static double val(int i, int f) {
  const Series* s = &g_gpu[i].f[f];
  if (s->n == 0) return 0;
  const int t = g_gpu[i].tick < 0 ? 0 : g_gpu[i].tick;
  return s->v[t < s->n ? t : s->n - 1];
}

static void load(void) {
  memset(g_gpu, 0, sizeof g_gpu);
  g_gpus = 1;
  g_major = 6;
  for (int i = 0; i < MAX_GPUS; ++i) {
    snprintf(g_gpu[i].name, sizeof g_gpu[i].name, "AMD Instinct MI300X");
    g_gpu[i].tick = -1;
  }
  const char* path = getenv("FAKE_RSMI_SCRIPT");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char key[32] = {0}, field[32] = {0};
    int idx = 0, off = 0;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "%31s%n", key, &off) != 1) continue;
    char* rest = line + off;
    if (strcmp(key, "gpus") == 0)
      g_gpus = atoi(rest) > MAX_GPUS ? MAX_GPUS : atoi(rest);
    else if (strcmp(key, "version_major") == 0)
      g_major = atoi(rest);
    else if (strcmp(key, "gpu") == 0 && sscanf(rest, "%d %31s%n", &idx, field, &off) == 2 &&
             idx >= 0 && idx < MAX_GPUS) {
      char* values = rest + off;
      while (*values == ' ') ++values;
      Gpu* g = &g_gpu[idx];
      if (strcmp(field, "name") == 0) {
        snprintf(g->name, sizeof g->name, "%s", values);
        continue;
      }
      if (strcmp(field, "procs") == 0) {
        char* save = NULL;
        for (char* e = strtok_r(values, ",", &save); e && g->nprocs < 8;
             e = strtok_r(NULL, ",", &save)) {
          g->pid[g->nprocs] = (uint32_t)strtoul(e, NULL, 10);
          const char* c = strchr(e, ':');
          g->vram[g->nprocs++] = c ? (uint64_t)strtod(c + 1, NULL) : 0;
        }
        continue;
      }
      for (int k = 0; k < F_COUNT; ++k) {
        if (strcmp(field, kFields[k]) != 0) continue;
        char* save = NULL;
        for (char* t = strtok_r(values, " ", &save); t && g->f[k].n < MAX_STEPS;
             t = strtok_r(NULL, " ", &save)) {
          g->f[k].v[g->f[k].n++] = strtod(t, NULL);
        }
      }
    }
  }
  fclose(f);
}

#define CHECK_DEV(i)                          \
  if (!g_init) return RSMI_STATUS_INIT_ERROR; \
  if ((i) >= (uint32_t)g_gpus) return RSMI_STATUS_INVALID_ARGS;

EXPORT rsmi_status_t rsmi_init(uint64_t flags) {
  (void)flags;
  if (!g_init) load();
  g_init = 1;
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_shut_down(void) {
  g_init = 0;
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_version_get(rsmi_version_t* v) {
  v->major = (uint32_t)g_major;
  v->minor = 0;
  v->patch = 0;
  v->build = "fake";
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_num_monitor_devices(uint32_t* n) {
  if (!g_init) return RSMI_STATUS_INIT_ERROR;
  *n = (uint32_t)g_gpus;
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_name_get(uint32_t i, char* name, size_t len) {
  CHECK_DEV(i);
  snprintf(name, len, "%s", g_gpu[i].name);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_unique_id_get(uint32_t i, uint64_t* id) {
  CHECK_DEV(i);
  if (g_gpu[i].f[F_UNIQUE_ID].n == 0) return RSMI_STATUS_NOT_SUPPORTED;
  *id = (uint64_t)val(i, F_UNIQUE_ID);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_pci_id_get(uint32_t i, uint64_t* bdfid) {
  CHECK_DEV(i);
  *bdfid = ((uint64_t)0 << 32) | ((uint64_t)(0x0c + i) << 8) | (0u << 3) | 0u;
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_busy_percent_get(uint32_t i, uint32_t* pct) {
  CHECK_DEV(i);
  g_gpu[i].tick++;
  *pct = (uint32_t)val(i, F_BUSY);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t i, uint32_t* pct) {
  CHECK_DEV(i);
  *pct = (uint32_t)val(i, F_MEMBUSY);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_memory_total_get(uint32_t i, int type, uint64_t* total) {
  CHECK_DEV(i);
  if (type != 0) return RSMI_STATUS_NOT_SUPPORTED;
  *total = (uint64_t)val(i, F_VRAM_TOTAL);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_memory_usage_get(uint32_t i, int type, uint64_t* used) {
  CHECK_DEV(i);
  if (type != 0) return RSMI_STATUS_NOT_SUPPORTED;
  *used = (uint64_t)val(i, F_VRAM_USED);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_power_ave_get(uint32_t i, uint32_t sensor, uint64_t* uw) {
  CHECK_DEV(i);
  if (sensor != 0) return RSMI_STATUS_INVALID_ARGS;
  *uw = (uint64_t)val(i, F_POWER_UW);
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_energy_count_get(uint32_t i, uint64_t* count, float* res,
                                               uint64_t* ts) {
  CHECK_DEV(i);
  *count = (uint64_t)val(i, F_ENERGY_COUNT);
  *res = (float)val(i, F_ENERGY_RES);
  *ts = 0;
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_temp_metric_get(uint32_t i, uint32_t sensor, int metric,
                                              int64_t* mc) {
  CHECK_DEV(i);
  if (metric != 0) return RSMI_STATUS_NOT_SUPPORTED;
  if (sensor == 0)
    *mc = (int64_t)val(i, F_TEMP_EDGE);
  else if (sensor == 2)
    *mc = (int64_t)val(i, F_TEMP_MEM);
  else
    return RSMI_STATUS_NOT_SUPPORTED;
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_dev_gpu_clk_freq_get(uint32_t i, int type, void* out) {
  CHECK_DEV(i);
  const double hz = type == 0 ? val(i, F_SCLK) : type == 4 ? val(i, F_MCLK) : -1;
  if (hz < 0) return RSMI_STATUS_NOT_SUPPORTED;
  /* Three levels; the current one is the scripted value. */
  if (g_major >= 6) {
    rsmi_frequencies_v6_t* f = out;
    memset(f, 0, sizeof *f);
    f->has_deep_sleep = true;
    f->num_supported = 3;
    f->current = 1;
    f->frequency[0] = 500000000ULL;
    f->frequency[1] = (uint64_t)hz;
    f->frequency[2] = 2100000000ULL;
  } else {
    rsmi_frequencies_v5_t* f = out;
    memset(f, 0, sizeof *f);
    f->num_supported = 3;
    f->current = 1;
    f->frequency[0] = 500000000ULL;
    f->frequency[1] = (uint64_t)hz;
    f->frequency[2] = 2100000000ULL;
  }
  return RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_compute_process_info_get(rsmi_process_info_t* procs, uint32_t* num) {
  if (!g_init) return RSMI_STATUS_INIT_ERROR;
  uint32_t total = 0;
  for (int i = 0; i < g_gpus; ++i) total += (uint32_t)g_gpu[i].nprocs;
  if (procs == NULL) {
    *num = total;
    return RSMI_STATUS_SUCCESS;
  }
  uint32_t n = 0;
  for (int i = 0; i < g_gpus; ++i) {
    for (int p = 0; p < g_gpu[i].nprocs && n < *num; ++p, ++n) {
      memset(&procs[n], 0, sizeof procs[n]);
      procs[n].process_id = g_gpu[i].pid[p];
      procs[n].vram_usage = g_gpu[i].vram[p];
    }
  }
  *num = n;
  return n < total ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}
EXPORT rsmi_status_t rsmi_compute_process_gpus_get(uint32_t pid, uint32_t* devs, uint32_t* num) {
  uint32_t n = 0;
  for (int i = 0; i < g_gpus; ++i) {
    for (int p = 0; p < g_gpu[i].nprocs; ++p) {
      if (g_gpu[i].pid[p] == pid && n < *num) devs[n++] = (uint32_t)i;
    }
  }
  if (n == 0) return RSMI_STATUS_NOT_FOUND;
  *num = n;
  return RSMI_STATUS_SUCCESS;
}
