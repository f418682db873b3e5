// The visualizer's single HTML page: markup, style and script from
// layoutviz/page/, compiled into the binary at build time, with the data the
// page starts from embedded as JSON. The same page serves both ways of
// running: `tilescope viz -o page.html` (a static snapshot that carries one
// evaluation) and `tilescope viz --serve` (edits are evaluated live through
// /api/eval). The page never loads anything from the network.
//
// Depends on layoutviz/Evaluation.h and LLVM's JSON; never on the server or
// the command line.
#pragma once

#include <llvm/Support/JSON.h>

#include <optional>
#include <string>

namespace tilescope::viz {

// Port `tilescope viz --serve` listens on unless told otherwise; static pages
// point their "open live" links at it.
constexpr int kDefaultPort = 8765;

// The page. With `evaluation` it is a static snapshot of that document;
// without, it evaluates through the server it was loaded from.
std::string renderPage(const std::optional<llvm::json::Value> &evaluation);

// JSON text safe inside an HTML <script> element: `<` becomes \u003c, which
// can only occur inside JSON strings, so the text still parses the same.
std::string scriptSafeJson(const llvm::json::Value &value);

} // namespace tilescope::viz
