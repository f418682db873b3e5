// `tilescope viz`: the layout visualizer from the command line.
//
//   tilescope viz LAYOUT --shape 64,128 [--dtype f32] -o page.html
//       one self-contained HTML page with the engine's evaluation embedded
//   tilescope viz --serve [--port P] [LAYOUT --shape ...]
//       the live page on http://127.0.0.1:P/, evaluating edits in C++
//   tilescope viz LAYOUT --shape ... --json
//       the evaluation document itself
//   tilescope viz FROM --copy-to TO [--inst tma] [--warp 0] [--global G] [--json]
//       the page's copy view as text (or its JSON document): one warp's
//       requests and phases, costed by the one bank model, and the shared
//       tile's legality for the instruction
//
// Exit status: 0 written and legal, 1 written but the layout has legality
// findings (the page shows their witnesses), 2 input or usage error.
#include "layoutviz/Copy.h"
#include "layoutviz/Evaluation.h"
#include "layoutviz/Page.h"
#include "layoutviz/Server.h"
#include "tools/Command.h"
#include "tools/OptionValues.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <string>

namespace tilescope::tool {
namespace {

namespace cl = llvm::cl;
namespace json = llvm::json;

cl::SubCommand vizCommand("viz", "Visualize a layout: write an HTML page or serve the live one");

cl::opt<std::string> layoutArg(cl::Positional, cl::desc("LAYOUT"), cl::init(""),
                               cl::sub(vizCommand));
cl::opt<std::string> shapeOpt("shape", cl::desc("Logical shape, e.g. 64,128 (presets: optional)"),
                              cl::value_desc("dims"), cl::init(""), cl::sub(vizCommand));
cl::opt<std::string> dtypeOpt("dtype", cl::desc("Element type (default: the preset's, else f32)"),
                              cl::init(""), cl::sub(vizCommand));
cl::opt<std::string> targetOpt("target", cl::desc("sm_80, sm_90a or sm_100a (default sm_90a)"),
                               cl::init("sm_90a"), cl::sub(vizCommand));
cl::opt<std::string> scopeOpt("scope", cl::desc("auto, reg, shared, tmem or global"),
                              cl::init("auto"), cl::sub(vizCommand));
// The integer options are read as text and parsed by the engine
// (viz::parseIntegerField), so the command line and the page's fields give
// the same messages: `expected an integer, not 'abc'`, `threads per CTA must
// be in [1, 1024], not -5`.
cl::opt<std::string> threadsOpt("threads", cl::desc("Threads per CTA (default 128)"),
                                cl::init("128"), cl::sub(vizCommand));
cl::opt<std::string> devicesOpt("devices", cl::desc("Extent of the pid axis (default 1)"),
                                cl::init("1"), cl::sub(vizCommand));
cl::opt<std::string>
    allocOpt("alloc", cl::desc("Slots of the allocation on m (default: the shape's elements)"),
             cl::init("0"), cl::sub(vizCommand));
cl::opt<std::string> copyToOpt("copy-to",
                               cl::desc("The copy view: LAYOUT is copied to this layout (one side "
                                        "a register fragment, the other a shared tile)"),
                               cl::value_desc("layout"), cl::init(""), cl::sub(vizCommand));
cl::opt<std::string> instOpt("inst",
                             cl::desc("With --copy-to: the instruction whose rules the shared "
                                      "tile must meet (tma, ldmatrix.x4, lds.128, ...)"),
                             cl::init(""), cl::sub(vizCommand));
cl::opt<std::string> warpOpt("warp", cl::desc("With --copy-to: the warp shown (default 0)"),
                             cl::init("0"), cl::sub(vizCommand));
cl::opt<std::string> globalOpt("global",
                               cl::desc("With --copy-to: the global tile TMA loads the shared "
                                        "tile from (or stores it to), e.g. S[(16,16):(4096,1)]"),
                               cl::init(""), cl::sub(vizCommand));
cl::opt<std::string> outputOpt("o", cl::desc("Write a self-contained HTML page"),
                               cl::value_desc("page.html"), cl::init(""), cl::sub(vizCommand));
cl::opt<bool> jsonOpt("json", cl::desc("Print the evaluation document as JSON"),
                      cl::sub(vizCommand));
cl::opt<bool> serveOpt("serve", cl::desc("Serve the live page on 127.0.0.1"), cl::sub(vizCommand));
IntOption<int> portOpt("port", cl::desc("Port for --serve (0: any free port)"),
                     cl::init(viz::kDefaultPort), cl::sub(vizCommand));

// The text a diagnostic of `kind` points into, and the name it goes by.
std::pair<std::string, std::string> sourceOf(std::string_view kind, const viz::VizRequest &r) {
  if (kind == "shape")
    return {"<shape>", r.shape};
  if (kind == "dtype")
    return {"<dtype>", r.dtype};
  if (kind == "target")
    return {"<target>", r.target};
  if (kind == "scope")
    return {"<scope>", r.scope};
  if (kind == "threads")
    return {"<threads>", r.threadsText.value_or(std::to_string(r.threads))};
  if (kind == "devices")
    return {"<devices>", r.devicesText.value_or(std::to_string(r.devices))};
  if (kind == "alloc")
    return {"<alloc>", r.allocText.value_or(std::to_string(r.alloc))};
  return {"<layout>", r.layout};
}

// `file:line:col: severity: message`, the source line and a caret.
void printDiagnostic(const json::Object &d, const viz::VizRequest &r) {
  std::string kind = d.getString("kind").getValueOr("").str();
  std::string severity = d.getString("severity").getValueOr("error").str();
  std::string message = d.getString("message").getValueOr("").str();
  int64_t line = d.getInteger("line").getValueOr(1), column = d.getInteger("column").getValueOr(1);
  auto [name, text] = sourceOf(kind, r);
  bool finding = kind == "alias" || kind == "bounds" || kind == "replica" || kind == "scope" ||
                 kind == "overlap";
  llvm::errs() << name << ":" << line << ":" << column << ": " << severity << ": "
               << (finding ? kind + ": " : "") << message << "\n";
  // The line the location points into, then the caret under its column.
  size_t start = 0;
  for (int64_t l = 1; l < line && start != std::string::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string::npos)
      ++start;
  }
  if (start == std::string::npos)
    return;
  std::string source = text.substr(start, text.find('\n', start) - start);
  llvm::errs() << source << "\n"
               << std::string(static_cast<size_t>(std::max<int64_t>(column - 1, 0)), ' ') << "^\n";
}

// `--copy-to`: the copy view's document (layoutviz/Copy.h) as text, the
// numbers the page shows. Exit 0 legal and conflict-free, 1 findings
// (instruction rules, bank conflicts), 2 input error.
int runCopyView() {
  viz::CopyRequest request;
  request.from = layoutArg;
  request.to = copyToOpt;
  request.shape = shapeOpt;
  request.dtype = dtypeOpt;
  request.target = targetOpt;
  request.inst = instOpt;
  request.warp = warpOpt;
  request.global = globalOpt;
  json::Value document = viz::evaluateCopy(request);
  const json::Object &doc = *document.getAsObject();
  if (!doc.getBoolean("ok").getValueOr(false)) {
    for (const json::Value &d : *doc.getArray("diagnostics")) {
      const json::Object &o = *d.getAsObject();
      std::string kind = o.getString("kind").getValueOr("").str();
      std::string text = kind == "from"     ? request.from
                         : kind == "to"     ? request.to
                         : kind == "global" ? request.global
                                            : "";
      llvm::errs() << "<" << kind << ">:" << o.getInteger("line").getValueOr(1) << ":"
                   << o.getInteger("column").getValueOr(1)
                   << ": error: " << o.getString("message").getValueOr("") << "\n";
      if (!text.empty())
        llvm::errs() << text << "\n"
                     << std::string(std::max<int64_t>(o.getInteger("column").getValueOr(1) - 1, 0),
                                    ' ')
                     << "^\n";
    }
    return kInputError;
  }
  bool legal = doc.getBoolean("legal").getValueOr(false);
  if (jsonOpt) {
    llvm::outs() << llvm::formatv("{0:2}", document) << "\n";
    return legal ? kClean : kFindings;
  }
  auto integer = [](const json::Object &o, llvm::StringRef key) {
    return o.getInteger(key).getValueOr(-1);
  };
  const json::Array &requests = *doc.getArray("requests");
  llvm::outs() << (doc.getBoolean("registersFrom").getValueOr(false) ? "registers -> shared"
                                                                     : "shared -> registers")
               << ", warp " << integer(doc, "warp") << ": " << integer(doc, "wavefronts")
               << " wavefronts (ideal " << integer(doc, "ideal") << "), " << requests.size()
               << " request" << (requests.size() == 1 ? "" : "s") << " of " << integer(doc, "bytes")
               << "-byte accesses\n";
  for (size_t r = 0; r < requests.size(); ++r) {
    const json::Object &req = *requests[r].getAsObject();
    llvm::outs() << "  request " << r << ":";
    for (const json::Value &p : *req.getArray("phases")) {
      const json::Object &phase = *p.getAsObject();
      const json::Array &threads = *phase.getArray("threads");
      int64_t worst = 0;
      for (const json::Value &w : *phase.getArray("words"))
        worst = std::max<int64_t>(worst, w.getAsInteger().getValueOr(0));
      llvm::outs() << " [T" << threads.front().getAsInteger().getValueOr(0) << "-"
                   << threads.back().getAsInteger().getValueOr(0) << ": "
                   << integer(phase, "wavefronts")
                   << (worst > 1 ? ", " + std::to_string(worst) + "-way" : "") << "]";
    }
    llvm::outs() << "\n";
  }
  if (const json::Object *g = doc.getObject("global"))
    llvm::outs() << "global: " << integer(*g, "sectors") << " sectors of 32 B (ideal "
                 << integer(*g, "idealSectors") << ")"
                 << (g->getBoolean("legal").getValueOr(false) ? ", TMA can move this box" : "")
                 << "\n";
  std::vector<const json::Array *> findings = {doc.getArray("legality")};
  if (const json::Object *g = doc.getObject("global"))
    findings.push_back(g->getArray("legality"));
  bool any = false;
  for (const json::Array *list : findings) {
    if (!list)
      continue;
    for (const json::Value &d : *list) {
      const json::Object &o = *d.getAsObject();
      // The kind, unless the message already starts with it ("tma: ...").
      llvm::StringRef kind = o.getString("kind").getValueOr("");
      llvm::StringRef message = o.getString("message").getValueOr("");
      llvm::errs() << "<copy>:1:1: error: "
                   << (message.startswith(kind.str() + ":") ? "" : kind.str() + ": ") << message
                   << "\n";
      any = true;
    }
  }
  return any ? kFindings : kClean;
}

int runViz() {
  if (!copyToOpt.empty()) {
    if (serveOpt || !outputOpt.empty()) {
      llvm::errs() << "tilescope viz: error: --copy-to prints the copy view; it cannot be "
                      "combined with --serve or -o\n";
      return kInputError;
    }
    if (layoutArg.empty()) {
      llvm::errs() << "tilescope viz: error: give the LAYOUT the copy starts from\n";
      return kInputError;
    }
    return runCopyView();
  }
  viz::VizRequest request;
  request.layout = layoutArg;
  request.shape = shapeOpt;
  request.dtype = dtypeOpt;
  request.target = targetOpt;
  request.scope = scopeOpt;
  request.threadsText = threadsOpt.getValue();
  request.devicesText = devicesOpt.getValue();
  request.allocText = allocOpt.getValue();

  if (serveOpt) {
    if (!outputOpt.empty() || jsonOpt) {
      llvm::errs() << "tilescope viz: error: --serve cannot be combined with -o or --json\n";
      return kInputError;
    }
    if (portOpt < 0 || portOpt > 65535) {
      llvm::errs() << "tilescope viz: error: --port must be in [0, 65535], not " << portOpt << "\n";
      return kInputError;
    }
    // With a layout on the command line, also print the link that opens it.
    std::string view;
    if (!request.layout.empty()) {
      view = "layout=" + viz::urlEncode(request.layout) + "&shape=" + viz::urlEncode(request.shape);
      if (!request.dtype.empty())
        view += "&dtype=" + viz::urlEncode(request.dtype);
      view += "&target=" + viz::urlEncode(request.target) +
              "&threads=" + viz::urlEncode(*request.threadsText);
    }
    return viz::serve("127.0.0.1", portOpt, view, llvm::outs());
  }
  if (request.layout.empty()) {
    llvm::errs() << "tilescope viz: error: give a LAYOUT (e.g. 'wgmma_acc(64, 128)'), or "
                    "--serve for the live page\n";
    return kInputError;
  }
  if (outputOpt.empty() && !jsonOpt) {
    llvm::errs() << "tilescope viz: error: say where the page goes (-o page.html), or ask for "
                    "--json\n";
    return kInputError;
  }

  json::Value document = viz::evaluate(request);
  const json::Object &doc = *document.getAsObject();
  bool ok = doc.getBoolean("ok").getValueOr(false);
  unsigned findings = 0;
  if (const json::Array *diags = doc.getArray("diagnostics"))
    for (const json::Value &d : *diags)
      if (const json::Object *o = d.getAsObject()) {
        printDiagnostic(*o, request);
        if (o->getString("severity") == llvm::StringRef("error"))
          ++findings;
      }
  if (!ok)
    return kInputError;

  if (jsonOpt)
    llvm::outs() << llvm::formatv("{0:2}", document) << "\n";
  if (!outputOpt.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream out(outputOpt, error, llvm::sys::fs::OF_None);
    if (error) {
      llvm::errs() << "tilescope viz: error: cannot write " << outputOpt << ": " << error.message()
                   << "\n";
      return kInputError;
    }
    out << viz::renderPage(document);
    out.close();
    if (out.has_error()) {
      llvm::errs() << "tilescope viz: error: cannot write " << outputOpt << ": "
                   << out.error().message() << "\n";
      out.clear_error();
      return kInputError;
    }
    if (findings)
      llvm::errs() << "tilescope viz: note: " << outputOpt << " written; it shows the witness of "
                   << (findings == 1 ? "this finding" : "these findings") << "\n";
  }
  return findings ? kFindings : kClean;
}

CommandRegistration registration(vizCommand, runViz);

} // namespace
} // namespace tilescope::tool
