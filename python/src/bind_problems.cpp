// Ops, problems, suites and problem files.
#include <nanobind/operators.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <functional>

#include "bindings.hpp"
#include "opval/error.hpp"
#include "opval/op_spec.hpp"
#include "opval/problem.hpp"
#include "opval/runner.hpp"
#include "opval/session.hpp"

namespace opval::python {

namespace {

nb::dict attrs_of(const problem& p) {
  nb::dict out;
  for (const attr_def& d : p.spec().schema().defs()) out[d.name.c_str()] = nb::cast(p.value(d.name));
  return out;
}

using located_pairs = std::vector<std::pair<problem, std::string>>;

located_pairs as_pairs(std::vector<located_problem> problems) {
  located_pairs out;
  out.reserve(problems.size());
  for (located_problem& lp : problems) out.emplace_back(std::move(lp.prob), std::move(lp.source));
  return out;
}

void bind_operand(nb::module_& m) {
  nb::class_<operand>(m, "Operand", "One input or output of a problem: name, type, logical shape and layout")
      .def_ro("name", &operand::name)
      .def_ro("dtype", &operand::type)
      .def_ro("shape", &operand::shape)
      .def_prop_ro("strides", [](const operand& o) { return o.lay.strides.empty() ? row_major_strides(o.shape) : o.lay.strides; },
                   "in elements")
      .def_prop_ro("offset", [](const operand& o) { return o.lay.offset; }, "in elements, from the allocation's start")
      .def_prop_ro("contiguous", [](const operand& o) {
        return o.lay.offset == 0 && (o.lay.strides.empty() || o.lay.strides == row_major_strides(o.shape));
      }, "row-major, dense, at the start of its allocation")
      .def("__repr__", [](const operand& o) {
        return "Operand(" + o.name + ", " + std::string(to_string(o.type)) + ", " + to_string(o.shape) + ")";
      });
}

void bind_problem(nb::module_& m) {
  nb::class_<problem>(m, "Problem", "One test problem: op, attributes, contract and fill; one line of text")
      .def("__init__", [](problem* p, std::string_view line) { new (p) problem(parse_problem(line)); },
           nb::arg("descriptor"), "Parses a descriptor such as 'matmul m=64 n=48 k=33 dt=bf16'")
      .def_prop_ro("op", [](const problem& p) { return std::string(p.op()); })
      .def_rw("contract", &problem::dt)
      .def_rw("fill", &problem::fill)
      .def_prop_ro("attrs", &attrs_of, "every attribute of the op with its value here (defaults included)")
      .def("get", &problem::value, nb::arg("name"), "the attribute's value (its default when unset)")
      .def("has", &problem::has, nb::arg("name"), "True when the descriptor sets the attribute explicitly")
      .def("implemented_by", [](const problem& p, const contract& declared) { return implements_contract(declared, p); },
           nb::arg("declared"),
           "whether a kernel declaring `declared` implements this problem's contract: the types and each option "
           "the op reads equal (ulp= for the functions it reads, so a preset matches its expansion)")
      .def("contract_as_read", [](const problem& p, const contract& c) { return contract_read_by(p.spec(), c); },
           nb::arg("contract"),
           "`contract` as a problem of this op carries it: each option the op does not read at its default")
      .def("inputs", [](const problem& p) { return p.spec().inputs(p); }, "the operands the kernel reads, in order")
      .def("outputs", [](const problem& p) { return p.spec().outputs(p); }, "the operands the kernel writes, in order")
      .def("counts", [](const problem& p) {
        const op_counts c = p.spec().counts(p);
        return std::make_pair(c.flops, c.bytes);
      }, "(flops, bytes) of one run")
      .def("make_inputs", [](const problem& p, std::uint64_t seed) {
        std::vector<tensor> in = allocate(p.spec().inputs(p));
        p.spec().fill(p, seed, in);
        return in;
      }, nb::arg("seed") = 1, "the inputs every backend gets for this seed (the op's fill, its layouts)")
      .def("reference", [](const problem& p, const std::vector<tensor>& in) {
        std::vector<operand> outs = p.spec().outputs(p);
        std::vector<tensor> out;
        for (const operand& o : outs) out.emplace_back(dtype::f64, o.shape);
        p.spec().reference(p, in, out);
        return out;
      }, nb::arg("inputs"), nb::call_guard<nb::gil_scoped_release>(),
           "the op's fp64 reference on `inputs`: contiguous f64 tensors, one per output")
      .def("__str__", &problem::to_string)
      .def("__repr__", [](const problem& p) { return "Problem('" + p.to_string() + "')"; })
      .def("__hash__", [](const problem& p) { return std::hash<std::string>{}(p.to_string()); })
      .def(nb::self == nb::self);
}

void bind_ops(nb::module_& m) {
  nb::class_<attr_def>(m, "AttrDef", "One attribute of an op's schema")
      .def_ro("name", &attr_def::name)
      .def_prop_ro("kind", [](const attr_def& d) { return std::string(to_string(d.kind)); })
      .def_ro("default", &attr_def::default_value)
      .def_ro("doc", &attr_def::doc)
      .def_ro("choices", &attr_def::choices)
      .def_ro("min", &attr_def::min)
      .def_ro("max", &attr_def::max);
  nb::class_<op_spec>(m, "Op", "A registered operator")
      .def_prop_ro("name", [](const op_spec& s) { return std::string(s.name()); })
      .def_prop_ro("summary", [](const op_spec& s) { return std::string(s.summary()); })
      .def_prop_ro("contracts", &op_spec::contracts)
      .def_prop_ro("fills", &op_spec::fills)
      .def_prop_ro("attrs", [](const op_spec& s) { return s.schema().defs(); })
      .def("suite", [](const op_spec& s, std::string_view tag) { return s.suite(tag); }, nb::arg("tag"),
           "the descriptor lines of the suite `tag` (smoke, regression)")
      .def("__repr__", [](const op_spec& s) { return "Op('" + std::string(s.name()) + "')"; });
  m.def("ops", &all_ops, nb::rv_policy::reference, "every registered op");
  m.def("find_op", &find_op, nb::arg("name"), nb::rv_policy::reference);
  m.def("suite_problems", [](const std::string& tag, const std::vector<std::string>& ops) {
    return as_pairs(suite_problems(tag, ops));
  }, nb::arg("tag"), nb::arg("ops") = std::vector<std::string>{},
        "(problem, source) of the suite `tag` of every op, or of `ops`");
  m.def("read_problem_file", [](const std::string& path) { return as_pairs(read_problem_file(path)); },
        nb::arg("path"), "(problem, 'file:line') of a batch file");
  m.def("select_problems",
        [](const std::string& tag, const std::vector<std::string>& ops, const std::vector<std::string>& contracts,
           const std::vector<std::string>& problems, const std::string& inline_source) {
          return as_pairs(select_problems({.tag = tag, .ops = ops, .contracts = contracts, .problems = problems, .inline_source = inline_source}));
        },
        nb::arg("tag") = "smoke", nb::arg("ops") = std::vector<std::string>{},
        nb::arg("contracts") = std::vector<std::string>{}, nb::arg("problems") = std::vector<std::string>{},
        nb::arg("inline_source") = "<command line>",
        "(problem, source) of the session's selection, as `opval run` selects: `problems` (descriptors, batch "
        "files, shape sets) or the suite `tag`, filtered by `ops` and `contracts`");
}

}  // namespace

void bind_problems(nb::module_& m) {
  bind_operand(m);
  bind_problem(m);
  bind_ops(m);
}

}  // namespace opval::python
