// JSON tree -> IR (IrJson.h). Every value is checked where it is read, and
// the first problem stops the reader with the JSON path of the value at
// fault; the module is then printed and parsed back, so a tree is accepted
// only when the text form can say exactly what it holds.
#include "ir/IrJson.h"

#include "ir/LayoutPresets.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>

namespace tilescope {

namespace json = llvm::json;

namespace {

// Deeper trees are refused before the recursion could exhaust the stack; the
// parser accepts less nesting still, which the final re-parse reports.
constexpr int kMaxDepth = 400;

// Thrown inside the reader only, caught by moduleFromJson.
struct Malformed {
  IrJsonError error;
};

[[noreturn]] void fail(const std::string &path, std::string message) {
  throw Malformed{{path, std::move(message)}};
}

std::string kindOf(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    return "a number";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

std::string join(std::initializer_list<const char *> words) {
  std::string out;
  for (const char *w : words)
    out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

bool isIdentifier(llvm::StringRef s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

class Reader {
public:
  std::shared_ptr<Comments> comments = std::make_shared<Comments>();

  // --- values ---
  const json::Object &object(const json::Value &v, const std::string &path,
                             std::initializer_list<const char *> keys) {
    const json::Object *o = v.getAsObject();
    if (!o)
      fail(path, "expected an object, found " + kindOf(v));
    for (const auto &[key, value] : *o) {
      bool known = false;
      for (const char *k : keys)
        known |= key == k;
      if (!known)
        fail(path, fmt::format("unknown key '{}' (this object takes {})", key.str(), join(keys)));
    }
    return *o;
  }
  static const json::Value &required(const json::Object &o, const char *key,
                                     const std::string &path) {
    const json::Value *v = o.get(key);
    if (!v)
      fail(path, fmt::format("missing key '{}'", key));
    return *v;
  }
  static std::string at(const std::string &path, const char *key) { return path + "." + key; }
  static std::string at(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  static std::string string(const json::Value &v, const std::string &path) {
    auto s = v.getAsString();
    if (!s)
      fail(path, "expected a string, found " + kindOf(v));
    return s->str();
  }
  static int64_t integer(const json::Value &v, const std::string &path) {
    auto i = v.getAsInteger();
    if (!i)
      fail(path, "expected an integer, found " +
                     (v.kind() == json::Value::Number ? "a fractional number" : kindOf(v)));
    return *i;
  }
  static const json::Array &array(const json::Value &v, const std::string &path) {
    const json::Array *a = v.getAsArray();
    if (!a)
      fail(path, "expected an array, found " + kindOf(v));
    return *a;
  }
  static std::string name(const json::Value &v, const std::string &path, const char *what) {
    std::string s = string(v, path);
    if (!isIdentifier(s))
      fail(path, fmt::format("'{}' is not a {} the text form can spell (letters, digits and "
                             "'_', not starting with a digit)",
                             s, what));
    if (isReservedWord(s) || s == "true" || s == "false" || builtinFromName(s))
      fail(path, fmt::format("'{}' is a reserved word or builtin, not a {}", s, what));
    return s;
  }
  static Dtype dtype(const json::Value &v, const std::string &path) {
    std::string s = string(v, path);
    auto d = dtypeFromName(s);
    if (!d)
      fail(path, fmt::format("unknown dtype '{}'", s));
    return *d;
  }
  static std::string comment(const json::Value &v, const std::string &path) {
    std::string s = string(v, path);
    if (!llvm::StringRef(s).startswith("//") || s.find_first_of("\r\n") != std::string::npos)
      fail(path, "a comment is one line starting with '//'");
    return s;
  }
  static std::vector<std::string> commentLines(const json::Value &v, const std::string &path) {
    std::vector<std::string> out;
    const json::Array &a = array(v, path);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(comment(a[i], at(path, i)));
    return out;
  }

  // --- expressions ---
  std::vector<Expr> exprList(const json::Value &v, const std::string &path, int depth) {
    std::vector<Expr> out;
    const json::Array &a = array(v, path);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(expr(a[i], at(path, i), depth));
    return out;
  }

  Expr expr(const json::Value &v, const std::string &path, int depth = 0) {
    if (depth > kMaxDepth)
      fail(path, fmt::format("expressions nest deeper than {}", kMaxDepth));
    const json::Object *o = v.getAsObject();
    if (!o)
      fail(path, "expected an expression object, found " + kindOf(v));
    const char *tags[] = {"int",     "float", "bool",   "string", "var",
                          "builtin", "unary", "binary", "call",   "index"};
    const char *tag = nullptr;
    for (const char *t : tags)
      if (o->get(t)) {
        if (tag)
          fail(path, fmt::format("an expression has one of the keys {}, not both '{}' and '{}'",
                                 "int, float, bool, string, var, builtin, unary, binary, call, "
                                 "index",
                                 tag, t));
        tag = t;
      }
    if (!tag)
      fail(path, "an expression needs one of the keys int, float, bool, string, var, builtin, "
                 "unary, binary, call, index");
    std::string tagPath = at(path, tag);
    const json::Value &value = *o->get(tag);
    llvm::StringRef t(tag);
    if (t == "int") {
      object(v, path, {"int"});
      int64_t i = integer(value, tagPath);
      if (i < 0)
        fail(tagPath, "integer literals are not negative; write {\"unary\": \"-\", \"operand\": "
                      "{\"int\": N}}");
      return IntImm::make(i);
    }
    if (t == "float") {
      object(v, path, {"float"});
      auto d = value.getAsNumber();
      if (!d)
        fail(tagPath, "expected a number, found " + kindOf(value));
      if (!std::isfinite(*d) || *d < 0 || std::signbit(*d))
        fail(tagPath, "float literals are finite and not negative; negate with {\"unary\": "
                      "\"-\", ...}");
      return FloatImm::make(*d);
    }
    if (t == "bool") {
      object(v, path, {"bool"});
      auto b = value.getAsBoolean();
      if (!b)
        fail(tagPath, "expected true or false, found " + kindOf(value));
      return BoolImm::make(*b);
    }
    if (t == "string") {
      object(v, path, {"string"});
      std::string s = string(value, tagPath);
      if (s.find_first_of("\"\\\r\n") != std::string::npos)
        fail(tagPath, "a string literal holds no quote, backslash or line break");
      return StringImm::make(std::move(s));
    }
    if (t == "var") {
      object(v, path, {"var"});
      return Var::make(name(value, tagPath, "variable name"));
    }
    if (t == "builtin") {
      object(v, path, {"builtin"});
      std::string s = string(value, tagPath);
      auto b = builtinFromName(s);
      if (!b || builtinName(*b) != s)
        fail(tagPath, fmt::format("unknown builtin '{}' (laneid, warpid, wgid, tid_in_wg, "
                                  "wid_in_wg, threadIdx.x, blockIdx.x|y|z, clusterCtaIdx.x|y|z)",
                                  s));
      return Builtin::make(*b);
    }
    if (t == "unary") {
      object(v, path, {"unary", "operand"});
      std::string op = string(value, tagPath);
      if (op != "-" && op != "!")
        fail(tagPath, fmt::format("unknown unary operator '{}' (- or !)", op));
      return Unary::make(op == "-" ? UnaryOp::Neg : UnaryOp::Not,
                         expr(required(*o, "operand", path), at(path, "operand"), depth + 1));
    }
    if (t == "binary") {
      object(v, path, {"binary", "lhs", "rhs"});
      std::string op = string(value, tagPath);
      std::optional<BinaryOp> which;
      for (BinaryOp b : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod,
                         BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge, BinaryOp::Eq,
                         BinaryOp::Ne, BinaryOp::And, BinaryOp::Or})
        if (binaryOpSpelling(b) == op)
          which = b;
      if (!which)
        fail(tagPath,
             fmt::format("unknown binary operator '{}' (+ - * / % < <= > >= == != && ||)", op));
      Expr lhs = expr(required(*o, "lhs", path), at(path, "lhs"), depth + 1);
      Expr rhs = expr(required(*o, "rhs", path), at(path, "rhs"), depth + 1);
      return Binary::make(*which, std::move(lhs), std::move(rhs));
    }
    if (t == "call") {
      object(v, path, {"call", "args"});
      std::string callee = name(value, tagPath, "function name");
      return Call::make(std::move(callee),
                        exprList(required(*o, "args", path), at(path, "args"), depth + 1));
    }
    // index
    object(v, path, {"index", "subscripts"});
    Expr base = expr(value, tagPath, depth + 1);
    std::string subsPath = at(path, "subscripts");
    const json::Array &subs = array(required(*o, "subscripts", path), subsPath);
    if (subs.empty())
      fail(subsPath, "an index has at least one subscript");
    std::vector<Subscript> out;
    for (size_t i = 0; i < subs.size(); ++i)
      out.push_back(subscript(subs[i], at(subsPath, i), depth + 1));
    return Index::make(std::move(base), std::move(out));
  }

  Subscript subscript(const json::Value &v, const std::string &path, int depth) {
    const json::Object &o = object(v, path, {"point", "begin", "end", "extent", "full"});
    Subscript s;
    if (o.get("full")) {
      if (o.size() != 1 || o.getBoolean("full") != true)
        fail(path, "a whole-dimension subscript is exactly {\"full\": true}");
      s.kind = Subscript::Full;
      return s;
    }
    if (const json::Value *p = o.get("point")) {
      if (o.size() != 1)
        fail(path, "a point subscript is exactly {\"point\": e}");
      s.kind = Subscript::Point;
      s.begin = expr(*p, at(path, "point"), depth);
      return s;
    }
    s.begin = expr(required(o, "begin", path), at(path, "begin"), depth);
    bool hasEnd = o.get("end"), hasExtent = o.get("extent");
    if (hasEnd == hasExtent)
      fail(path, "a range subscript has \"begin\" and one of \"end\" or \"extent\"");
    s.kind = hasEnd ? Subscript::Range : Subscript::Extent;
    const char *key = hasEnd ? "end" : "extent";
    s.end = expr(*o.get(key), at(path, key), depth);
    return s;
  }

  // --- layouts ---
  std::vector<Iter> iters(const json::Value &v, const std::string &path) {
    std::vector<Iter> out;
    const json::Array &a = array(v, path);
    for (size_t i = 0; i < a.size(); ++i) {
      std::string p = at(path, i);
      const json::Object &o = object(a[i], p, {"extent", "stride", "axis"});
      Iter it;
      it.extent = integer(required(o, "extent", p), at(p, "extent"));
      it.stride = integer(required(o, "stride", p), at(p, "stride"));
      it.axis = axis(required(o, "axis", p), at(p, "axis"));
      out.push_back(it);
    }
    return out;
  }
  static Axis axis(const json::Value &v, const std::string &path) {
    std::string s = string(v, path);
    auto a = axisFromName(s);
    if (!a)
      fail(path, fmt::format("unknown axis '{}'", s));
    return *a;
  }

  LayoutSpec layout(const json::Value &v, const std::string &path) {
    const json::Object &o =
        object(v, path, {"preset", "args", "shard", "replica", "offset", "swizzle", "text"});
    LayoutSpec spec;
    if (const json::Value *t = o.get("text")) { // numbers naming kernel parameters
      object(v, path, {"text"});
      std::string text = string(*t, at(path, "text"));
      llvm::SourceMgr sm;
      Diagnostics quiet(sm, false);
      auto parsed = parseLayoutText(text, "layout", quiet);
      if (!parsed)
        fail(at(path, "text"), fmt::format("'{}' is not a layout: {}", text,
                                           quiet.all().empty() ? "" : quiet.all()[0].message));
      return *parsed;
    }
    if (const json::Value *p = o.get("preset")) {
      object(v, path, {"preset", "args"});
      std::string presetName = string(*p, at(path, "preset"));
      const LayoutPreset *preset = findLayoutPreset(presetName);
      if (!preset)
        fail(at(path, "preset"), fmt::format("unknown layout preset '{}'", presetName));
      std::string argsPath = at(path, "args");
      const json::Array &args = array(required(o, "args", path), argsPath);
      for (size_t i = 0; i < args.size(); ++i)
        spec.presetArgs.push_back(integer(args[i], at(argsPath, i)));
      if (spec.presetArgs.size() != preset->arity)
        fail(argsPath, fmt::format("preset {} takes {} argument(s) ({}), not {}", preset->name,
                                   preset->arity, preset->params, spec.presetArgs.size()));
      std::string why;
      auto l = preset->build(spec.presetArgs, &why);
      if (!l)
        fail(path, fmt::format("{}: {}", preset->name, why));
      spec.layout = std::move(*l);
      spec.preset = presetName;
      return spec;
    }
    std::vector<Iter> shard = iters(required(o, "shard", path), at(path, "shard"));
    std::vector<Iter> replica;
    if (const json::Value *r = o.get("replica"))
      replica = iters(*r, at(path, "replica"));
    std::vector<AxisOffset> offsets;
    if (const json::Value *off = o.get("offset")) {
      std::string offPath = at(path, "offset");
      const json::Array &a = array(*off, offPath);
      for (size_t i = 0; i < a.size(); ++i) {
        std::string p = at(offPath, i);
        const json::Object &item = object(a[i], p, {"axis", "value"});
        offsets.push_back({axis(required(item, "axis", p), at(p, "axis")),
                           integer(required(item, "value", p), at(p, "value"))});
      }
    }
    std::optional<Swizzle> swizzle;
    if (const json::Value *s = o.get("swizzle"))
      swizzle = swizzleOf(*s, at(path, "swizzle"));
    std::string why;
    auto l = Layout::make(std::move(shard), std::move(replica), std::move(offsets), swizzle, &why);
    if (!l)
      fail(path, why);
    spec.layout = std::move(*l);
    return spec;
  }

  Swizzle swizzleOf(const json::Value &v, const std::string &path) {
    const json::Object &o = object(v, path, {"bytes", "dtype", "bits_kept", "bits_xored", "shift"});
    if (o.get("bytes")) {
      object(v, path, {"bytes", "dtype"});
      int64_t bytes = integer(*o.get("bytes"), at(path, "bytes"));
      Dtype d = dtype(required(o, "dtype", path), at(path, "dtype"));
      std::string why;
      auto s = Swizzle::fromMode(static_cast<int>(bytes), d, &why);
      if (!s || bytes != static_cast<int>(bytes))
        fail(path, s ? "swizzle mode out of range" : why);
      return *s;
    }
    auto small = [&](const char *key) {
      int64_t x = integer(required(o, key, path), at(path, key));
      if (x < 0 || x > 40)
        fail(at(path, key), "swizzle parameters are in [0, 40]");
      return static_cast<int>(x);
    };
    Swizzle s;
    s.bitsKept = small("bits_kept");
    s.bitsXored = small("bits_xored");
    s.shift = small("shift");
    return s;
  }

  // --- statements ---
  Block block(const json::Value &v, const std::string &path, int depth) {
    if (depth > kMaxDepth)
      fail(path, fmt::format("blocks nest deeper than {}", kMaxDepth));
    Block out;
    const json::Array &a = array(v, path);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(stmt(a[i], at(path, i), depth));
    return out;
  }

  Stmt stmt(const json::Value &v, const std::string &path, int depth) {
    const json::Object *o = v.getAsObject();
    if (!o)
      fail(path, "expected a statement object, found " + kindOf(v));
    std::string kind = string(required(*o, "stmt", path), at(path, "stmt"));
    Stmt s = stmtOfKind(kind, v, *o, path, depth);
    if (const json::Value *c = o->get("comments"))
      stmtComments(s, *c, at(path, "comments"));
    return s;
  }

  Stmt stmtOfKind(const std::string &kind, const json::Value &v, const json::Object &o,
                  const std::string &path, int depth) {
    auto e = [&](const char *key) { return expr(required(o, key, path), at(path, key)); };
    if (kind == "buffer") {
      object(v, path, {"stmt", "scope", "name", "dtype", "shape", "layout", "comments"});
      std::string scopePath = at(path, "scope");
      std::string scopeText = string(required(o, "scope", path), scopePath);
      std::optional<MemScope> scope;
      for (MemScope m : {MemScope::Global, MemScope::Shared, MemScope::Reg, MemScope::Tmem})
        if (memScopeName(m) == scopeText)
          scope = m;
      if (!scope)
        fail(scopePath,
             fmt::format("unknown memory scope '{}' (global, shared, reg, tmem)", scopeText));
      std::string n = name(required(o, "name", path), at(path, "name"), "buffer name");
      Dtype d = dtype(required(o, "dtype", path), at(path, "dtype"));
      std::vector<Expr> shape = exprList(required(o, "shape", path), at(path, "shape"), 0);
      if (shape.empty())
        fail(at(path, "shape"), "a buffer has at least one dimension");
      std::optional<LayoutSpec> l;
      if (const json::Value *lv = o.get("layout"))
        l = layout(*lv, at(path, "layout"));
      return BufferDecl::make(*scope, std::move(n), d, std::move(shape), std::move(l));
    }
    if (kind == "mbarrier") {
      object(v, path, {"stmt", "name", "size", "count", "comments"});
      std::string n = name(required(o, "name", path), at(path, "name"), "barrier name");
      Expr size = o.get("size") ? e("size") : nullptr;
      Expr count = o.get("count") ? e("count") : nullptr;
      return BarrierDecl::make(std::move(n), std::move(size), std::move(count));
    }
    if (kind == "let") {
      object(v, path, {"stmt", "name", "value", "comments"});
      std::string n = name(required(o, "name", path), at(path, "name"), "let name");
      return Let::make(std::move(n), e("value"));
    }
    if (kind == "for") {
      object(v, path,
             {"stmt", "var", "begin", "end", "step", "unroll", "pipelined", "body", "comments"});
      std::string var = name(required(o, "var", path), at(path, "var"), "loop variable");
      Expr begin = e("begin"), end = e("end");
      Expr step = o.get("step") ? e("step") : IntImm::make(1);
      int64_t unroll = o.get("unroll") ? integer(*o.get("unroll"), at(path, "unroll")) : 0;
      if (unroll < -1)
        fail(at(path, "unroll"), "unroll is -1 (full), 0 (none) or a factor");
      int64_t stages = o.get("pipelined") ? integer(*o.get("pipelined"), at(path, "pipelined")) : 0;
      if (stages < 0)
        fail(at(path, "pipelined"), "pipeline stages are not negative");
      Block body = block(required(o, "body", path), at(path, "body"), depth + 1);
      return For::make(std::move(var), std::move(begin), std::move(end), std::move(step), unroll,
                       stages, std::move(body));
    }
    if (kind == "if") {
      object(v, path, {"stmt", "cond", "then", "else", "comments"});
      Expr cond = e("cond");
      Block thenBody = block(required(o, "then", path), at(path, "then"), depth + 1);
      Block elseBody;
      if (const json::Value *el = o.get("else"))
        elseBody = block(*el, at(path, "else"), depth + 1);
      return If::make(std::move(cond), std::move(thenBody), std::move(elseBody));
    }
    if (kind == "store") {
      object(v, path, {"stmt", "target", "value", "comments"});
      Expr target = e("target");
      if (target->kind != ExprKind::Index)
        fail(at(path, "target"), "a store writes a subscripted element ({\"index\": ...})");
      return Store::make(std::move(target), e("value"));
    }
    if (kind == "call") {
      object(v, path, {"stmt", "scope", "callee", "args", "comments"});
      ExecScope scope = ExecScope::Thread;
      if (const json::Value *sv = o.get("scope")) {
        std::string text = string(*sv, at(path, "scope"));
        bool found = false;
        for (ExecScope s : {ExecScope::Thread, ExecScope::Warp, ExecScope::Warpgroup,
                            ExecScope::Cta, ExecScope::Cluster})
          if (execScopePrefix(s) == text) {
            scope = s;
            found = true;
          }
        if (!found)
          fail(at(path, "scope"),
               fmt::format("unknown execution scope '{}' (\"\", warp, wg, cta, cluster)", text));
      }
      std::string calleePath = at(path, "callee");
      std::string callee = string(required(o, "callee", path), calleePath);
      llvm::SmallVector<llvm::StringRef, 4> parts;
      llvm::StringRef(callee).split(parts, '.');
      for (llvm::StringRef p : parts)
        if (!isIdentifier(p))
          fail(calleePath, fmt::format("'{}' is not a callee the text form can spell (names "
                                       "joined by '.')",
                                       callee));
      std::vector<CallArg> args;
      if (const json::Value *av = o.get("args")) {
        std::string argsPath = at(path, "args");
        const json::Array &a = array(*av, argsPath);
        for (size_t i = 0; i < a.size(); ++i) {
          std::string p = at(argsPath, i);
          const json::Object &arg = object(a[i], p, {"key", "value"});
          CallArg ca;
          if (const json::Value *k = arg.get("key"))
            ca.keyword = name(*k, at(p, "key"), "keyword");
          ca.value = expr(required(arg, "value", p), at(p, "value"));
          args.push_back(std::move(ca));
        }
      }
      return CallStmt::make(scope, std::move(callee), std::move(args));
    }
    fail(at(path, "stmt"), fmt::format("unknown statement kind '{}' (buffer, mbarrier, let, for, "
                                       "if, store, call)",
                                       kind));
  }

  void stmtComments(const Stmt &s, const json::Value &v, const std::string &path) {
    const json::Object &o = object(
        v, path,
        {"before", "end_of_line", "after_close", "else_line", "before_close", "before_else_close"});
    const StmtNode *node = s.get();
    if (const json::Value *x = o.get("before"))
      comments->before[node] = commentLines(*x, at(path, "before"));
    if (const json::Value *x = o.get("end_of_line"))
      comments->endOfLine[node] = comment(*x, at(path, "end_of_line"));
    if (const json::Value *x = o.get("after_close"))
      comments->afterClose[node] = comment(*x, at(path, "after_close"));
    if (const json::Value *x = o.get("else_line"))
      comments->elseLine[node] = comment(*x, at(path, "else_line"));
    if (const json::Value *x = o.get("before_close"))
      comments->beforeClose[{node, 0}] = commentLines(*x, at(path, "before_close"));
    if (const json::Value *x = o.get("before_else_close"))
      comments->beforeClose[{node, 1}] = commentLines(*x, at(path, "before_else_close"));
  }

  // --- kernel parameters (ir/Space.h) ---
  Expr pointValue(const json::Value &v, const std::string &path) {
    Expr e = expr(v, path);
    if (e->kind != ExprKind::IntImm && e->kind != ExprKind::BoolImm && e->kind != ExprKind::Var)
      fail(path, "a parameter's value is an integer, a boolean or a name");
    return e;
  }

  Space space(const json::Value &v, const std::string &path) {
    const json::Object &o = object(v, path, {"params", "points"});
    Space sp;
    std::string pp = at(path, "params");
    const json::Array &params = array(required(o, "params", path), pp);
    for (size_t i = 0; i < params.size(); ++i) {
      std::string p = at(pp, i);
      const json::Object &po = object(params[i], p, {"name", "values", "range", "default"});
      SpaceParam param;
      param.name = name(required(po, "name", p), at(p, "name"), "parameter name");
      if (const json::Value *r = po.get("range")) {
        const json::Array &bounds = array(*r, at(p, "range"));
        if (bounds.size() != 3)
          fail(at(p, "range"), "a range is [begin, end, step]");
        param.kind = SpaceParam::Kind::IntRange;
        param.begin = integer(bounds[0], at(at(p, "range"), size_t{0}));
        param.end = integer(bounds[1], at(at(p, "range"), size_t{1}));
        param.step = integer(bounds[2], at(at(p, "range"), size_t{2}));
      } else {
        const json::Array &values = array(required(po, "values", p), at(p, "values"));
        for (size_t j = 0; j < values.size(); ++j)
          param.values.push_back(pointValue(values[j], at(at(p, "values"), j)));
        if (param.values.empty())
          fail(at(p, "values"), "a parameter has at least one value");
        ExprKind kind = param.values[0]->kind;
        param.kind = kind == ExprKind::IntImm    ? SpaceParam::Kind::IntSet
                     : kind == ExprKind::BoolImm ? SpaceParam::Kind::Bool
                                                 : SpaceParam::Kind::Enum;
      }
      if (const json::Value *d = po.get("default")) {
        param.defaultValue = pointValue(*d, at(p, "default"));
        if (!param.contains(param.defaultValue))
          fail(at(p, "default"), "the default is not a value of the parameter");
      }
      sp.params.push_back(std::move(param));
    }
    if (const json::Value *pts = o.get("points")) {
      std::string ptp = at(path, "points");
      const json::Array &points = array(*pts, ptp);
      for (size_t i = 0; i < points.size(); ++i) {
        std::string p = at(ptp, i);
        const json::Object &po = object(points[i], p, {"name", "values"});
        NamedPoint point;
        point.name = name(required(po, "name", p), at(p, "name"), "point name");
        const json::Value &vals = required(po, "values", p);
        const json::Object *vo = vals.getAsObject();
        if (!vo)
          fail(at(p, "values"), "expected an object of parameter values");
        for (const SpaceParam &param : sp.params) {
          const json::Value *x = vo->get(param.name);
          if (!x)
            fail(at(p, "values"), fmt::format("missing key '{}'", param.name));
          point.values.push_back(
              sp.valueOf(param, pointValue(*x, at(at(p, "values"), param.name.c_str()))));
        }
        sp.points.push_back(std::move(point));
      }
    }
    return sp;
  }

  // --- kernels ---
  Kernel kernel(const json::Value &v, const std::string &path) {
    const json::Object &o =
        object(v, path, {"name", "params", "where", "launch", "body", "comments", "space"});
    Kernel k;
    k.name = name(required(o, "name", path), at(path, "name"), "kernel name");
    std::string paramsPath = at(path, "params");
    const json::Array &params = array(required(o, "params", path), paramsPath);
    for (size_t i = 0; i < params.size(); ++i) {
      std::string p = at(paramsPath, i);
      const json::Object &po = object(params[i], p, {"name", "dtype", "shape", "placement"});
      Param param;
      param.name = name(required(po, "name", p), at(p, "name"), "parameter name");
      param.dtype = dtype(required(po, "dtype", p), at(p, "dtype"));
      if (const json::Value *shape = po.get("shape")) {
        param.isTensor = true;
        param.shape = exprList(*shape, at(p, "shape"), 0);
        if (param.shape.empty())
          fail(at(p, "shape"), "a tensor parameter has at least one dimension");
      }
      if (const json::Value *placement = po.get("placement")) {
        if (!param.isTensor)
          fail(at(p, "placement"), "only a tensor parameter has a placement");
        param.placement = layout(*placement, at(p, "placement"));
      }
      k.params.push_back(std::move(param));
    }
    if (const json::Value *w = o.get("where"))
      k.constraints = exprList(*w, at(path, "where"), 0);
    std::string launchPath = at(path, "launch");
    const json::Object &launch =
        object(required(o, "launch", path), launchPath,
               {"grid", "cluster", "devices", "threads", "ctas_per_sm", "target"});
    k.launch.grid = exprList(required(launch, "grid", launchPath), at(launchPath, "grid"), 0);
    if (k.launch.grid.empty() || k.launch.grid.size() > 3)
      fail(at(launchPath, "grid"), "a grid has 1 to 3 extents");
    if (const json::Value *c = launch.get("cluster"))
      k.launch.cluster = exprList(*c, at(launchPath, "cluster"), 0);
    if (k.launch.cluster.size() > 3)
      fail(at(launchPath, "cluster"), "a cluster has at most 3 extents");
    if (const json::Value *d = launch.get("devices")) {
      k.launch.devices = exprList(*d, at(launchPath, "devices"), 0);
      if (k.launch.devices.size() > 1)
        fail(at(launchPath, "devices"), "a launch has one device count");
    }
    const json::Value &threads = required(launch, "threads", launchPath);
    if (threads.getAsObject()) // an expression over kernel parameters
      k.launch.threadsExpr = expr(threads, at(launchPath, "threads"));
    else
      k.launch.threads = integer(threads, at(launchPath, "threads"));
    if (const json::Value *c = launch.get("ctas_per_sm")) {
      if (c->getAsObject()) { // an expression over kernel parameters
        k.launch.ctasPerSmExpr = expr(*c, at(launchPath, "ctas_per_sm"));
      } else {
        k.launch.ctasPerSm = integer(*c, at(launchPath, "ctas_per_sm"));
        if (k.launch.ctasPerSm < 1 || k.launch.ctasPerSm > 32)
          fail(at(launchPath, "ctas_per_sm"), "ctas_per_sm is in [1, 32]");
      }
    }
    if (const json::Value *sp = o.get("space"))
      k.space = space(*sp, at(path, "space"));
    std::string targetPath = at(launchPath, "target");
    std::string target = string(required(launch, "target", launchPath), targetPath);
    auto t = targetFromName(target);
    if (!t)
      fail(targetPath, fmt::format("unknown target '{}' (sm_80, sm_90a, sm_100a)", target));
    k.launch.target = *t;
    addDeviceParams(k);
    k.body = block(required(o, "body", path), at(path, "body"), 0);
    std::vector<std::string> before, bodyEnd;
    std::string open;
    if (const json::Value *c = o.get("comments")) {
      std::string cp = at(path, "comments");
      const json::Object &co = object(*c, cp, {"before", "open", "body_end"});
      if (const json::Value *x = co.get("before"))
        before = commentLines(*x, at(cp, "before"));
      if (const json::Value *x = co.get("open"))
        open = comment(*x, at(cp, "open"));
      if (const json::Value *x = co.get("body_end"))
        bodyEnd = commentLines(*x, at(cp, "body_end"));
    }
    comments->kernelBefore.push_back(std::move(before));
    comments->kernelOpen.push_back(std::move(open));
    comments->kernelBodyEnd.push_back(std::move(bodyEnd));
    return k;
  }

  Module module(const json::Value &v) {
    const json::Object &o = object(v, "$", {"kernels", "file_end_comments"});
    const json::Array &kernels = array(required(o, "kernels", "$"), "$.kernels");
    if (kernels.empty())
      fail("$.kernels", "a module has at least one kernel");
    Module m;
    for (size_t i = 0; i < kernels.size(); ++i)
      m.kernels.push_back(kernel(kernels[i], at("$.kernels", i)));
    if (const json::Value *c = o.get("file_end_comments"))
      comments->fileEnd = commentLines(*c, "$.file_end_comments");
    m.comments = comments;
    return m;
  }
};

// Where `built` and its re-parsed text `parsed` first differ, as a path.
std::string firstDifference(const Module &built, const Module &parsed) {
  for (size_t i = 0; i < built.kernels.size(); ++i) {
    std::string path = "$.kernels[" + std::to_string(i) + "]";
    if (i >= parsed.kernels.size())
      return path;
    const Kernel &a = built.kernels[i], &b = parsed.kernels[i];
    if (equal(a, b))
      continue;
    for (size_t s = 0; s < a.body.size() && s < b.body.size(); ++s)
      if (!equal(a.body[s], b.body[s]))
        return path + ".body[" + std::to_string(s) + "]";
    return path;
  }
  return "$";
}

} // namespace

std::optional<Module> moduleFromJson(const json::Value &tree, IrJsonError *error) {
  Module built;
  try {
    Reader reader;
    built = reader.module(tree);
  } catch (const Malformed &m) {
    *error = m.error;
    return std::nullopt;
  }
  // The text form is the IR's one representation: a tree it cannot express
  // (a callee spelled like a scope, a kernel name used twice that the parser
  // keeps apart, ...) is refused rather than built.
  std::string text = print(built);
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/false);
  Module parsed = parseModuleText(text, "<from_json>", diag);
  if (diag.hasErrors()) {
    const Diagnostic &d = diag.all().front();
    *error = {"$", fmt::format("the tree prints as text that does not parse back: {}:{}:{}: {}",
                               d.file, d.line, d.column, d.message)};
    return std::nullopt;
  }
  if (!equal(built, parsed)) {
    *error = {firstDifference(built, parsed),
              "the tree prints as text that parses back to a different IR (it is not in the "
              "text form's canonical shape)"};
    return std::nullopt;
  }
  return built;
}

} // namespace tilescope
