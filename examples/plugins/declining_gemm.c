/* Test plugin of run-time declines (OPVAL_PLUGIN_DECLINED, plugin ABI minor 1): a plain f32
 * matmul (C = A.B, any strides) whose execute declines some of the problems supports()
 * accepted, as a kernel does that finds out only when it runs:
 *   k > 64   every call declines ("needs a workspace"): the case is SKIPPED with the reason
 *   m == 3   the first call of a case computes, every later call declines: SKIPPED, the
 *            reason saying it came on a rerun
 *   m == 5   writes one element past the end of its output, then declines: the memory checks
 *            FAIL the case whatever it said
 * Built twice: declining_gemm (minor 1) and declining_gemm_minor0 (OLD_ABI=1: exports no
 * opval_plugin_abi_minor_version, so its OPVAL_PLUGIN_DECLINED is an error code like any
 * other and those cases FAIL; and opval gives it no problem whose contract has options). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opval/plugin.h"

#ifndef OLD_ABI
#define OLD_ABI 0
#endif

uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }

#if !OLD_ABI
uint32_t opval_plugin_abi_minor_version(void) { return OPVAL_PLUGIN_ABI_MINOR_VERSION; }
#endif

const char* opval_plugin_name(void) { return OLD_ABI ? "declining_gemm_minor0" : "declining_gemm"; }

/* The value of attribute `key`, or NULL when the op has none. */
static const char* attr(const opval_problem* p, const char* key) {
  for (size_t i = 0; i < p->n_attrs; ++i)
    if (strcmp(p->attrs[i].name, key) == 0) return p->attrs[i].value;
  return NULL;
}

/* Attributes at their plain-GEMM values: text, or number when numeric. */
static const struct {
  const char* name;
  const char* plain;
  int numeric;
} plain_gemm[] = {{"batch_a", "", 0},  {"batch_b", "", 0},   {"alpha", "1", 1},    {"beta", "0", 1},
                  {"bias", "0", 0},    {"act", "none", 0},   {"residual", "0", 0}, {"scale_a", "1", 1},
                  {"scale_b", "1", 1}, {"scale_dst", "1", 1}, {"zp_a", "0", 1},     {"zp_b", "0", 1},
                  {"zp_dst", "0", 1}};

/* Under minor 1 p->contract is the whole contract: f32:f32:f32 is f32 with default options. */
int opval_plugin_supports(const opval_problem* p, char* reason, size_t size) {
  if (strcmp(p->op, "matmul") != 0 || strcmp(p->contract, "f32:f32:f32") != 0) {
    snprintf(reason, size, "declining_gemm implements matmul f32:f32:f32 only, not %s %s", p->op, p->contract);
    return OPVAL_PLUGIN_UNIMPLEMENTED;
  }
  for (size_t i = 0; i < sizeof plain_gemm / sizeof *plain_gemm; ++i) {
    const char* v = attr(p, plain_gemm[i].name);
    if (!v) continue;
    if (plain_gemm[i].numeric ? atof(v) != atof(plain_gemm[i].plain) : strcmp(v, plain_gemm[i].plain) != 0) {
      snprintf(reason, size, "declining_gemm implements plain GEMM only, not %s=%s", plain_gemm[i].name, v);
      return OPVAL_PLUGIN_UNIMPLEMENTED;
    }
  }
  return OPVAL_PLUGIN_SUPPORTED;
}

/* How many times in a row execute has been called for the same descriptor. */
static int calls_of(const char* descriptor) {
  static char last[1024];
  static int calls;
  if (strncmp(last, descriptor, sizeof last) != 0) {
    snprintf(last, sizeof last, "%s", descriptor);
    calls = 0;
  }
  return ++calls;
}

int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in, opval_tensor* out,
                         size_t n_out, void* stream, char* error, size_t error_size) {
  const opval_tensor *a = &in[0], *b = &in[1], *c = &out[0];
  const int64_t m = c->shape[0], n = c->shape[1], k = a->shape[1];
  float* C = (float*)c->data;
  const int call = calls_of(p->descriptor);
  if (k > 64) {
    snprintf(error, error_size, "declining_gemm: k=%lld needs a workspace it does not have", (long long)k);
    return OPVAL_PLUGIN_DECLINED;
  }
  if (m == 3 && call > 1) {
    snprintf(error, error_size, "declining_gemm: out of scratch on call %d", call);
    return OPVAL_PLUGIN_DECLINED;
  }
  if (m == 5) {
    C[(m - 1) * c->strides[0] + (n - 1) * c->strides[1] + 1] = 42.0f; /* one past the end */
    snprintf(error, error_size, "declining_gemm: m=5 is not supported after all");
    return OPVAL_PLUGIN_DECLINED;
  }
  const float* A = (const float*)a->data;
  const float* B = (const float*)b->data;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += (double)A[i * a->strides[0] + l * a->strides[1]] * B[l * b->strides[0] + j * b->strides[1]];
      C[i * c->strides[0] + j * c->strides[1]] = (float)s;
    }
  return 0;
}
