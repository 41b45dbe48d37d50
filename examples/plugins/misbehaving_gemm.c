/* Test plugins of deliberately broken kernels (docs/SAFETY.md): a plain f32 matmul
 * (C = A.B, any strides) that misbehaves in one way, chosen at build time by MISBEHAVIOUR:
 *   0 none           a correct kernel (the control)
 *   1 oob_write      writes one element past the end of its output
 *   2 unwritten_tail leaves the last row of its output unwritten
 *   3 writes_input   overwrites A[0,0] after computing
 *   4 leak           allocates 64 KiB per call and never frees it
 *   5 segfault       dereferences a null pointer
 *   6 hang           never returns
 *   7 abort          calls abort()
 *   8 exit0          calls exit(0)
 *   9 scratch_overflow writes one element past the end of its own malloc'd scratch row (the
 *                    result stays right: only valgrind or ASan sees it, `--under valgrind`)
 * The misbehaviour triggers only on problems with m >= 2 and n >= 2, so that a run over a
 * suite shows the broken cases next to passing ones (m = 1 or n = 1 cases run correctly). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opval/plugin.h"

#ifndef MISBEHAVIOUR
#define MISBEHAVIOUR 0
#endif

static const char* const names[] = {"none", "oob_write", "unwritten_tail", "writes_input", "leak",
                                    "segfault", "hang",  "abort",          "exit0", "scratch_overflow"};

uint32_t opval_plugin_abi_version(void) { return OPVAL_PLUGIN_ABI_VERSION; }

const char* opval_plugin_name(void) {
  static char name[64];
  snprintf(name, sizeof name, "misbehaving_gemm_%s", names[MISBEHAVIOUR]);
  return name;
}

static const char* attr(const opval_problem* p, const char* key) {
  for (size_t i = 0; i < p->n_attrs; ++i)
    if (strcmp(p->attrs[i].name, key) == 0) return p->attrs[i].value;
  return "";
}

/* Plain f32 GEMM only: no batches, epilogue, scales or other contracts. */
int opval_plugin_supports(const opval_problem* p, char* reason, size_t size) {
  static const char* const zero_attrs[] = {"beta", "bias", "residual", "zp_a", "zp_b", "zp_dst"};
  if (strcmp(p->op, "matmul") != 0 || strcmp(p->contract, "f32:f32:f32") != 0) {
    snprintf(reason, size, "misbehaving_gemm: f32 matmul only");
    return OPVAL_PLUGIN_UNIMPLEMENTED;
  }
  if (strcmp(attr(p, "batch_a"), "") != 0 || strcmp(attr(p, "batch_b"), "") != 0 ||
      strcmp(attr(p, "act"), "none") != 0 || atof(attr(p, "alpha")) != 1.0) {
    snprintf(reason, size, "misbehaving_gemm: no batches, alpha or activation");
    return OPVAL_PLUGIN_UNIMPLEMENTED;
  }
  for (size_t i = 0; i < sizeof zero_attrs / sizeof *zero_attrs; ++i)
    if (atof(attr(p, zero_attrs[i])) != 0.0) {
      snprintf(reason, size, "misbehaving_gemm: no %s", zero_attrs[i]);
      return OPVAL_PLUGIN_UNIMPLEMENTED;
    }
  if (atof(attr(p, "scale_a")) != 1.0 || atof(attr(p, "scale_b")) != 1.0 || atof(attr(p, "scale_dst")) != 1.0) {
    snprintf(reason, size, "misbehaving_gemm: no scales");
    return OPVAL_PLUGIN_UNIMPLEMENTED;
  }
  return OPVAL_PLUGIN_SUPPORTED;
}

int opval_plugin_execute(const opval_problem* p, const opval_tensor* in, size_t n_in, opval_tensor* out,
                         size_t n_out, void* stream, char* error, size_t error_size) {
  const opval_tensor *a = &in[0], *b = &in[1], *c = &out[0];
  const int64_t m = c->shape[0], n = c->shape[1], k = a->shape[1];
  const float* A = (const float*)a->data;
  const float* B = (const float*)b->data;
  float* C = (float*)c->data;
  const int misbehave = m >= 2 && n >= 2 ? MISBEHAVIOUR : 0;
  const int64_t rows = misbehave == 2 ? m - 1 : m;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t l = 0; l < k; ++l) s += A[i * a->strides[0] + l * a->strides[1]] * B[l * b->strides[0] + j * b->strides[1]];
      C[i * c->strides[0] + j * c->strides[1]] = s;
    }
  switch (misbehave) {
    case 1: C[(m - 1) * c->strides[0] + (n - 1) * c->strides[1] + 1] = 42.0f; break;
    case 3: ((float*)a->data)[0] = 42.0f; break;
    case 4: {
      volatile char* lost = (volatile char*)malloc(64 * 1024);
      if (lost) lost[0] = 1;
      break;
    }
    case 5: {
      volatile int* null_pointer = NULL;
      *null_pointer = 1;
      break;
    }
    case 6:
      for (;;) pause();
    case 7: abort();
    case 8: exit(0);
    case 9: {
      volatile float* scratch = (volatile float*)malloc((size_t)n * sizeof(float));
      if (scratch) {
        for (int64_t j = 0; j <= n; ++j) scratch[j] = 0.0f; /* one past the end */
        free((void*)scratch);
      }
      break;
    }
    default: break;
  }
  return 0;
}
