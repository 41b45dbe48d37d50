// Tensors, seen from Python as zero-copy NumPy arrays.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <vector>

#include "bindings.hpp"
#include "opval/tensor.hpp"

namespace opval::python {

namespace {

/// The DLPack type of t's storage. NumPy has no bf16 or fp8 types: those are exposed as
/// unsigned integers of the same width, which python/opval/arrays.py views as ml_dtypes'.
nb::dlpack::dtype storage_dlpack_type(dtype t) {
  switch (t) {
    case dtype::f64: return nb::dtype<double>();
    case dtype::f32:
    case dtype::tf32: return nb::dtype<float>();
    case dtype::f16: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case dtype::bf16: return nb::dtype<std::uint16_t>();
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::u8: return nb::dtype<std::uint8_t>();
    case dtype::i8: return nb::dtype<std::int8_t>();
    case dtype::i32: return nb::dtype<std::int32_t>();
    case dtype::i64: return nb::dtype<std::int64_t>();
    case dtype::boolean: return nb::dtype<bool>();
  }
  return nb::dtype<std::uint8_t>();
}

/// A NumPy array over t's elements (no copy). The array owns a reference to t's storage, so
/// it stays valid however long Python keeps it.
nb::object numpy_view(const tensor& t) {
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  const std::vector<std::int64_t> strides(t.strides().begin(), t.strides().end());
  auto* keep = new tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<tensor*>(p); });
  nb::ndarray<nb::numpy> array(const_cast<void*>(t.data()), shape.size(), shape.data(), owner, strides.data(),
                               storage_dlpack_type(t.type()));
  return array.cast();
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
      .def("__repr__", [](const tensor& t) {
        return "Tensor(" + std::string(to_string(t.type())) + ", " + to_string(t.shape()) + ")";
      });
}

}  // namespace opval::python
