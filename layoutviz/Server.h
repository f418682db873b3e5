// `tilescope viz --serve`: a small HTTP server on the loopback interface that
// serves the visualizer page and evaluates layouts for it with the C++ engine
// (GET /api/eval?layout=...&shape=...&dtype=...). Built on Debian's
// cpp-httplib; everything about HTTP stays in Server.cpp.
//
// Depends on layoutviz/Evaluation.h and layoutviz/Page.h; never on the
// command line. No exception escapes it.
#pragma once

#include <llvm/Support/raw_ostream.h>

#include <string>
#include <string_view>

namespace tilescope::viz {

// Whether this build has the server (cpp-httplib was found).
bool serverAvailable();

// Serves until the process is stopped. Port 0 picks a free port. Prints
// `tilescope viz: serving on http://127.0.0.1:PORT/` to `log` once listening
// (the browser tests read the port from that line), then, when `view` (a
// URL fragment such as `layout=...&shape=...`) is given, the link that opens
// the page on it. Returns the exit status: 2 when the port cannot be bound or
// the server is not built.
int serve(const std::string &host, int port, const std::string &view, llvm::raw_ostream &log);

// `text` percent-encoded for a URL fragment parameter.
std::string urlEncode(std::string_view text);

} // namespace tilescope::viz
