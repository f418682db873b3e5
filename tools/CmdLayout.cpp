// `tilescope layout`: one layout on its own — evaluate it at an element, print
// its whole mapping, prove it legal, check it against an instruction, or count
// the bank conflicts of an instruction's access pattern.
//
//   tilescope layout LAYOUT --shape 8,16 [--at i,j] [--table] [--dtype T] [--json]
//   tilescope layout LAYOUT [--compose B | --complement M | --divide T] [--json]
//   tilescope layout LAYOUT --shape ... --check [--target sm_90a] [--threads N]
//                    [--cluster N] [--devices N] [--scope auto|reg|shared|tmem|global]
//                    [--inst NAME [--mn-major]]
//                    [--banks NAME] [--overlaps-with LAYOUT --other-shape dims] [--json]
//   tilescope layout --placement FILE:TENSOR --args N=2,MD=4,... [any of the above]
//                    the placement a devices(N) kernel declares on its tensor
//                    parameter TENSOR (ir/Placement.h), at those sizes: the
//                    shape, --devices, --elements and --scope default to the
//                    logical tensor, the launch's device count, the instance
//                    and global memory
//
// Exit status: 0 clean, 1 the layout has findings (--check), 2 input error
// (bad layout text, unknown axis, shape not admitted, bad --at ...), after a
// `file:line:col: error:` diagnostic pointing into <layout>, <shape>, <at>...
#include "ir/ConcreteEval.h"
#include "ir/InstructionRules.h"
#include "ir/LayoutAlgebra.h"
#include "ir/LayoutPresets.h"
#include "ir/LayoutText.h"
#include "ir/Placement.h"
#include "ir/Printer.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/NameValues.h"
#include "tools/OptionValues.h"
#include "verifier/BankConflicts.h"
#include "verifier/LayoutVerifier.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tilescope::tool {
namespace {

namespace cl = llvm::cl;
namespace json = llvm::json;

cl::SubCommand layoutCommand("layout", "Evaluate, print and check one layout");

cl::opt<std::string> layoutArg(cl::Positional, cl::desc("LAYOUT"), cl::init(""),
                               cl::sub(layoutCommand));
cl::opt<std::string> placementOpt("placement",
                                  cl::desc("The placement a kernel declares on a tensor "
                                           "parameter, instead of LAYOUT (docs/scales.md)"),
                                  cl::value_desc("file:tensor"), cl::init(""),
                                  cl::sub(layoutCommand));
cl::opt<std::string> argsOpt("args", cl::desc("--placement: the sizes, e.g. N=2,MD=4,K=8"),
                             cl::value_desc("name=value,..."), cl::init(""),
                             cl::sub(layoutCommand));
cl::opt<std::string> shapeOpt("shape", cl::desc("Logical shape, e.g. 8,16 (presets: optional)"),
                              cl::value_desc("dims"), cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string> atOpt("at", cl::desc("Print the owners of one logical element, e.g. 3,9"),
                           cl::value_desc("i,j"), cl::init(""), cl::sub(layoutCommand));
cl::opt<bool> tableOpt("table", cl::desc("Print the whole mapping as a grid"),
                       cl::sub(layoutCommand));
cl::opt<std::string> dtypeOpt("dtype",
                              cl::desc("Element type: adds bank and line of memory owners"),
                              cl::init(""), cl::sub(layoutCommand));
cl::opt<bool> jsonOpt("json", cl::desc("Print JSON"), cl::sub(layoutCommand));
cl::opt<bool> checkOpt("check", cl::desc("Prove the layout legal (exit 1 on findings)"),
                       cl::sub(layoutCommand));
cl::opt<std::string> targetOpt("target", cl::desc("sm_80, sm_90a or sm_100a (default sm_90a)"),
                               cl::init("sm_90a"), cl::sub(layoutCommand));
IntOption<int64_t> threadsOpt("threads", cl::desc("Threads per CTA (default 128)"), cl::init(128),
                            cl::sub(layoutCommand));
IntOption<int64_t> clusterOpt("cluster", cl::desc("CTAs per cluster along x (default 1)"),
                            cl::init(1), cl::sub(layoutCommand));
IntOption<int64_t> devicesOpt("devices",
                            cl::desc("Devices of the launch: the extent of pid (device placement "
                                     "of a global tensor, docs/scales.md; default 1)"),
                            cl::init(1), cl::sub(layoutCommand));
cl::opt<std::string> scopeOpt("scope",
                              cl::desc("auto, reg, shared, tmem or global (auto: from the axes)"),
                              cl::init("auto"), cl::sub(layoutCommand));
IntOption<int64_t> elementsOpt("elements",
                             cl::desc("Slots of the allocation on m (default: the shape's count)"),
                             cl::init(0), cl::sub(layoutCommand));
IntOption<int64_t> columnsOpt("columns", cl::desc("Allocated TMEM columns (default: the target's)"),
                            cl::init(0), cl::sub(layoutCommand));
cl::opt<std::string> instOpt("inst", cl::desc("Check the layout against an instruction's rules"),
                             cl::init(""), cl::sub(layoutCommand));
cl::opt<bool> mnMajorOpt("mn-major", cl::desc("--inst wgmma.smem/tcgen05.smem: MN-major operand"),
                         cl::sub(layoutCommand));
cl::opt<std::string> banksOpt("banks",
                              cl::desc("Bank conflicts of an instruction's access pattern "
                                       "(ldmatrix.x4, lds.128, ...)"),
                              cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string>
    otherOpt("overlaps-with",
             cl::desc("Prove this second layout's footprint disjoint from LAYOUT's"),
             cl::value_desc("LAYOUT"), cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string> otherShapeOpt("other-shape", cl::desc("Shape of --overlaps-with's layout"),
                                   cl::value_desc("dims"), cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string>
    composeOpt("compose", cl::desc("Print LAYOUT o B: B maps indices to LAYOUT's flat indices"),
               cl::value_desc("B"), cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string> complementOpt("complement",
                                   cl::desc("Print the complement of LAYOUT in [0, M)"),
                                   cl::value_desc("M"), cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string> divideOpt("divide",
                               cl::desc("Print LAYOUT divided by the tiler T (tiles x tile)"),
                               cl::value_desc("T"), cl::init(""), cl::sub(layoutCommand));
cl::opt<std::string> engineOpt("engine", cl::desc("auto, z3 or enumerate (default auto)"),
                               cl::init("auto"), cl::sub(layoutCommand), cl::Hidden);

// `8,16` -> {8, 16}; each entry at least `minimum`.
std::optional<std::vector<int64_t>> parseList(Diagnostics &diag, llvm::StringRef name,
                                              llvm::StringRef text, int64_t minimum,
                                              const char *what) {
  OptionText source(diag, name, text);
  std::vector<int64_t> out;
  if (text.trim().empty()) {
    source.error(0, fmt::format("expected a comma-separated list of {}", what));
    return std::nullopt;
  }
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    llvm::StringRef item = text.slice(pos, comma == llvm::StringRef::npos ? text.size() : comma);
    size_t lead = item.size() - item.ltrim().size();
    llvm::StringRef trimmed = item.trim();
    int64_t v = 0;
    if (trimmed.empty() || trimmed.getAsInteger(10, v)) {
      source.error(pos + lead, fmt::format("expected an integer, not '{}'", trimmed.str()));
      return std::nullopt;
    }
    if (v < minimum || v > (int64_t{1} << 40)) {
      source.error(pos + lead, fmt::format("{} must be in [{}, 2^40], not {}", what, minimum, v));
      return std::nullopt;
    }
    out.push_back(v);
    if (comma == llvm::StringRef::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

// Owners in axis order, as the contract prints them: {"laneid":12,"warpid":6,"m":1}.
void writeOwner(json::OStream &j, const PhysCoord &c, std::optional<Dtype> dtype) {
  j.object([&] {
    for (size_t i = 0; i < kNumAxes; ++i)
      if (c.has(static_cast<Axis>(i)))
        j.attribute(llvm::StringRef(axisName(static_cast<Axis>(i)).data(),
                                    axisName(static_cast<Axis>(i)).size()),
                    c.value[i]);
    if (dtype && c.has(Axis::m)) {
      BankSlot slot = bankOf(c.get(Axis::m), *dtype);
      j.attribute("bank", slot.bank);
      j.attribute("line", slot.line);
    }
  });
}

void writeInts(json::OStream &j, const std::vector<int64_t> &v) {
  j.array([&] {
    for (int64_t x : v)
      j.value(x);
  });
}

void writeViolation(json::OStream &j, const LayoutViolation &v) {
  j.object([&] {
    j.attribute("kind", std::string(violationKindName(v.kind)));
    j.attributeObject("witness", [&] {
      j.attributeArray("logical", [&] {
        for (const auto &l : v.witness.logical)
          writeInts(j, l);
      });
      if (!v.witness.replica.empty()) {
        j.attributeBegin("replica");
        writeInts(j, v.witness.replica);
        j.attributeEnd();
      }
      if (!v.witness.buffers.empty())
        j.attributeArray("buffers", [&] {
          for (const auto &b : v.witness.buffers)
            j.value(b);
        });
      if (v.witness.physical.axes) {
        j.attributeBegin("physical");
        writeOwner(j, v.witness.physical, std::nullopt);
        j.attributeEnd();
      }
      if (v.witness.axis)
        j.attribute("axis", std::string(axisName(*v.witness.axis)));
      if (v.kind == ViolationKind::Bounds)
        j.attribute("extent", v.witness.extent);
      if (!v.witness.symbols.empty())
        j.attributeObject("symbols", [&] {
          for (const auto &[name, value] : v.witness.symbols)
            j.attribute(name, value);
        });
    });
    j.attribute("message", v.message);
  });
}

void writeBanks(json::OStream &j, const BankReport &r) {
  j.object([&] {
    j.attribute("instruction", r.instruction);
    if (!r.error.empty()) {
      j.attribute("error", r.error);
      return;
    }
    j.attribute("requests", r.requests);
    j.attribute("wavefronts_per_request", r.wavefrontsPerRequest);
    j.attribute("ideal", r.idealWavefronts);
    j.attribute("degree", r.degree());
    j.attribute("total_wavefronts", r.totalWavefronts);
    j.attribute("worst_request", r.worstRequest);
    j.attributeArray("conflicts", [&] {
      for (const BankAccess &a : r.conflicts)
        j.object([&] {
          j.attribute("thread", a.thread);
          j.attributeBegin("logical");
          writeInts(j, a.logical);
          j.attributeEnd();
          j.attribute("byte", a.byte);
          j.attribute("bank", a.bank);
        });
    });
  });
}

// One cell of the table: every owner, the values on the layout's axes.
std::string cellText(const Layout &l, int64_t flat) {
  std::string cell;
  l.forEachOwner(flat, [&](const PhysCoord &c) {
    std::string owner;
    for (size_t i = 0; i < kNumAxes; ++i)
      if (c.has(static_cast<Axis>(i)))
        owner += fmt::format("{}{}", owner.empty() ? "" : ":", c.value[i]);
    cell += (cell.empty() ? "" : "|") + owner;
  });
  return cell;
}

void printTable(const Layout &l, const std::vector<int64_t> &shape) {
  std::string axes;
  PhysCoord first = l.owners(0).front();
  for (size_t i = 0; i < kNumAxes; ++i)
    if (first.has(static_cast<Axis>(i)))
      axes += fmt::format("{}{}", axes.empty() ? "" : ":", axisName(static_cast<Axis>(i)));
  llvm::outs() << fmt::format("{} on shape {}; each cell is {}{}\n", l.str(), formatLogical(shape),
                              axes, l.replicas() > 1 ? ", replicas separated by |" : "");
  int64_t cols = shape.empty() ? 1 : shape.back();
  int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
  int64_t tiles = l.size() / std::max<int64_t>(rows * cols, 1);
  std::vector<std::string> cells(static_cast<size_t>(l.size()));
  size_t width = 1;
  for (int64_t f = 0; f < l.size(); ++f) {
    cells[f] = cellText(l, f);
    width = std::max(width, cells[f].size());
  }
  width = std::max(width, std::to_string(cols - 1).size());
  size_t rowLabel = std::to_string(std::max<int64_t>(rows - 1, 0)).size();
  for (int64_t t = 0; t < tiles; ++t) {
    if (shape.size() > 2) {
      std::vector<int64_t> lead =
          unflattenIndex(std::vector<int64_t>(shape.begin(), shape.end() - 2), t);
      std::string label = "[";
      for (int64_t x : lead)
        label += std::to_string(x) + ", ";
      llvm::outs() << label << ":, :]\n";
    }
    llvm::outs() << std::string(rowLabel, ' ') << " ";
    for (int64_t c = 0; c < cols; ++c)
      llvm::outs() << " " << fmt::format("{:>{}}", c, width);
    llvm::outs() << "\n";
    for (int64_t r = 0; r < rows; ++r) {
      llvm::outs() << fmt::format("{:>{}}", r, rowLabel) << " ";
      for (int64_t c = 0; c < cols; ++c)
        llvm::outs() << " " << fmt::format("{:>{}}", cells[(t * rows + r) * cols + c], width);
      llvm::outs() << "\n";
    }
  }
}

constexpr int64_t kMaxTableCells = 1 << 16;

// --placement FILE:TENSOR: the layout text of the tensor's placement at the
// sizes of --args, with the defaults of shape, devices, elements and scope
// set from the kernel; nothing after an input error.
std::optional<std::string> placementText(Diagnostics &diag) {
  llvm::StringRef option = placementOpt.getValue();
  auto [path, tensor] = option.rsplit(':');
  if (tensor.empty() || path.empty()) {
    OptionText(diag, "<placement>", option).error(0, "--placement takes FILE:TENSOR");
    return std::nullopt;
  }
  auto module = loadModule(path, diag, Checked::Yes);
  if (!module)
    return std::nullopt;
  const Kernel *kernel = nullptr;
  const Param *param = nullptr;
  for (const Kernel &k : module->kernels)
    for (const Param &p : k.params)
      if (!param && p.isTensor && p.name == tensor) {
        kernel = &k;
        param = &p;
      }
  if (!param || !param->placement) {
    OptionText(diag, "<placement>", option)
        .error(path.size() + 1, fmt::format("no kernel of {} has a tensor parameter '{}' with a "
                                            "placement",
                                            path.str(), tensor.str()));
    return std::nullopt;
  }
  std::string why;
  auto sizes = parseNameValues(argsOpt.getValue(), &why);
  if (!sizes) {
    OptionText(diag, "<args>", argsOpt.getValue()).error(0, why);
    return std::nullopt;
  }
  std::map<std::string, int64_t> values = sizes->ints;
  const Expr &count = kernel->launch.devices.front();
  LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = values.find(as<Var>(e).name);
    return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  auto devices = evalConcrete(count, leaf);
  if (!devices) {
    OptionText(diag, "<args>", argsOpt.getValue())
        .error(0, fmt::format("give the device count {} in --args", print(count)));
    return std::nullopt;
  }
  values["ndev"] = *devices;
  std::vector<int64_t> instance;
  int64_t elements = 1;
  for (const Expr &d : param->shape) {
    auto v = evalConcrete(d, leaf);
    if (!v) {
      OptionText(diag, "<args>", argsOpt.getValue())
          .error(0, fmt::format("give the sizes of {}'s shape in --args", param->name));
      return std::nullopt;
    }
    instance.push_back(*v);
    elements *= *v;
  }
  auto layout = placementLayout(
      *param, [&](const Expr &e) { return evalConcrete(e, leaf); }, &why);
  llvm::SMLoc at;
  auto reading = readPlacement(*kernel, *param, &why, &at);
  if (!layout || !reading) {
    diag.error(param->placement->loc, why);
    return std::nullopt;
  }
  std::string shape;
  for (int64_t e : logicalShape(*reading, instance, *devices))
    shape += (shape.empty() ? "" : ",") + std::to_string(e);
  if (shapeOpt.getNumOccurrences() == 0)
    shapeOpt.setValue(shape);
  if (devicesOpt.getNumOccurrences() == 0)
    devicesOpt.setValue(*devices);
  if (elementsOpt.getNumOccurrences() == 0)
    elementsOpt.setValue(elements);
  if (scopeOpt.getNumOccurrences() == 0)
    scopeOpt.setValue("global");
  return layout->str();
}

int runLayout() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr);
  if (placementOpt.empty() == layoutArg.empty()) {
    OptionText(diag, "<layout>", layoutArg.getValue())
        .error(0, "give a LAYOUT or --placement FILE:TENSOR (one of them)");
    return kInputError;
  }
  if (!placementOpt.empty()) {
    auto text = placementText(diag);
    if (!text)
      return kInputError;
    layoutArg.setValue(*text);
  }
  auto spec = parseLayoutText(layoutArg, "<layout>", diag);
  if (!spec || diag.hasErrors())
    return kInputError;
  const Layout &layout = spec->layout;

  // Layout algebra: the resulting layout, in the same notation.
  if (!composeOpt.empty() || !complementOpt.empty() || !divideOpt.empty()) {
    if (int(!composeOpt.empty()) + int(!complementOpt.empty()) + int(!divideOpt.empty()) > 1) {
      OptionText(diag, "<algebra>", "").error(0, "give one of --compose, --complement, --divide");
      return kInputError;
    }
    std::string error, what, operand;
    std::optional<Layout> result;
    std::vector<int64_t> resultShape;
    if (!complementOpt.empty()) {
      auto m = parseList(diag, "<complement>", complementOpt, 1, "the cosize");
      if (!m)
        return kInputError;
      if (m->size() != 1) {
        OptionText(diag, "<complement>", complementOpt).error(0, "--complement takes one number");
        return kInputError;
      }
      result = complement(layout, m->front(), &error);
      what = "complement";
      operand = complementOpt;
    } else {
      std::string name = composeOpt.empty() ? "<divide>" : "<compose>";
      auto other = parseLayoutText(composeOpt.empty() ? divideOpt : composeOpt, name, diag);
      if (!other || diag.hasErrors())
        return kInputError;
      if (!composeOpt.empty()) {
        result = compose(layout, other->layout, &error);
        what = "compose";
        const LayoutPreset *p = findLayoutPreset(other->preset);
        if (p)
          resultShape = p->shape(other->presetArgs);
        else // a literal index map: its iters' extents
          for (const Iter &it : other->layout.shard())
            resultShape.push_back(it.extent);
      } else {
        result = logicalDivide(layout, other->layout, &error);
        what = "divide";
        resultShape = {layout.size() / std::max<int64_t>(other->layout.size(), 1),
                       other->layout.size()};
      }
      operand = composeOpt.empty() ? divideOpt : composeOpt;
    }
    if (!result) {
      OptionText(diag, "<" + what + ">", operand).error(0, error);
      return kInputError;
    }
    if (resultShape.empty())
      resultShape = {result->size()};
    if (jsonOpt) {
      json::OStream j(llvm::outs());
      j.object([&] {
        j.attribute("operation", what);
        j.attribute("layout", spec->str());
        j.attribute("operand", operand);
        j.attribute("result", result->str());
        j.attributeBegin("shape");
        writeInts(j, resultShape);
        j.attributeEnd();
      });
      llvm::outs() << "\n";
    } else {
      llvm::outs() << result->str() << "\n";
    }
    return kClean;
  }

  // The shape: given, or the preset's own.
  std::vector<int64_t> shape;
  if (!shapeOpt.empty() || spec->preset.empty()) {
    if (shapeOpt.empty()) {
      OptionText(diag, "<shape>", "")
          .error(0, fmt::format("give --shape for {} (it has {} "
                                "elements)",
                                layout.str(), layout.size()));
      return kInputError;
    }
    auto parsed = parseList(diag, "<shape>", shapeOpt, 1, "extents");
    if (!parsed)
      return kInputError;
    shape = *parsed;
  } else if (const LayoutPreset *preset = findLayoutPreset(spec->preset)) {
    shape = preset->shape(spec->presetArgs);
  }
  if (!layout.admits(shape)) {
    int64_t count = 1;
    for (int64_t e : shape)
      count = count > (int64_t{1} << 40) ? count : count * e;
    OptionText(diag, "<shape>", shapeOpt.empty() ? formatLogical(shape) : shapeOpt.getValue())
        .error(0, fmt::format("layout {} has {} elements, but shape {} has {}: the shape is not "
                              "admitted",
                              layout.str(), layout.size(), formatLogical(shape), count));
    return kInputError;
  }

  std::optional<Dtype> dtype;
  if (!dtypeOpt.empty()) {
    dtype = dtypeFromName(dtypeOpt);
    if (!dtype) {
      OptionText(diag, "<dtype>", dtypeOpt)
          .error(0, fmt::format("unknown dtype '{}'", dtypeOpt.getValue()));
      return kInputError;
    }
  }

  // --at: the owners of one element. It answers a different question than
  // the checks, so asking for both is an error, never a silent skip.
  if (!atOpt.empty() &&
      (checkOpt || !instOpt.empty() || !banksOpt.empty() || !otherOpt.empty() || tableOpt)) {
    OptionText(diag, "<at>", atOpt)
        .error(0, "--at prints one element's owners; it cannot be combined with --check, --inst, "
                  "--banks, --overlaps-with or --table (run them separately)");
    return kInputError;
  }
  if (!atOpt.empty()) {
    auto at = parseList(diag, "<at>", atOpt, 0, "indices");
    if (!at)
      return kInputError;
    if (at->size() != shape.size()) {
      OptionText(diag, "<at>", atOpt)
          .error(0, fmt::format("--at has {} indices, but the shape {} "
                                "has rank {}",
                                at->size(), formatLogical(shape), shape.size()));
      return kInputError;
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if ((*at)[d] >= shape[d]) {
        size_t column = 0;
        for (size_t k = 0, commas = 0; k < atOpt.size() && commas < d; ++k)
          if (atOpt[k] == ',' && ++commas == d)
            column = k + 1;
        OptionText(diag, "<at>", atOpt)
            .error(column, fmt::format("index {} is outside dimension {} of extent {}", (*at)[d], d,
                                       shape[d]));
        return kInputError;
      }
    int64_t flat = *flattenIndex(shape, *at);
    std::vector<PhysCoord> owners = layout.owners(flat);
    if (jsonOpt) {
      json::OStream j(llvm::outs());
      j.object([&] {
        j.attributeBegin("shape");
        writeInts(j, shape);
        j.attributeEnd();
        j.attributeBegin("logical");
        writeInts(j, *at);
        j.attributeEnd();
        j.attributeArray("owners", [&] {
          for (const PhysCoord &c : owners)
            writeOwner(j, c, dtype);
        });
      });
      llvm::outs() << "\n";
    } else {
      for (const PhysCoord &c : owners) {
        llvm::outs() << formatLogical(*at) << " -> " << c.str();
        if (dtype && c.has(Axis::m)) {
          BankSlot slot = bankOf(c.get(Axis::m), *dtype);
          llvm::outs() << fmt::format("  bank {}, line {}", slot.bank, slot.line);
        }
        llvm::outs() << "\n";
      }
    }
    return kClean;
  }

  if (tableOpt) {
    if (layout.size() * layout.replicas() > kMaxTableCells) {
      OptionText(diag, "<shape>", shapeOpt.empty() ? formatLogical(shape) : shapeOpt.getValue())
          .error(0, fmt::format("--table prints at most {} owners; this layout has {}",
                                kMaxTableCells, layout.size() * layout.replicas()));
      return kInputError;
    }
    printTable(layout, shape);
    return kClean;
  }

  // Checks: legality proofs, instruction rules, bank conflicts.
  auto target = targetFromName(targetOpt);
  if (!target) {
    OptionText(diag, "<target>", targetOpt)
        .error(0,
               fmt::format("unknown target '{}' (sm_80, sm_90a or sm_100a)", targetOpt.getValue()));
    return kInputError;
  }
  const TargetInfo &targetInfoRef = targetInfo(*target);
  if (threadsOpt < 1 || threadsOpt > targetInfoRef.maxThreadsPerCta) {
    OptionText(diag, "<threads>", std::to_string(threadsOpt))
        .error(0, fmt::format("--threads must be in [1, {}], not {}",
                              targetInfoRef.maxThreadsPerCta, threadsOpt.getValue()));
    return kInputError;
  }
  if (clusterOpt < 1 || clusterOpt > targetInfoRef.maxClusterSize) {
    OptionText(diag, "<cluster>", std::to_string(clusterOpt))
        .error(0, fmt::format("--cluster must be in [1, {}] on {}, not {}",
                              targetInfoRef.maxClusterSize, targetInfoRef.name,
                              clusterOpt.getValue()));
    return kInputError;
  }
  if (devicesOpt < 1 || devicesOpt > 4096) {
    OptionText(diag, "<devices>", std::to_string(devicesOpt))
        .error(0, fmt::format("--devices must be in [1, 4096], not {}", devicesOpt.getValue()));
    return kInputError;
  }
  std::optional<MemScope> scope =
      scopeOpt == "auto" ? std::optional(layoutScope(layout)) : memScopeFromName(scopeOpt);
  if (!scope) {
    OptionText(diag, "<scope>", scopeOpt)
        .error(0, fmt::format("unknown scope '{}' (auto, reg, shared, tmem or global)",
                              scopeOpt.getValue()));
    return kInputError;
  }
  ProofEngine engine = ProofEngine::Auto;
  if (engineOpt == "z3")
    engine = ProofEngine::Z3;
  else if (engineOpt == "enumerate")
    engine = ProofEngine::Enumerate;
  else if (engineOpt != "auto") {
    OptionText(diag, "<engine>", engineOpt).error(0, "--engine is auto, z3 or enumerate");
    return kInputError;
  }
  const InstructionRule *inst = nullptr, *banks = nullptr;
  for (auto [opt, rule, name] :
       {std::tuple{&instOpt, &inst, "<inst>"}, {&banksOpt, &banks, "<banks>"}}) {
    if (opt->empty())
      continue;
    *rule = findInstructionRule(*opt);
    if (!*rule) {
      OptionText(diag, name, *opt)
          .error(0, fmt::format("unknown instruction '{}' (one of: {})", opt->getValue(),
                                instructionRuleNames()));
      return kInputError;
    }
  }
  if (elementsOpt < 0 || columnsOpt < 0) {
    OptionText(diag, "<elements>", std::to_string(std::min<int64_t>(elementsOpt, columnsOpt)))
        .error(0, "--elements and --columns must not be negative");
    return kInputError;
  }

  BufferInfo buffer;
  buffer.name = "<layout>";
  buffer.scope = *scope;
  buffer.dtype = dtype.value_or(Dtype::f32);
  buffer.memoryElements = elementsOpt;
  buffer.tmemColumns = columnsOpt;
  LaunchShape launch;
  launch.threads = threadsOpt;
  launch.cluster = {clusterOpt, 1, 1};
  launch.devices = devicesOpt;

  // --overlaps-with: a second buffer of the same scope and dtype.
  std::optional<LayoutSpec> other;
  std::vector<int64_t> otherShape;
  if (!otherOpt.empty()) {
    other = parseLayoutText(otherOpt, "<other>", diag);
    if (!other || diag.hasErrors())
      return kInputError;
    if (!otherShapeOpt.empty()) {
      auto parsed = parseList(diag, "<other-shape>", otherShapeOpt, 1, "extents");
      if (!parsed)
        return kInputError;
      otherShape = *parsed;
    } else if (const LayoutPreset *preset = findLayoutPreset(other->preset)) {
      otherShape = preset->shape(other->presetArgs);
    } else {
      otherShape = {other->layout.size()};
    }
    if (!other->layout.admits(otherShape)) {
      OptionText(diag, "<other-shape>", otherShapeOpt)
          .error(0, fmt::format("layout {} does not admit shape {}", other->layout.str(),
                                formatLogical(otherShape)));
      return kInputError;
    }
  }

  bool prove = checkOpt || inst != nullptr || other.has_value();
  LayoutReport report;
  std::optional<BankReport> bankReport;
  if (prove) {
    VerifyOptions options;
    options.engine = engine;
    report = verifyLayout(layout, shape, buffer, targetInfoRef, launch, options);
    if (other) {
      BufferInfo otherBuffer = buffer;
      otherBuffer.name = "<other>";
      BufferView a{&layout, shape, buffer}, b{&other->layout, otherShape, otherBuffer};
      LayoutReport overlap = verifyNoOverlap(a, b, options);
      for (auto &v : overlap.violations)
        report.violations.push_back(std::move(v));
      for (auto &u : overlap.undecided)
        report.undecided.push_back(std::move(u));
    }
    if (inst) {
      InstructionUse use;
      use.mnMajor = mnMajorOpt;
      for (auto &v : checkInstruction(*inst, layout, shape, buffer, targetInfoRef, use))
        report.violations.push_back(std::move(v));
    }
  }
  if (banks) {
    bankReport = analyzeBankConflicts(*banks, layout, shape, buffer);
    if (!bankReport->error.empty()) {
      OptionText(diag, "<banks>", banksOpt).error(0, bankReport->error);
      return kInputError;
    }
    if (prove)
      if (auto v = bankViolation(*bankReport))
        report.violations.push_back(std::move(*v));
  }

  if (!prove && !bankReport) {
    // Nothing asked beyond the layout itself: a summary.
    if (jsonOpt) {
      json::OStream j(llvm::outs());
      j.object([&] {
        j.attribute("layout", spec->str());
        j.attributeBegin("shape");
        writeInts(j, shape);
        j.attributeEnd();
        j.attribute("elements", layout.size());
        j.attribute("replicas", layout.replicas());
      });
      llvm::outs() << "\n";
    } else {
      llvm::outs() << fmt::format("{}: {} elements over shape {}, {} owner{} each\n", spec->str(),
                                  layout.size(), formatLogical(shape), layout.replicas(),
                                  layout.replicas() == 1 ? "" : "s");
    }
    return kClean;
  }

  bool findings = prove && !report.legal();
  if (jsonOpt) {
    json::OStream j(llvm::outs());
    j.object([&] {
      if (prove) {
        j.attribute("legal", report.legal());
        j.attributeArray("violations", [&] {
          for (const auto &v : report.violations)
            writeViolation(j, v);
        });
        j.attributeArray("undecided", [&] {
          for (const auto &u : report.undecided)
            j.value(u);
        });
      }
      if (bankReport) {
        j.attributeBegin("banks");
        writeBanks(j, *bankReport);
        j.attributeEnd();
      }
    });
    llvm::outs() << "\n";
    return findings ? kFindings : kClean;
  }
  llvm::SMLoc loc = spec->loc;
  for (const auto &v : report.violations)
    diag.error(loc, fmt::format("{}: {}", violationKindName(v.kind), v.message));
  for (const auto &u : report.undecided)
    diag.error(loc, fmt::format("undecided: {}", u));
  if (bankReport && (!prove || bankReport->conflicts.empty()))
    llvm::outs() << describe(*bankReport) << "\n";
  if (prove && !findings)
    llvm::outs() << fmt::format("legal: {} on shape {} as a {} {} buffer, {} with {} threads{}{}\n",
                                spec->str(), formatLogical(shape), memScopeName(buffer.scope),
                                dtypeName(buffer.dtype), targetInfoRef.name, launch.threads,
                                launch.devices > 1
                                    ? fmt::format(" on {} devices", launch.devices)
                                    : "",
                                inst ? fmt::format(", accepted by {}", inst->name) : "");
  return findings ? kFindings : kClean;
}

CommandRegistration registration(layoutCommand, runLayout);
} // namespace
} // namespace tilescope::tool
