"""NumPy kernels for the tests of opval.check: correct ones, legitimate variants (other
summation orders, split-K, online softmax, Welford statistics) and planted bugs."""
import ml_dtypes
import numpy as np

F32 = np.float32


# ----------------------------------------------------------------------------- matmul
# Supported: no batch, no beta, no bias/residual, act none; alpha honoured.

def matmul_f32(A, B, *, alpha):
    return (F32(alpha) * (A @ B)).astype(F32)


def matmul_k_reversed(A, B, *, alpha, out):
    """Sums the k products from the last to the first, in f32."""
    acc = np.zeros(out.shape, F32)
    for k in reversed(range(A.shape[1])):
        acc += np.outer(A[:, k], B[k, :]).astype(F32)
    out[...] = F32(alpha) * acc


def matmul_split_k(A, B, *, alpha):
    """Two halves of k summed separately, then added (split-K)."""
    half = A.shape[1] // 2
    partial = (A[:, :half] @ B[:half, :]).astype(F32) + (A[:, half:] @ B[half:, :]).astype(F32)
    return (F32(alpha) * partial).astype(F32)


def matmul_f64_accumulate(A, B, *, alpha):
    """More accurate than the contract asks: f64 sums, one rounding at the end."""
    return (alpha * (A.astype(np.float64) @ B.astype(np.float64))).astype(F32)


def matmul_dropped_k(A, B, *, alpha):
    """Planted: the last k term is never added."""
    return (F32(alpha) * (A[:, :-1] @ B[:-1, :])).astype(F32)


def matmul_tile_edge_bug(A, B, *, alpha, out, tile=4):
    """Planted: 4x4 output tiles; a partial tile at the right edge reads B one column too far left."""
    m, n = out.shape
    for i0 in range(0, m, tile):
        for j0 in range(0, n, tile):
            j1 = min(j0 + tile, n)
            src = slice(j0 - 1, j1 - 1) if j1 - j0 < tile else slice(j0, j1)
            out[i0:i0 + tile, j0:j1] = F32(alpha) * (A[i0:i0 + tile, :] @ B[:, src])


def matmul_bf16_rne(A, B, *, alpha):
    """bf16:f32:bf16: bf16 inputs, f32 products and sums, rounded to nearest bf16."""
    return (F32(alpha) * (A.astype(F32) @ B.astype(F32))).astype(ml_dtypes.bfloat16)


def matmul_bf16_truncating(A, B, *, alpha):
    """Planted: the f32 result is truncated to bf16 (the low 16 bits dropped), not rounded."""
    r = (F32(alpha) * (A.astype(F32) @ B.astype(F32))).astype(F32)
    return (r.view(np.uint32) & np.uint32(0xFFFF0000)).view(F32).astype(ml_dtypes.bfloat16)


# ----------------------------------------------------------------------------- softmax

def softmax(x, *, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(F32)


def softmax_online(x, *, axis, chunk=8):
    """The one-pass (online) softmax: running max and rescaled running sum, chunk by chunk."""
    x = np.moveaxis(x, axis, -1)
    running_max = np.full(x.shape[:-1], -np.inf, F32)
    running_sum = np.zeros(x.shape[:-1], F32)
    for c0 in range(0, x.shape[-1], chunk):
        block = x[..., c0:c0 + chunk]
        new_max = np.maximum(running_max, block.max(axis=-1))
        running_sum = running_sum * np.exp(running_max - new_max) + np.exp(block - new_max[..., None]).sum(axis=-1)
        running_max = new_max
    y = np.exp(x - running_max[..., None]) / running_sum[..., None]
    return np.moveaxis(y.astype(F32), -1, axis)


def softmax_no_max_subtraction(x, *, axis):
    """Planted: exp(x) / sum exp(x), which overflows for large x."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return (e / e.sum(axis=axis, keepdims=True)).astype(F32)


def softmax_writes_input(x, *, axis):
    """Planted: subtracts the maximum in place, in the caller's input."""
    x -= x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return (e / e.sum(axis=axis, keepdims=True)).astype(F32)


# ----------------------------------------------------------------------------- layer_norm
# Supported: norm_axes=1, affine=1.

def layer_norm_two_pass(x, gamma, beta, *, eps):
    mean = x.mean(axis=-1, keepdims=True, dtype=F32)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True, dtype=F32)
    return ((x - mean) / np.sqrt(var + F32(eps)) * gamma + beta).astype(F32)


def layer_norm_welford(x, gamma, beta, *, eps):
    """Welford's running mean and M2, element by element along the row (in f32)."""
    mean = np.zeros(x.shape[:-1] + (1,), F32)
    m2 = np.zeros_like(mean)
    for i in range(x.shape[-1]):
        delta = x[..., i:i + 1] - mean
        mean = (mean + delta / F32(i + 1)).astype(F32)
        m2 = (m2 + delta * (x[..., i:i + 1] - mean)).astype(F32)
    var = m2 / F32(x.shape[-1])
    return ((x - mean) / np.sqrt(var + F32(eps)) * gamma + beta).astype(F32)


def layer_norm_wrong_eps(x, gamma, beta):
    """Planted: eps fixed at 1e-5, whatever the problem says."""
    return layer_norm_two_pass(x, gamma, beta, eps=1e-5)


# ----------------------------------------------------------------------------- attention
# Supported: f32, no bias mask, no key lengths, hkv = h; causal none / top_left / bottom_right.

def _attention(q, k, v, scale, causal, shift=0):
    lq, lk = q.shape[-2], k.shape[-2]
    s = F32(scale) if scale else F32(1 / np.sqrt(q.shape[-1]))
    logits = (q @ np.swapaxes(k, -1, -2)) * s
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    if causal == "top_left":
        logits = np.where(j <= i + shift, logits, -np.inf)
    elif causal == "bottom_right":
        logits = np.where(j <= i + lk - lq + shift, logits, -np.inf)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return (p @ v).astype(F32)


def attention(q, k, v, *, scale, causal):
    return _attention(q, k, v, scale, causal)


def attention_causal_off_by_one(q, k, v, *, scale, causal):
    """Planted: the causal mask lets each query see one key too many."""
    return _attention(q, k, v, scale, causal, shift=1)
