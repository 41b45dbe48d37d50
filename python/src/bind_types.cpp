// dtype, contract and policy: the numeric vocabulary.
#include <nanobind/operators.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include "bindings.hpp"
#include "opval/contract.hpp"
#include "opval/dtype.hpp"
#include "opval/policy.hpp"

namespace opval::python {

namespace {

void bind_dtype(nb::module_& m) {
  nb::enum_<dtype> d(m, "dtype", "Element types; the names are opval's spellings (f32, bf16, f8_e4m3, ...)");
  for (int i = 0; i <= static_cast<int>(last_dtype); ++i) {
    const auto t = static_cast<dtype>(i);
    d.value(std::string(to_string(t)).c_str(), t);
  }
  m.def("parse_dtype", &parse_dtype, nb::arg("name"), "The dtype a spelling names (aliases such as 'fp16', 's8' too)");
  m.def("dtype_name", [](dtype t) { return std::string(to_string(t)); }, nb::arg("t"));

  nb::class_<dtype_traits>(m, "DtypeInfo", "The constants of one dtype")
      .def_ro("size_bytes", &dtype_traits::size_bytes)
      .def_ro("bits", &dtype_traits::bits, "bits of a storage pattern (4 for f4_e2m1, stored one per byte)")
      .def_ro("is_float", &dtype_traits::is_float)
      .def_ro("is_signed", &dtype_traits::is_signed)
      .def_ro("precision", &dtype_traits::precision, "significand bits including the implicit bit (0: integer)")
      .def_ro("unit_roundoff", &dtype_traits::unit_roundoff)
      .def_ro("epsilon", &dtype_traits::epsilon)
      .def_ro("min_normal", &dtype_traits::min_normal)
      .def_ro("max", &dtype_traits::max)
      .def_ro("lowest", &dtype_traits::lowest)
      .def_prop_ro("name", [](const dtype_traits& t) { return std::string(t.name); });
  m.def("dtype_info", [](dtype t) { return traits(t); }, nb::arg("t"));

  nb::enum_<rounding>(m, "rounding").value("rne", rounding::rne).value("rz", rounding::rz);
  m.def("round_to", [](dtype t, double x, rounding r) { return round_to(t, x, r); }, nb::arg("t"), nb::arg("x"),
        nb::arg("r") = rounding::rne, "x rounded to a value of t (returned as a float)");
  m.def("ulp", &ulp, nb::arg("t"), nb::arg("x"), "the spacing of t's values around x");
  m.def("ulp_distance", &ulp_distance, nb::arg("t"), nb::arg("a"), nb::arg("b"),
        "how many values of t lie between a and b");
}

void bind_contract(nb::module_& m) {
  nb::class_<contract>(m, "Contract", "A numeric contract: input, math, accumulation and output types")
      .def("__init__", [](contract* c, std::string_view text) { new (c) contract(parse_contract(text)); },
           nb::arg("text"),
           "Parses a contract: its types ('bf16', 'f32@tf32:f32:f32', 'u8xi8:i32:f32'), then options "
           "('bf16:f32:bf16 mid=bf16', 'f32 denorm=ftz acc_round=rz'); str() of a Contract reads back")
      .def_rw("src", &contract::src)
      .def_rw("wei", &contract::wei)
      .def_rw("math", &contract::math)
      .def_rw("acc", &contract::acc)
      .def_rw("mid", &contract::mid)
      .def_rw("dst", &contract::dst)
      .def_rw("deterministic", &contract::deterministic)
      .def_rw("in_round", &contract::in_round)
      .def_rw("acc_round", &contract::acc_round)
      .def_rw("dst_round", &contract::dst_round)
      .def_prop_ro("ftz", [](const contract& c) { return c.denorm == denormals::ftz; }, "subnormals flushed to zero")
      .def("rounds_inputs", &contract::rounds_inputs, "the kernel rounds its inputs to `math` itself (tf32, f32@bf16)")
      .def("types_string", &contract::types_string, "src[xwei][@math]:acc:dst")
      .def("options_string", [](const contract& c) { return options_string(c); },
           "' key=value' for each option not at its default ('' when none): ' mid=bf16 denorm=ftz'")
      .def("__str__", &contract::to_string)
      .def("__repr__", [](const contract& c) { return "Contract('" + c.to_string() + "')"; })
      .def(nb::self == nb::self);
}

void bind_policy(nb::module_& m) {
  nb::enum_<policy_kind>(m, "policy_kind")
      .value("bound", policy_kind::bound)
      .value("relative_to_sim", policy_kind::relative_to_sim)
      .value("exact", policy_kind::exact)
      .value("fixed", policy_kind::fixed);
  nb::class_<policy>(m, "Policy", "How a result is judged (docs/NUMERICS.md)")
      .def("__init__", [](policy* p, std::string_view text) { new (p) policy(parse_policy(text)); },
           nb::arg("text") = "bound",
           "bound[:false_alarm=P][,random_data=0], relative-to-sim[:m=M], exact or fixed:rtol=R,atol=A")
      .def_ro("kind", &policy::kind)
      .def("__str__", &policy::to_string)
      .def("__repr__", [](const policy& p) { return "Policy('" + p.to_string() + "')"; });
}

}  // namespace

void bind_types(nb::module_& m) {
  bind_dtype(m);
  bind_contract(m);
  bind_policy(m);
}

}  // namespace opval::python
