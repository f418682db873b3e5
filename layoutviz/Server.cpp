#include "layoutviz/Server.h"

#include "layoutviz/Algebra.h"
#include "layoutviz/Copy.h"
#include "layoutviz/Evaluation.h"
#include "layoutviz/Page.h"

#ifdef TILESCOPE_VIZ_HAS_HTTPLIB
#include <httplib.h>
#endif

#include <exception>

namespace tilescope::viz {

std::string urlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '(' || c == ')' || c == '*') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

#ifdef TILESCOPE_VIZ_HAS_HTTPLIB

bool serverAvailable() {
  return true;
}

int serve(const std::string &host, int port, const std::string &view, llvm::raw_ostream &log) {
  httplib::Server server;
  const std::string page = renderPage(std::nullopt);
  server.Get("/", [&page](const httplib::Request &, httplib::Response &res) {
    res.set_content(page, "text/html; charset=utf-8");
  });
  // Browsers ask for an icon; answer "none" rather than 404.
  server.Get("/favicon.ico",
             [](const httplib::Request &, httplib::Response &res) { res.status = 204; });
  server.Get("/api/eval", [](const httplib::Request &req, httplib::Response &res) {
    VizRequest r;
    r.layout = req.get_param_value("layout");
    r.shape = req.get_param_value("shape");
    if (req.has_param("dtype"))
      r.dtype = req.get_param_value("dtype");
    if (req.has_param("target"))
      r.target = req.get_param_value("target");
    if (req.has_param("scope"))
      r.scope = req.get_param_value("scope");
    // Integers as typed: evaluate() parses them with the CLI's messages.
    for (auto [name, text] : {std::pair{"threads", &r.threadsText},
                              {"devices", &r.devicesText},
                              {"alloc", &r.allocText}})
      if (req.has_param(name))
        *text = req.get_param_value(name);
    for (auto [name, text] : {std::pair{"acc", &r.access.mode},
                              {"ai", &r.access.index},
                              {"av", &r.access.vector},
                              {"ac", &r.access.custom}})
      if (req.has_param(name))
        *text = req.get_param_value(name);
    res.set_header("Cache-Control", "no-store");
    if (req.get_param_value("bin") == "1") {
      // The page's form: owners and banks as int32 after the document
      // (packEvaluation), when they fit.
      PackedArrays packed;
      llvm::json::Value doc = evaluate(r, packed);
      if (packed.used) {
        res.set_content(packEvaluation(doc, packed), "application/octet-stream");
        return;
      }
    }
    std::string body;
    llvm::raw_string_ostream os(body);
    os << evaluate(r);
    os.flush();
    // Debian's httplib brotli-compresses "application/json" for browsers
    // (about 10 s for a 2^18-element document on a loaded 2-core box);
    // with the charset named it sends the bytes as they are, which is what
    // a server on 127.0.0.1 wants.
    res.set_content(body, "application/json; charset=utf-8");
  });
  server.Get("/api/copy", [](const httplib::Request &req, httplib::Response &res) {
    CopyRequest r;
    for (auto [name, text] : {std::pair{"from", &r.from},
                              {"to", &r.to},
                              {"shape", &r.shape},
                              {"dtype", &r.dtype},
                              {"target", &r.target},
                              {"inst", &r.inst},
                              {"warp", &r.warp},
                              {"global", &r.global}})
      if (req.has_param(name))
        *text = req.get_param_value(name);
    std::string body;
    llvm::raw_string_ostream os(body);
    os << evaluateCopy(r);
    os.flush();
    res.set_header("Cache-Control", "no-store");
    res.set_content(body, "application/json; charset=utf-8");
  });
  server.Get("/api/algebra", [](const httplib::Request &req, httplib::Response &res) {
    AlgebraRequest r{req.get_param_value("layout"), req.get_param_value("op"),
                     req.get_param_value("operand")};
    std::string body;
    llvm::raw_string_ostream os(body);
    os << evaluateAlgebra(r);
    os.flush();
    res.set_header("Cache-Control", "no-store");
    res.set_content(body, "application/json; charset=utf-8");
  });
  // A handler that throws must not take the server down: answer 500.
  server.set_exception_handler(
      [](const httplib::Request &, httplib::Response &res, const std::exception_ptr &) {
        res.status = 500;
        res.set_content("{\"ok\":false,\"diagnostics\":[{\"kind\":\"server\",\"severity\":"
                        "\"error\",\"message\":\"internal error while evaluating\"}]}",
                        "application/json");
      });
  int bound =
      port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    log << "tilescope viz: error: cannot listen on " << host << ":" << port
        << " (is the port in use? try --port 0 for a free one)\n";
    log.flush();
    return 2;
  }
  log << "tilescope viz: serving on http://" << host << ":" << bound << "/\n";
  if (!view.empty())
    log << "tilescope viz: open http://" << host << ":" << bound << "/#" << view << "\n";
  log.flush();
  return server.listen_after_bind() ? 0 : 2;
}

#else

bool serverAvailable() {
  return false;
}

int serve(const std::string &, int, const std::string &, llvm::raw_ostream &log) {
  log << "tilescope viz: error: this build has no server (install libcpp-httplib-dev and "
         "reconfigure); `tilescope viz LAYOUT --shape ... -o page.html` still works\n";
  return 2;
}

#endif

} // namespace tilescope::viz
