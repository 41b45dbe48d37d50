/* opval plugin C ABI: how a user kernel library plugs into opval as a backend.
 *
 * A plugin is a shared library (built as a MODULE, e.g. libmykernel.so) that includes only
 * this header and exports the four opval_plugin_* functions declared below. opval loads it
 * with `opval run --plugin PATH`, asks it which problems it supports, and hands it tensors to
 * compute into; opval then judges the outputs against its fp64 reference as for any backend.
 *
 * The ABI is plain C (C99 and C++) so that plugins can be built by any compiler and do not
 * depend on opval's C++ types. Compatibility rule: OPVAL_PLUGIN_ABI_VERSION changes whenever
 * a type or function below changes layout or meaning; opval refuses plugins built for another
 * version (rebuild the plugin against the new header). Within a version, minor versions
 * (OPVAL_PLUGIN_ABI_MINOR_VERSION) add what a plugin opts into by exporting
 * opval_plugin_abi_minor_version(): a plugin that does not export it is minor 0 and keeps
 * working, with the meaning minor 0 gave every code and field.
 *
 * Ownership: opval owns all memory it passes (problems, strings, shapes, strides, tensor
 * data, message buffers). Every pointer is valid only for the duration of the call that
 * receives it; a plugin must not keep pointers past the call, nor free them. Memory a plugin
 * allocates itself (scratch space) it frees itself. Plugin functions must not let C++
 * exceptions or longjmp escape: report errors through return codes and messages.
 */
#ifndef OPVAL_PLUGIN_H
#define OPVAL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/** The ABI version this header describes; opval_plugin_abi_version() must return it. */
#define OPVAL_PLUGIN_ABI_VERSION 1

/** The minor version this header describes; opval_plugin_abi_minor_version(), where a plugin
 * exports it, returns it. What each minor adds (a plugin without the function is minor 0):
 *   1: opval_problem.contract is the whole contract, types and options (see there), and
 *      opval_plugin_execute() may return OPVAL_PLUGIN_DECLINED. */
#define OPVAL_PLUGIN_ABI_MINOR_VERSION 1

#ifdef __cplusplus
#define OPVAL_PLUGIN_EXTERN_C extern "C"
#else
#define OPVAL_PLUGIN_EXTERN_C
#endif

/** Marks the exported plugin functions: C linkage and default visibility, so a plugin
 * built with -fvisibility=hidden still exports them. */
#if defined(_WIN32)
#define OPVAL_PLUGIN_EXPORT OPVAL_PLUGIN_EXTERN_C __declspec(dllexport)
#else
#define OPVAL_PLUGIN_EXPORT OPVAL_PLUGIN_EXTERN_C __attribute__((visibility("default")))
#endif

/** Element types, in the same order (and with the same values) as opval::dtype; new types are
 * added at the end only. tf32 is stored as f32; f8_e4m3 is OCP "fn"; boolean is one byte.
 * F8_E4M3FNUZ / F8_E5M2FNUZ: bias 8 / 16, no Inf, no -0, NaN = 0x80. F8_E8M0: the OCP MX scale,
 * 2^(b-127), NaN = 0xff. F4_E2M1, F6_E2M3, F6_E3M2: the OCP MX element formats (no Inf, no NaN).
 * The sub-byte types (F4_E2M1, F6_*, I4, U4) are NOT packed: each element occupies one byte,
 * its value in the low 4 or 6 bits and zeros above (I4 is two's complement in the low nibble);
 * a kernel that wants packed data packs it itself. A plugin that meets a type it does not
 * know returns OPVAL_PLUGIN_UNIMPLEMENTED. */
typedef enum opval_dtype {
  OPVAL_DTYPE_F64 = 0,
  OPVAL_DTYPE_F32 = 1,
  OPVAL_DTYPE_TF32 = 2,
  OPVAL_DTYPE_F16 = 3,
  OPVAL_DTYPE_BF16 = 4,
  OPVAL_DTYPE_F8_E4M3 = 5,
  OPVAL_DTYPE_F8_E5M2 = 6,
  OPVAL_DTYPE_I8 = 7,
  OPVAL_DTYPE_U8 = 8,
  OPVAL_DTYPE_I32 = 9,
  OPVAL_DTYPE_I64 = 10,
  OPVAL_DTYPE_BOOLEAN = 11,
  OPVAL_DTYPE_F8_E4M3FNUZ = 12,
  OPVAL_DTYPE_F8_E5M2FNUZ = 13,
  OPVAL_DTYPE_F8_E8M0 = 14,
  OPVAL_DTYPE_F4_E2M1 = 15,
  OPVAL_DTYPE_F6_E2M3 = 16,
  OPVAL_DTYPE_F6_E3M2 = 17,
  OPVAL_DTYPE_I4 = 18,
  OPVAL_DTYPE_U4 = 19
} opval_dtype;

/** Where a tensor's data lives: host memory unless the plugin exports opval_plugin_device()
 * and asks for device memory. */
typedef enum opval_device_kind {
  OPVAL_DEVICE_CPU = 0,
  OPVAL_DEVICE_CUDA = 1
} opval_device_kind;

/** A strided view of one operand; opval owns shape, strides and data.
 * Element (i0, ..., i{rank-1}) lives at ((T*)data)[sum_d i_d * strides[d]]: strides are in
 * elements (not bytes), may exceed the extents (padded leading dimensions) and describe
 * transposed layouts; data already points at element (0, ..., 0). Enum-valued fields are
 * int32_t so that the struct layout does not depend on the compiler's enum size. */
typedef struct opval_tensor {
  int32_t dtype;          /**< an opval_dtype value */
  int32_t rank;           /**< number of dimensions; 0 for a scalar */
  const int64_t* shape;   /**< rank extents (logical shape, as the op documents it) */
  const int64_t* strides; /**< rank strides, in elements */
  void* data;             /**< element (0, ..., 0); inputs must not be written */
  int32_t device;         /**< an opval_device_kind value */
} opval_tensor;

/** One attribute of a problem: its name and its value in descriptor text form
 * (integers `17`, reals `0.5`, booleans `0`/`1`, choices `relu`, dims `2x3`; an empty
 * dims list is ""). */
typedef struct opval_attr {
  const char* name;
  const char* value;
} opval_attr;

/** One problem (a test case without its data). Every attribute of the op's schema is
 * listed, with its default when the descriptor does not set it, so a plugin can reject
 * what it does not implement without knowing the defaults. */
typedef struct opval_problem {
  const char* op;           /**< op name, e.g. "matmul" */
  const char* descriptor;   /**< canonical one-line descriptor (as `opval repro` takes it) */
  const char* contract;     /**< minor >= 1: the whole numeric contract, its types then each
                                 option not at its default as " key=value", as the descriptor
                                 writes them: "f32:f32:f32", "bf16:f32:bf16 mid=bf16",
                                 "f32:f32:f32 denorm=ftz". So a plugin that accepts
                                 strcmp(contract, "f32:f32:f32") == 0 accepts f32 with the
                                 default options only (rne, ieee denormals, mid = acc, cuda ulps,
                                 deterministic). Minor 0: the types alone, and opval gives a
                                 minor-0 plugin no problem whose contract has an option (those
                                 are UNIMPLEMENTED), as it could not tell them apart. */
  const opval_attr* attrs;  /**< n_attrs attributes */
  size_t n_attrs;
} opval_problem;

/** Return codes of opval_plugin_supports(). */
#define OPVAL_PLUGIN_SUPPORTED 0     /**< the plugin has a kernel for this problem */
#define OPVAL_PLUGIN_UNIMPLEMENTED 1 /**< no kernel for this problem (case is UNIMPLEMENTED) */
#define OPVAL_PLUGIN_SKIPPED 2       /**< a kernel exists but cannot run here (e.g. CPU lacks AVX2) */

/** Minor >= 1: what opval_plugin_execute() returns to decline a problem it accepted but finds,
 * at run time, that it cannot run (a workspace it cannot allocate, a case its heuristics
 * reject), after writing the reason into `error`: the case is SKIPPED with that reason, not
 * FAILED. From a minor-0 plugin this code is a failure like any other nonzero code. */
#define OPVAL_PLUGIN_DECLINED 3

/** The ABI version the plugin was built for: return OPVAL_PLUGIN_ABI_VERSION. opval calls it
 * first and refuses the plugin on a mismatch. */
OPVAL_PLUGIN_EXPORT uint32_t opval_plugin_abi_version(void);

/** OPTIONAL: the minor version the plugin was built for: return
 * OPVAL_PLUGIN_ABI_MINOR_VERSION. Without it the plugin is minor 0. opval refuses a plugin
 * whose minor is newer than its own (it would not honour what the plugin relies on). */
OPVAL_PLUGIN_EXPORT uint32_t opval_plugin_abi_minor_version(void);

/** A short name of the implementation (e.g. "sgemm_tiled"); opval names the backend
 * "plugin:<name>". The string must stay valid while the plugin is loaded (a literal). */
OPVAL_PLUGIN_EXPORT const char* opval_plugin_name(void);

/** Whether the plugin can run `problem`. Returns OPVAL_PLUGIN_SUPPORTED, or
 * OPVAL_PLUGIN_UNIMPLEMENTED / OPVAL_PLUGIN_SKIPPED after writing a NUL-terminated reason
 * (what is not supported, naming the attribute) of at most reason_size bytes into `reason`.
 * Called once per case before any data is allocated; must not have side effects. */
OPVAL_PLUGIN_EXPORT int opval_plugin_supports(const opval_problem* problem, char* reason,
                                              size_t reason_size);

/** Computes `problem` synchronously: reads n_inputs input tensors and writes every element
 * of the n_outputs output tensors, in the operand order the op documents (matmul: A, B,
 * then the block scales A_scale and B_scale when block > 0, then the optional operands;
 * output dst). Shapes and strides are those of the case; honour
 * the strides. `stream` is the device queue to run on (NULL for CPU tensors); for CPU
 * tensors the work must be complete when the function returns, for device tensors it must be
 * enqueued on `stream` (see opval_plugin_device). Returns 0 on success; otherwise a nonzero code
 * after writing a NUL-terminated message of at most error_size bytes into `error` (the
 * case becomes FAILED with that message and the run goes on), or, minor >= 1,
 * OPVAL_PLUGIN_DECLINED with the reason (the case becomes SKIPPED with it). Called only for
 * problems opval_plugin_supports() accepted; may be called several times per case (a decline
 * after an earlier call of the same case ran is SKIPPED too, its reason saying so). */
OPVAL_PLUGIN_EXPORT int opval_plugin_execute(const opval_problem* problem,
                                             const opval_tensor* inputs, size_t n_inputs,
                                             opval_tensor* outputs, size_t n_outputs,
                                             void* stream, char* error, size_t error_size);

/** OPTIONAL (still ABI 1; a plugin without it gets host tensors): the device the plugin's
 * kernels want their tensors on, an opval_device_kind value, the same for every problem.
 * OPVAL_DEVICE_CUDA: before each execute opval copies every input and output (the whole
 * strided extent, padding included) to device memory of CUDA device 0, passes tensors whose
 * `data` are device pointers with device = OPVAL_DEVICE_CUDA, and passes its cudaStream_t as
 * `stream`; the kernel enqueues its work on that stream and may return before it completes:
 * opval synchronizes the stream, times the work with CUDA events and copies the outputs back.
 * Shapes and strides stay host memory. When opval has no CUDA (built without it, or no
 * device or driver), the plugin's cases are SKIPPED with the reason. */
OPVAL_PLUGIN_EXPORT int32_t opval_plugin_device(void);

#endif /* OPVAL_PLUGIN_H */
