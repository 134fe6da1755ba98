/* SPDX-License-Identifier: Apache-2.0 */
/* A fake libdcgm.so.4 for tests without a GPU: the slice of DCGM's C ABI Vigil uses, declared
 * here from DCGM's public headers (dcgm_structs.h and the API header), independently of Vigil's
 * loader. Script in $FAKE_DCGM_SCRIPT, one setting per line:
 *   hostengine 0|1   whether dcgmConnect_v2 finds an nv-hostengine (default 1)
 *   embedded 0|1     whether dcgmStartEmbedded works (default 1)
 *   gpus N
 *   gpu I uuid TEXT
 *   gpu I field ID V0 V1 ...   profiling field values, one per tick
 * A GPU's tick advances on every multi-field dcgmGetLatestValuesForFields call for it. While
 * profiling is paused (dcgmProfPause) profiling fields come back blank, as from a real engine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;
#define DCGM_ST_OK 0
#define DCGM_ST_BADPARAM -1
#define DCGM_ST_NOT_SUPPORTED -6
#define DCGM_ST_CONNECTION_NOT_VALID -20
#define DCGM_ST_VER_MISMATCH -25
#define DCGM_GROUP_ALL_GPUS ((dcgmGpuGrp_t)0x7fffffff)
#define DCGM_FT_DOUBLE 'd'
#define DCGM_FT_STRING 's'
#define DCGM_FP64_BLANK 140737488355328.0
typedef struct {
  unsigned int version;
  unsigned short fieldId;
  unsigned short fieldType;
  int status;
  int64_t ts;
  union {
    int64_t i64;
    double dbl;
    char str[256];
    char blob[4096];
  } value;
} dcgmFieldValue_v1;
#define DCGM_FIELD_VALUE_VERSION1 ((unsigned int)(sizeof(dcgmFieldValue_v1) | (1u << 24)))
typedef struct {
  unsigned int version;
  unsigned int persistAfterDisconnect;
  unsigned int timeoutMs;
  unsigned int addressIsUnixSocket;
} dcgmConnectV2Params_v2;
#define DCGM_CONNECT_V2_PARAMS_VERSION2 \
  ((unsigned int)(sizeof(dcgmConnectV2Params_v2) | (2u << 24)))

#define MAX_GPUS 8
#define MAX_FIELDS 16
#define MAX_STEPS 32
typedef struct {
  unsigned short id;
  int n;
  double v[MAX_STEPS];
} Field;
typedef struct {
  char uuid[96];
  int nfields;
  Field f[MAX_FIELDS];
  int tick;
} Gpu;
static Gpu g_gpu[MAX_GPUS];
static int g_gpus = 1, g_hostengine = 1, g_embedded = 1, g_paused, g_watched;

static void load(void) {
  memset(g_gpu, 0, sizeof g_gpu);
  g_gpus = 1;
  g_hostengine = 1;
  g_embedded = 1;
  g_paused = 0;
  g_watched = 0;
  for (int i = 0; i < MAX_GPUS; ++i) {
    snprintf(g_gpu[i].uuid, sizeof g_gpu[i].uuid, "GPU-fa6e0000-0000-4000-8000-%012d", i);
    g_gpu[i].tick = -1;
  }
  const char* path = getenv("FAKE_DCGM_SCRIPT");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char key[32] = {0}, what[32] = {0};
    int idx = 0, off = 0, id = 0;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "%31s%n", key, &off) != 1) continue;
    char* rest = line + off;
    if (strcmp(key, "gpus") == 0)
      g_gpus = atoi(rest) > MAX_GPUS ? MAX_GPUS : atoi(rest);
    else if (strcmp(key, "hostengine") == 0)
      g_hostengine = atoi(rest);
    else if (strcmp(key, "embedded") == 0)
      g_embedded = atoi(rest);
    else if (strcmp(key, "gpu") == 0 && sscanf(rest, "%d %31s%n", &idx, what, &off) == 2 &&
             idx >= 0 && idx < MAX_GPUS) {
      Gpu* g = &g_gpu[idx];
      char* values = rest + off;
      if (strcmp(what, "uuid") == 0) {
        sscanf(values, "%95s", g->uuid);
      } else if (strcmp(what, "field") == 0 && sscanf(values, "%d%n", &id, &off) == 1 &&
                 g->nfields < MAX_FIELDS) {
        Field* fl = &g->f[g->nfields++];
        fl->id = (unsigned short)id;
        char* save = NULL;
        for (char* t = strtok_r(values + off, " ", &save); t && fl->n < MAX_STEPS;
             t = strtok_r(NULL, " ", &save)) {
          fl->v[fl->n++] = strtod(t, NULL);
        }
      }
    }
  }
  fclose(f);
}

EXPORT dcgmReturn_t dcgmInit(void) {
  load();
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmShutdown(void) { return DCGM_ST_OK; }
EXPORT const char* errorString(dcgmReturn_t rc) { return rc == 0 ? "Success" : "Error"; }
EXPORT dcgmReturn_t dcgmConnect_v2(const char* address, dcgmConnectV2Params_v2* params,
                                   dcgmHandle_t* handle) {
  if (!address || !params || params->version != DCGM_CONNECT_V2_PARAMS_VERSION2)
    return DCGM_ST_VER_MISMATCH;
  if (!g_hostengine) return DCGM_ST_CONNECTION_NOT_VALID;
  *handle = 1;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmDisconnect(dcgmHandle_t handle) {
  (void)handle;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmStartEmbedded(int mode, dcgmHandle_t* handle) {
  (void)mode;
  if (!g_embedded) return DCGM_ST_NOT_SUPPORTED;
  *handle = 2;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t handle) {
  (void)handle;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t handle, unsigned int* ids, int* count) {
  (void)handle;
  for (int i = 0; i < g_gpus; ++i) ids[i] = (unsigned)i;
  *count = g_gpus;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t handle, int n, unsigned short* ids,
                                         const char* name, dcgmFieldGrp_t* grp) {
  (void)handle;
  (void)ids;
  (void)name;
  if (n <= 0) return DCGM_ST_BADPARAM;
  *grp = 77;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t handle, dcgmFieldGrp_t grp) {
  (void)handle;
  (void)grp;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmWatchFields(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t fields,
                                    long long freq_us, double keep_age, int keep_samples) {
  (void)handle;
  (void)keep_age;
  (void)keep_samples;
  if (group != DCGM_GROUP_ALL_GPUS || fields != 77 || freq_us <= 0) return DCGM_ST_BADPARAM;
  g_watched = 1;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmProfPause(dcgmHandle_t handle) {
  (void)handle;
  g_paused = 1;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmProfResume(dcgmHandle_t handle) {
  (void)handle;
  g_paused = 0;
  return DCGM_ST_OK;
}
EXPORT dcgmReturn_t dcgmGetLatestValuesForFields(dcgmHandle_t handle, int gpu, unsigned short* ids,
                                                 unsigned int count, dcgmFieldValue_v1* values) {
  (void)handle;
  if (gpu < 0 || gpu >= g_gpus) return DCGM_ST_BADPARAM;
  Gpu* g = &g_gpu[gpu];
  if (count > 1) g->tick++;
  const int t = g->tick < 0 ? 0 : g->tick;
  for (unsigned i = 0; i < count; ++i) {
    dcgmFieldValue_v1* v = &values[i];
    if (v->version != DCGM_FIELD_VALUE_VERSION1) return DCGM_ST_VER_MISMATCH;
    v->fieldId = ids[i];
    v->status = DCGM_ST_NOT_SUPPORTED;
    if (ids[i] == 54) { /* DCGM_FI_DEV_GPU_UUID */
      v->status = DCGM_ST_OK;
      v->fieldType = DCGM_FT_STRING;
      snprintf(v->value.str, sizeof v->value.str, "%s", g->uuid);
      continue;
    }
    for (int k = 0; k < g->nfields; ++k) {
      if (g->f[k].id != ids[i] || !g_watched) continue;
      v->status = DCGM_ST_OK;
      v->fieldType = DCGM_FT_DOUBLE;
      v->value.dbl = g_paused ? DCGM_FP64_BLANK : g->f[k].v[t < g->f[k].n ? t : g->f[k].n - 1];
    }
  }
  return DCGM_ST_OK;
}
