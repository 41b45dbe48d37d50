// Tensors, seen from Python as zero-copy NumPy arrays.
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <vector>

#include "bindings.hpp"
#include "opval/tensor.hpp"

namespace opval::python {

namespace {

/// The DLPack type of t's storage. NumPy has no bf16, fp8, fp6, fp4 or int4 types: those are
/// exposed as unsigned integers of the same width (one byte per fp6/fp4/int4 element, as
/// opval stores them and ml_dtypes too), which python/opval/arrays.py views as ml_dtypes'.
nb::dlpack::dtype storage_dlpack_type(dtype t) {
  switch (t) {
    case dtype::f64: return nb::dtype<double>();
    case dtype::f32:
    case dtype::tf32: return nb::dtype<float>();
    case dtype::f16: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case dtype::bf16: return nb::dtype<std::uint16_t>();
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::f8_e4m3fnuz:
    case dtype::f8_e5m2fnuz:
    case dtype::f8_e8m0:
    case dtype::f4_e2m1:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2:
    case dtype::i4:
    case dtype::u4:
    case dtype::u8: return nb::dtype<std::uint8_t>();
    case dtype::i8: return nb::dtype<std::int8_t>();
    case dtype::i32: return nb::dtype<std::int32_t>();
    case dtype::i64: return nb::dtype<std::int64_t>();
    case dtype::boolean: return nb::dtype<bool>();
  }
  return nb::dtype<std::uint8_t>();
}

/// The DLPack type of t's elements for exchange with frameworks (DLPack 1.1 has bfloat16 and
/// the OCP float8 types; opval's f8_e4m3 is e4m3fn).
nb::dlpack::dtype exchange_dlpack_type(dtype t) {
  auto code = [](nb::dlpack::dtype_code c, std::uint8_t bits) {
    return nb::dlpack::dtype{static_cast<std::uint8_t>(c), bits, 1};
  };
  switch (t) {
    case dtype::bf16: return code(nb::dlpack::dtype_code::Bfloat, 16);
    case dtype::f8_e4m3: return code(nb::dlpack::dtype_code::Float8_E4M3FN, 8);
    case dtype::f8_e5m2: return code(nb::dlpack::dtype_code::Float8_E5M2, 8);
    default: return storage_dlpack_type(t);
  }
}

/// An array over t's elements (no copy), of DLPack type `type`: a NumPy array for
/// view<nb::numpy>, nanobind's own array object for view<>. It owns a reference to t's storage,
/// so it stays valid however long Python keeps it.
template <class... Framework>
nb::object view(const tensor& t, nb::dlpack::dtype type) {
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  const std::vector<std::int64_t> strides(t.strides().begin(), t.strides().end());
  auto* keep = new tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<tensor*>(p); });
  nb::ndarray<Framework...> array(const_cast<void*>(t.data()), shape.size(), shape.data(), owner, strides.data(), type);
  return array.cast();
}

nb::object numpy_view(const tensor& t) { return view<nb::numpy>(t, storage_dlpack_type(t.type())); }

/// The DLPack protocol's `__dlpack__`: a capsule over t's memory (no copy) in t's own element
/// type, which torch.from_dlpack, jax.dlpack.from_dlpack and np.from_dlpack (for types NumPy
/// has) take. Host memory only, never a copy: dl_device other than the CPU, or copy=True, is a
/// BufferError, as the protocol asks of a producer that cannot.
nb::object dlpack_capsule(const tensor& t, nb::kwargs kwargs) {
  if (kwargs.contains("copy") && !kwargs["copy"].is_none() && PyObject_IsTrue(kwargs["copy"].ptr()) == 1)
    throw nb::buffer_error("opval tensors are exported without copying (copy=True asked)");
  if (kwargs.contains("dl_device") && !kwargs["dl_device"].is_none() &&
      !kwargs["dl_device"].equal(nb::make_tuple(1, 0)))
    throw nb::buffer_error("opval tensors live in host memory: only dl_device (1, 0) is available");
  return view<>(t, exchange_dlpack_type(t.type()));
}

}  // namespace

void bind_tensors(nb::module_& m) {
  nb::class_<tensor>(m, "Tensor", "A typed, strided view of storage; numpy() shares it without copying")
      .def_prop_ro("dtype", &tensor::type)
      .def_prop_ro("shape", &tensor::shape)
      .def_prop_ro("strides", &tensor::strides, "in elements")
      .def_prop_ro("numel", &tensor::numel)
      .def("numpy", &numpy_view,
           "the elements as a NumPy array over the same memory (bf16 and fp8 as uint16 / uint8 bit patterns)")
      .def("to_list", &tensor::to_vector, "every element, exactly, as floats in row-major order")
      .def("__dlpack__", &dlpack_capsule, "DLPack export (no copy; bf16 and fp8 in their own DLPack types)")
      .def("__dlpack_device__", [](const tensor&) { return std::make_pair(1, 0); }, "(kDLCPU, 0): host memory")
      .def("__repr__", [](const tensor& t) {
        return "Tensor(" + std::string(to_string(t.type())) + ", " + to_string(t.shape()) + ")";
      });
}

}  // namespace opval::python
