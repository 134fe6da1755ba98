/* SPDX-License-Identifier: Apache-2.0 */
/* A fake libnvidia-ml.so.1 for tests on machines without a GPU. It exports the real NVML C ABI,
 * declared in fake_nvml_abi.h from NVIDIA's nvml.h (independently of Vigil's own loader
 * declarations, so an ABI mistake on either side shows up as a test failure), and serves values
 * from a script file named by $FAKE_NVML_SCRIPT. Every per-GPU value is a series indexed by that
 * GPU's tick, which advances on each nvmlDeviceGetUtilizationRates call; the last value repeats.
 * Script lines: gpus N | driver TEXT | proc_stride 16|24|32 | init_fail CODE [TIMES] (count kept in
 *   $FAKE_NVML_INIT_FAILURES_DONE, since a failed library is unloaded)
 *   gpu I name TEXT... | gpu I uuid TEXT | gpu I FIELD V0 V1 ...
 *   gpu I procs SET0 SET1 ...   where SET is pid:bytes[:sm%][,...] or - for none; sm% is what
 *   nvmlDeviceGetProcessUtilization reports for the process (left out: no sample, as for an idle
 *   process)
 * FIELDs: util memutil mem_total mem_used mem_reserved power_mw energy_mj temp mem_temp sm_clock
 *   mem_clock reasons pcie_tx_kbs pcie_rx_kbs nvlinks nvlink_tx_kib nvlink_rx_kib ecc_corr ecc_unc
 *   remap_corr remap_unc remap_pending remap_failure lost xid mig mig_instances gpm gpm_sm_active
 *   gpm_sm_occupancy gpm_tensor gpm_hmma gpm_dfma gpm_imma gpm_dram gpm_fp64 gpm_fp32 gpm_fp16
 *   gpm_pcie_tx_mibs gpm_pcie_rx_mibs gpm_nvlink_tx_mibs gpm_nvlink_rx_mibs
 * Built twice: the default exports today's symbols; with FAKE_NVML_OLD_DRIVER it exports only
 * what an R450-era driver had (nvmlInit, plain process list with 16-byte entries, throttle
 * reasons, no memory _v2, no GPM, no row remapping). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

#include "fake_nvml_abi.h"

/* ---- script state ---- */
enum Field {
  F_UTIL,
  F_MEMUTIL,
  F_MEM_TOTAL,
  F_MEM_USED,
  F_MEM_RESERVED,
  F_POWER_MW,
  F_ENERGY_MJ,
  F_TEMP,
  F_MEM_TEMP,
  F_SM_CLOCK,
  F_MEM_CLOCK,
  F_REASONS,
  F_PCIE_TX,
  F_PCIE_RX,
  F_NVLINKS,
  F_NVLINK_TX,
  F_NVLINK_RX,
  F_ECC_CORR,
  F_ECC_UNC,
  F_REMAP_CORR,
  F_REMAP_UNC,
  F_REMAP_PENDING,
  F_REMAP_FAILURE,
  F_LOST,
  F_XID,
  F_MIG,
  F_MIG_INSTANCES,
  F_GPM,
  F_GPM_SM_ACTIVE,
  F_GPM_SM_OCCUPANCY,
  F_GPM_TENSOR,
  F_GPM_HMMA,
  F_GPM_DFMA,
  F_GPM_IMMA,
  F_GPM_DRAM,
  F_GPM_FP64,
  F_GPM_FP32,
  F_GPM_FP16,
  F_GPM_PCIE_TX,
  F_GPM_PCIE_RX,
  F_GPM_NVLINK_TX,
  F_GPM_NVLINK_RX,
  F_COUNT
};
static const char* kFieldNames[F_COUNT] = {"util",
                                           "memutil",
                                           "mem_total",
                                           "mem_used",
                                           "mem_reserved",
                                           "power_mw",
                                           "energy_mj",
                                           "temp",
                                           "mem_temp",
                                           "sm_clock",
                                           "mem_clock",
                                           "reasons",
                                           "pcie_tx_kbs",
                                           "pcie_rx_kbs",
                                           "nvlinks",
                                           "nvlink_tx_kib",
                                           "nvlink_rx_kib",
                                           "ecc_corr",
                                           "ecc_unc",
                                           "remap_corr",
                                           "remap_unc",
                                           "remap_pending",
                                           "remap_failure",
                                           "lost",
                                           "xid",
                                           "mig",
                                           "mig_instances",
                                           "gpm",
                                           "gpm_sm_active",
                                           "gpm_sm_occupancy",
                                           "gpm_tensor",
                                           "gpm_hmma",
                                           "gpm_dfma",
                                           "gpm_imma",
                                           "gpm_dram",
                                           "gpm_fp64",
                                           "gpm_fp32",
                                           "gpm_fp16",
                                           "gpm_pcie_tx_mibs",
                                           "gpm_pcie_rx_mibs",
                                           "gpm_nvlink_tx_mibs",
                                           "gpm_nvlink_rx_mibs"};
/* GPM metric id for each gpm_* field (nvmlGpmMetricId_t). */
static const struct {
  int field;
  unsigned id;
} kGpmIds[] __attribute__((unused)) = {
    {F_GPM_SM_ACTIVE, 2},  {F_GPM_SM_OCCUPANCY, 3}, {F_GPM_TENSOR, 5},   {F_GPM_DFMA, 6},
    {F_GPM_HMMA, 7},       {F_GPM_IMMA, 9},         {F_GPM_DRAM, 10},    {F_GPM_FP64, 11},
    {F_GPM_FP32, 12},      {F_GPM_FP16, 13},        {F_GPM_PCIE_TX, 20}, {F_GPM_PCIE_RX, 21},
    {F_GPM_NVLINK_RX, 60}, {F_GPM_NVLINK_TX, 61}};

#define MAX_GPUS 16
#define MAX_STEPS 64
#define MAX_PROCS 16

typedef struct {
  int n;
  double v[MAX_STEPS];
  int set;
} Series;
typedef struct {
  int n;
  unsigned pid[MAX_PROCS];
  unsigned long long mem[MAX_PROCS];
  int sm[MAX_PROCS]; /* -1: no utilisation sample. */
} ProcSet;
typedef struct {
  char name[96];
  char uuid[96];
  Series f[F_COUNT];
  int nproc_steps;
  ProcSet procs[MAX_STEPS];
  int tick; /* -1 before the first utilisation read. */
  int xid_fired_tick;
} Gpu;
struct nvmlDevice_st {
  int index;
  int mig_index; /* -1 for the physical GPU */
};
struct nvmlGpmSample_st {
  int gpu;
  int tick;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_loaded, g_script_loaded, g_init_count, g_gpus = 2, g_stride = 24, g_init_fail,
                                                    g_init_fail_times = -1;
static char g_driver[80] = "550.54.15";
static Gpu g_gpu[MAX_GPUS];
static struct nvmlDevice_st g_handles[MAX_GPUS];
static struct nvmlDevice_st g_mig_handles[MAX_GPUS][8];
static struct {
  nvmlDevice_t dev;
  unsigned long long xid;
} g_events[64];
static int g_event_head, g_event_tail;

static void set_default(Gpu* g, int i) {
  snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
  snprintf(g->uuid, sizeof g->uuid, "GPU-fa6e0000-0000-4000-8000-%012d", i);
  static const struct {
    int f;
    double v;
  } defaults[] = {{F_UTIL, 0},        {F_MEM_TOTAL, 85899345920.0},
                  {F_MEM_USED, 0},    {F_POWER_MW, 70000},
                  {F_ENERGY_MJ, 0},   {F_TEMP, 30},
                  {F_SM_CLOCK, 1980}, {F_MEM_CLOCK, 2619}};
  for (size_t k = 0; k < sizeof defaults / sizeof defaults[0]; ++k) {
    g->f[defaults[k].f].n = 1;
    g->f[defaults[k].f].v[0] = defaults[k].v;
    g->f[defaults[k].f].set = 1;
  }
  g->tick = -1;
  g->xid_fired_tick = -1;
}

static int cur_tick(const Gpu* g) { return g->tick < 0 ? 0 : g->tick; }

static double val(int gpu, int field, int tick) {
  const Series* s = &g_gpu[gpu].f[field];
  if (s->n == 0) return 0;
  return s->v[tick < s->n ? tick : s->n - 1];
}
static int has(int gpu, int field) { return g_gpu[gpu].f[field].set; }

static void parse_procs(Gpu* g, char* tokens) {
  char* save = NULL;
  for (char* tok = strtok_r(tokens, " \t\n", &save); tok && g->nproc_steps < MAX_STEPS;
       tok = strtok_r(NULL, " \t\n", &save)) {
    ProcSet* ps = &g->procs[g->nproc_steps++];
    ps->n = 0;
    if (strcmp(tok, "-") == 0) continue;
    char* save2 = NULL;
    for (char* e = strtok_r(tok, ",", &save2); e && ps->n < MAX_PROCS;
         e = strtok_r(NULL, ",", &save2)) {
      ps->pid[ps->n] = (unsigned)strtoul(e, NULL, 10);
      const char* colon = strchr(e, ':');
      ps->mem[ps->n] = colon ? (unsigned long long)strtod(colon + 1, NULL) : 0;
      const char* colon2 = colon ? strchr(colon + 1, ':') : NULL;
      ps->sm[ps->n] = colon2 ? atoi(colon2 + 1) : -1;
      ps->n++;
    }
  }
}

static void load_script(void) {
  g_event_head = g_event_tail = 0;
  g_gpus = 2;
  g_stride = 24;
  g_init_fail = 0;
  g_init_fail_times = -1;
  for (int i = 0; i < MAX_GPUS; ++i) {
    memset(&g_gpu[i], 0, sizeof g_gpu[i]);
    set_default(&g_gpu[i], i);
    g_handles[i].index = i;
    g_handles[i].mig_index = -1;
    for (int m = 0; m < 8; ++m) {
      g_mig_handles[i][m].index = i;
      g_mig_handles[i][m].mig_index = m;
    }
  }
  const char* path = getenv("FAKE_NVML_SCRIPT");
  if (!path) return;
  FILE* f = fopen(path, "r");
  if (!f) return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    char key[64] = {0}, field[64] = {0};
    int idx = 0, off = 0;
    if (line[0] == '#' || sscanf(line, "%63s%n", key, &off) != 1) continue;
    char* rest = line + off;
    if (strcmp(key, "gpus") == 0) {
      g_gpus = atoi(rest);
      if (g_gpus > MAX_GPUS) g_gpus = MAX_GPUS;
    } else if (strcmp(key, "proc_stride") == 0)
      g_stride = atoi(rest);
    else if (strcmp(key, "driver") == 0)
      sscanf(rest, "%79s", g_driver);
    else if (strcmp(key, "init_fail") == 0) {
      if (sscanf(rest, "%d %d", &g_init_fail, &g_init_fail_times) < 2) g_init_fail_times = -1;
    } else if (strcmp(key, "gpu") == 0 && sscanf(rest, "%d %63s%n", &idx, field, &off) == 2 &&
               idx >= 0 && idx < MAX_GPUS) {
      Gpu* g = &g_gpu[idx];
      char* values = rest + off;
      while (*values == ' ' || *values == '\t') ++values;
      values[strcspn(values, "\n")] = '\0';
      if (strcmp(field, "name") == 0) {
        snprintf(g->name, sizeof g->name, "%s", values);
        continue;
      }
      if (strcmp(field, "uuid") == 0) {
        snprintf(g->uuid, sizeof g->uuid, "%s", values);
        continue;
      }
      if (strcmp(field, "procs") == 0) {
        parse_procs(g, values);
        continue;
      }
      for (int k = 0; k < F_COUNT; ++k) {
        if (strcmp(field, kFieldNames[k]) != 0) continue;
        Series* s = &g->f[k];
        s->n = 0;
        s->set = 1;
        char* save = NULL;
        for (char* tok = strtok_r(values, " \t", &save); tok && s->n < MAX_STEPS;
             tok = strtok_r(NULL, " \t", &save)) {
          s->v[s->n++] = strtod(tok, NULL);
        }
      }
    }
  }
  fclose(f);
}

/* Device lookup; also reports a lost GPU. */
static nvmlReturn_t dev_index(nvmlDevice_t d, int* index) {
  if (!g_loaded) return NVML_ERROR_UNINITIALIZED;
  if (d == NULL || d->index < 0 || d->index >= g_gpus) return NVML_ERROR_INVALID_ARGUMENT;
  *index = d->index;
  if (val(d->index, F_LOST, cur_tick(&g_gpu[d->index])) != 0) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

#define DEVICE_PROLOGUE(d)                \
  int gi;                                 \
  pthread_mutex_lock(&g_mu);              \
  nvmlReturn_t rc_ = dev_index((d), &gi); \
  if (rc_ != NVML_SUCCESS) {              \
    pthread_mutex_unlock(&g_mu);          \
    return rc_;                           \
  }                                       \
  const int t = cur_tick(&g_gpu[gi]);     \
  (void)t;
#define RETURN(rc)               \
  do {                           \
    pthread_mutex_unlock(&g_mu); \
    return (rc);                 \
  } while (0)
#define OPTIONAL_FIELD(field) \
  if (!has(gi, field)) RETURN(NVML_ERROR_NOT_SUPPORTED)

static nvmlReturn_t do_init(void) {
  pthread_mutex_lock(&g_mu);
  if (!g_script_loaded) { /* Once per init..shutdown session; failed inits keep the script. */
    load_script();
    g_script_loaded = 1;
  }
  if (g_init_fail != 0) {
    /* Failures so far live in the environment: the caller dlcloses a library whose init failed,
     * which drops this file's static state. */
    const char* done_text = getenv("FAKE_NVML_INIT_FAILURES_DONE");
    const int done = done_text ? atoi(done_text) : 0;
    if (g_init_fail_times < 0 || done < g_init_fail_times) {
      char buf[16];
      snprintf(buf, sizeof buf, "%d", done + 1);
      setenv("FAKE_NVML_INIT_FAILURES_DONE", buf, 1);
      g_script_loaded = 0;
      RETURN(g_init_fail);
    }
  }
  ++g_init_count;
  g_loaded = 1;
  RETURN(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlInit(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlShutdown(void) {
  pthread_mutex_lock(&g_mu);
  if (g_init_count > 0 && --g_init_count == 0) {
    g_loaded = 0;
    g_script_loaded = 0;
  }
  pthread_cond_broadcast(&g_cv);
  RETURN(NVML_SUCCESS);
}
EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  snprintf(version, length, "%s", g_driver);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  if (!g_loaded) return NVML_ERROR_UNINITIALIZED;
  *count = (unsigned)g_gpus;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  if (!g_loaded) return NVML_ERROR_UNINITIALIZED;
  if (index >= (unsigned)g_gpus) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_handles[index];
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  DEVICE_PROLOGUE(d);
  snprintf(name, length, "%s", g_gpu[gi].name);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  DEVICE_PROLOGUE(d);
  if (d->mig_index >= 0) {
    snprintf(uuid, length, "MIG-%s-%d", g_gpu[gi].uuid + 4, d->mig_index);
  } else {
    snprintf(uuid, length, "%s", g_gpu[gi].uuid);
  }
  RETURN(NVML_SUCCESS);
}
static nvmlReturn_t pci_info(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  DEVICE_PROLOGUE(d);
  memset(pci, 0, sizeof *pci);
  pci->bus = 0x18 + 0x10 * (unsigned)gi;
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info(d, pci);
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  pthread_mutex_lock(&g_mu);
  if (g_loaded && d && d->index >= 0 && d->index < g_gpus) {
    Gpu* g = &g_gpu[d->index];
    g->tick++; /* One tick per utilisation read: the backend reads it first, once per cycle. */
    const double xid = val(d->index, F_XID, g->tick);
    if (xid > 0 && g->xid_fired_tick != g->tick && g_event_tail - g_event_head < 64) {
      g->xid_fired_tick = g->tick;
      g_events[g_event_tail % 64].dev = d;
      g_events[g_event_tail % 64].xid = (unsigned long long)xid;
      g_event_tail++;
      pthread_cond_broadcast(&g_cv);
    }
  }
  pthread_mutex_unlock(&g_mu);
  DEVICE_PROLOGUE(d);
  u->gpu = (unsigned)val(gi, F_UTIL, t);
  u->memory = (unsigned)val(gi, F_MEMUTIL, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  DEVICE_PROLOGUE(d);
  m->total = (unsigned long long)val(gi, F_MEM_TOTAL, t);
  m->used = (unsigned long long)val(gi, F_MEM_USED, t);
  m->free = m->total - m->used;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* temp) {
  DEVICE_PROLOGUE(d);
  if (sensor != 0) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *temp = (unsigned)val(gi, F_TEMP, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  DEVICE_PROLOGUE(d);
  *mw = (unsigned)val(gi, F_POWER_MW, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  DEVICE_PROLOGUE(d);
  *mj = (unsigned long long)val(gi, F_ENERGY_MJ, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
  DEVICE_PROLOGUE(d);
  if (type == 1)
    *mhz = (unsigned)val(gi, F_SM_CLOCK, t); /* NVML_CLOCK_SM */
  else if (type == 2)
    *mhz = (unsigned)val(gi, F_MEM_CLOCK, t); /* NVML_CLOCK_MEM */
  else
    *mhz = (unsigned)val(gi, F_SM_CLOCK, t);
  RETURN(NVML_SUCCESS);
}
static nvmlReturn_t reasons(nvmlDevice_t d, unsigned long long* r) {
  DEVICE_PROLOGUE(d);
  *r = (unsigned long long)val(gi, F_REASONS, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                              unsigned long long* r) {
  return reasons(d, r);
}
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int* value) {
  DEVICE_PROLOGUE(d);
  OPTIONAL_FIELD(F_PCIE_TX);
  *value = (unsigned)val(gi, counter == 0 ? F_PCIE_TX : F_PCIE_RX, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int* active) {
  DEVICE_PROLOGUE(d);
  if (!has(gi, F_NVLINKS)) RETURN(NVML_ERROR_NOT_SUPPORTED);
  if (link >= (unsigned)val(gi, F_NVLINKS, t)) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  *active = 1;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  DEVICE_PROLOGUE(d);
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* v = &values[i];
    v->nvmlReturn = NVML_SUCCESS;
    v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    if (v->fieldId == NVML_FI_DEV_MEMORY_TEMP && has(gi, F_MEM_TEMP)) {
      v->valueType = NVML_VALUE_TYPE_SIGNED_INT;
      v->value.siVal = (int)val(gi, F_MEM_TEMP, t);
    } else if (v->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX && has(gi, F_NVLINK_TX)) {
      v->value.ullVal = (unsigned long long)val(gi, F_NVLINK_TX, t) + v->scopeId;
    } else if (v->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX && has(gi, F_NVLINK_RX)) {
      v->value.ullVal = (unsigned long long)val(gi, F_NVLINK_RX, t) + v->scopeId;
    } else {
      v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type,
                                                unsigned long long* count) {
  DEVICE_PROLOGUE(d);
  (void)counter_type;
  OPTIONAL_FIELD(F_ECC_CORR);
  *count = (unsigned long long)val(gi, error_type == 0 ? F_ECC_CORR : F_ECC_UNC, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current,
                                         unsigned int* pending) {
  DEVICE_PROLOGUE(d);
  *current = *pending = (unsigned)val(gi, F_MIG, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  DEVICE_PROLOGUE(d);
  *count = val(gi, F_MIG, t) != 0 ? 7 : 0;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                        nvmlDevice_t* mig) {
  DEVICE_PROLOGUE(d);
  if (index >= (unsigned)val(gi, F_MIG_INSTANCES, t) || index >= 8) RETURN(NVML_ERROR_NOT_FOUND);
  *mig = &g_mig_handles[gi][index];
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  DEVICE_PROLOGUE(d);
  *id = d->mig_index >= 0 ? (unsigned)d->mig_index + 1 : 0xFFFFFFFFu;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  DEVICE_PROLOGUE(d);
  *id = d->mig_index >= 0 ? 0 : 0xFFFFFFFFu;
  RETURN(NVML_SUCCESS);
}

/* Writes the process list with entries of `stride` bytes, field by field as the driver does. */
static nvmlReturn_t processes(nvmlDevice_t d, unsigned int* count, void* infos, int stride) {
  DEVICE_PROLOGUE(d);
  const Gpu* g = &g_gpu[gi];
  const ProcSet* ps = NULL;
  if (g->nproc_steps > 0) ps = &g->procs[t < g->nproc_steps ? t : g->nproc_steps - 1];
  const unsigned n = ps ? (unsigned)ps->n : 0;
  if (*count < n) {
    *count = n;
    RETURN(NVML_ERROR_INSUFFICIENT_SIZE);
  }
  *count = n;
  for (unsigned i = 0; i < n; ++i) {
    unsigned char* e = (unsigned char*)infos + (size_t)i * (size_t)stride;
    const unsigned int none = 0xFFFFFFFFu;
    const unsigned long long zero = 0;
    memcpy(e, &ps->pid[i], 4);
    memset(e + 4, 0, 4);
    memcpy(e + 8, &ps->mem[i], 8);
    if (stride >= 24) {
      memcpy(e + 16, &none, 4);
      memcpy(e + 20, &none, 4);
    }
    if (stride >= 32) memcpy(e + 24, &zero, 8); /* usedGpuCcProtectedMemory */
  }
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int* count,
                                                         void* infos) {
  return processes(d, count, infos, 16);
}

/* nvmlProcessUtilizationSample_t, from nvml.h. */
typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

/* One sample per process with an sm% in the script, stamped with the tick (1 s apart, in us);
 * only samples newer than lastSeenTimeStamp. A NULL buffer asks for the count. */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                                    nvmlProcessUtilizationSample_t* utilization,
                                                    unsigned int* processSamplesCount,
                                                    unsigned long long lastSeenTimeStamp) {
  DEVICE_PROLOGUE(d);
  if (processSamplesCount == NULL) RETURN(NVML_ERROR_INVALID_ARGUMENT);
  const Gpu* g = &g_gpu[gi];
  const ProcSet* ps = NULL;
  if (g->nproc_steps > 0) ps = &g->procs[t < g->nproc_steps ? t : g->nproc_steps - 1];
  const unsigned long long stamp = 1000000ull * (unsigned long long)(t + 1);
  unsigned n = 0;
  for (int i = 0; ps && i < ps->n; ++i) n += ps->sm[i] >= 0 && stamp > lastSeenTimeStamp;
  if (n == 0) RETURN(NVML_ERROR_NOT_FOUND);
  if (utilization == NULL || *processSamplesCount < n) {
    *processSamplesCount = n;
    RETURN(NVML_ERROR_INSUFFICIENT_SIZE);
  }
  unsigned k = 0;
  for (int i = 0; i < ps->n; ++i) {
    if (ps->sm[i] < 0) continue;
    nvmlProcessUtilizationSample_t* e = &utilization[k++];
    memset(e, 0, sizeof *e);
    e->pid = ps->pid[i];
    e->timeStamp = stamp;
    e->smUtil = (unsigned)ps->sm[i];
  }
  *processSamplesCount = n;
  RETURN(NVML_SUCCESS);
}

/* Events: Xid critical errors queued at the tick where the script's xid series is non-zero. */
struct nvmlEventSet_st {
  int unused;
};
static struct nvmlEventSet_st g_set;
EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = &g_set;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t set) {
  (void)set;
  DEVICE_PROLOGUE(d);
  RETURN((types & nvmlEventTypeXidCriticalError) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
}
static nvmlReturn_t wait_event(nvmlEventData_t* data, unsigned int timeout_ms, int v2) {
  pthread_mutex_lock(&g_mu);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  while (g_event_head == g_event_tail && g_loaded) {
    if (pthread_cond_timedwait(&g_cv, &g_mu, &deadline) != 0) break;
  }
  if (g_event_head == g_event_tail) RETURN(NVML_ERROR_TIMEOUT);
  data->device = g_events[g_event_head % 64].dev;
  data->eventType = nvmlEventTypeXidCriticalError;
  data->eventData = g_events[g_event_head % 64].xid;
  if (v2) {
    data->gpuInstanceId = 0xFFFFFFFFu;
    data->computeInstanceId = 0xFFFFFFFFu;
  }
  g_event_head++;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                     unsigned int timeout_ms) {
  (void)set;
  return wait_event(data, timeout_ms, 0);
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  (void)set;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init(); }
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return nvmlDeviceGetCount(count); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex(index, device);
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info(d, pci);
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  DEVICE_PROLOGUE(d);
  if (m->version != NVML_MEMORY_V2_VERSION) RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  m->total = (unsigned long long)val(gi, F_MEM_TOTAL, t);
  m->reserved = (unsigned long long)val(gi, F_MEM_RESERVED, t);
  m->used = (unsigned long long)val(gi, F_MEM_USED, t);
  m->free = m->total - m->used;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* r) {
  return reasons(d, r);
}
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                              unsigned int* pending, unsigned int* failure) {
  DEVICE_PROLOGUE(d);
  OPTIONAL_FIELD(F_REMAP_CORR);
  *corr = (unsigned)val(gi, F_REMAP_CORR, t);
  *unc = (unsigned)val(gi, F_REMAP_UNC, t);
  *pending = (unsigned)val(gi, F_REMAP_PENDING, t);
  *failure = (unsigned)val(gi, F_REMAP_FAILURE, t);
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int* count,
                                                            void* infos) {
  return processes(d, count, infos, 24);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count,
                                                            void* infos) {
  return processes(d, count, infos, g_stride);
}
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                        unsigned int timeout_ms) {
  (void)set;
  return wait_event(data, timeout_ms, 1);
}
EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* support) {
  DEVICE_PROLOGUE(d);
  if (support->version != 1) RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  support->isSupportedDevice = val(gi, F_GPM, t) != 0;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  *sample = calloc(1, sizeof **sample);
  return *sample ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}
EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  free(sample);
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample) {
  DEVICE_PROLOGUE(d);
  sample->gpu = gi;
  sample->tick = t;
  RETURN(NVML_SUCCESS);
}
EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  if (get->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (!get->sample1 || !get->sample2 || get->sample1->gpu != get->sample2->gpu) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&g_mu);
  const int gi = get->sample2->gpu, t = get->sample2->tick;
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    nvmlGpmMetric_t* m = &get->metrics[i];
    m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    for (size_t k = 0; k < sizeof kGpmIds / sizeof kGpmIds[0]; ++k) {
      if (kGpmIds[k].id == m->metricId && has(gi, kGpmIds[k].field)) {
        m->nvmlReturn = NVML_SUCCESS;
        m->value = val(gi, kGpmIds[k].field, t);
      }
    }
  }
  RETURN(NVML_SUCCESS);
}
#endif
