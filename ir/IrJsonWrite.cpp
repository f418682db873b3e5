// IR -> JSON tree (IrJson.h). Every field the printer reads is written, so
// the reader can rebuild a module that prints the same text.
#include "ir/IrJson.h"

namespace tilescope {

namespace json = llvm::json;

namespace {

json::Array exprList(const std::vector<Expr> &list) {
  json::Array out;
  for (const Expr &e : list)
    out.push_back(exprToJson(e));
  return out;
}

json::Value subscriptToJson(const Subscript &s) {
  switch (s.kind) {
  case Subscript::Point:
    return json::Object{{"point", exprToJson(s.begin)}};
  case Subscript::Range:
    return json::Object{{"begin", exprToJson(s.begin)}, {"end", exprToJson(s.end)}};
  case Subscript::Extent:
    return json::Object{{"begin", exprToJson(s.begin)}, {"extent", exprToJson(s.end)}};
  case Subscript::Full:
    return json::Object{{"full", true}};
  }
  return nullptr;
}

json::Array itersToJson(const std::vector<Iter> &iters) {
  json::Array out;
  for (const Iter &i : iters)
    out.push_back(json::Object{
        {"extent", i.extent}, {"stride", i.stride}, {"axis", std::string(axisName(i.axis))}});
  return out;
}

json::Value layoutToJson(const LayoutSpec &spec) {
  if (spec.terms) // numbers naming kernel parameters: the layout's text
    return json::Object{{"text", spec.str()}};
  if (!spec.preset.empty()) {
    json::Array args;
    for (int64_t a : spec.presetArgs)
      args.push_back(a);
    return json::Object{{"preset", spec.preset}, {"args", std::move(args)}};
  }
  const Layout &l = spec.layout;
  json::Object out{{"shard", itersToJson(l.shard())}};
  if (!l.replica().empty())
    out["replica"] = itersToJson(l.replica());
  if (!l.offset().empty()) {
    json::Array offsets;
    for (const AxisOffset &o : l.offset())
      offsets.push_back(json::Object{{"axis", std::string(axisName(o.axis))}, {"value", o.value}});
    out["offset"] = std::move(offsets);
  }
  if (const auto &s = l.swizzle()) {
    if (s->shorthandBytes)
      out["swizzle"] = json::Object{{"bytes", s->shorthandBytes},
                                    {"dtype", std::string(dtypeName(s->shorthandDtype))}};
    else
      out["swizzle"] = json::Object{
          {"bits_kept", s->bitsKept}, {"bits_xored", s->bitsXored}, {"shift", s->shift}};
  }
  return out;
}

json::Array lines(const std::vector<std::string> &list) {
  json::Array out;
  for (const std::string &l : list)
    out.push_back(l);
  return out;
}

// {"params": [{"name", "values": [expr...]} | {"name", "range": [b, e, step]}],
//  "points": [{"name", "values": {"P": expr, ...}}]}
json::Object spaceToJson(const Space &space) {
  json::Array params, points;
  for (const SpaceParam &p : space.params) {
    json::Object o{{"name", p.name}};
    if (p.kind == SpaceParam::Kind::IntRange)
      o["range"] = json::Array{p.begin, p.end, p.step};
    else
      o["values"] = exprList(p.values);
    if (p.defaultValue)
      o["default"] = exprToJson(p.defaultValue);
    params.push_back(std::move(o));
  }
  for (const NamedPoint &pt : space.points) {
    json::Object values;
    for (const PointValue &v : pt.values)
      values[v.name] = exprToJson(v.value);
    points.push_back(json::Object{{"name", pt.name}, {"values", std::move(values)}});
  }
  return json::Object{{"params", std::move(params)}, {"points", std::move(points)}};
}

class Writer {
public:
  explicit Writer(const Comments *comments) : comments_(comments) {}

  json::Array block(const Block &b) {
    json::Array out;
    for (const Stmt &s : b)
      out.push_back(stmt(s));
    return out;
  }

  json::Object kernel(const Kernel &k, size_t index) {
    json::Array params;
    for (const Param &p : k.params) {
      if (p.implicit) // addDeviceParams declares them again on reading
        continue;
      json::Object o{{"name", p.name}, {"dtype", std::string(dtypeName(p.dtype))}};
      if (p.isTensor)
        o["shape"] = exprList(p.shape);
      if (p.placement)
        o["placement"] = layoutToJson(*p.placement);
      params.push_back(std::move(o));
    }
    json::Value threads =
        k.launch.threadsExpr ? exprToJson(k.launch.threadsExpr) : json::Value(k.launch.threads);
    json::Object launch{{"grid", exprList(k.launch.grid)},
                        {"cluster", exprList(k.launch.cluster)},
                        {"threads", std::move(threads)},
                        {"target", std::string(targetInfo(k.launch.target).name)}};
    if (!k.launch.devices.empty())
      launch["devices"] = exprList(k.launch.devices);
    if (k.launch.ctasPerSmExpr)
      launch["ctas_per_sm"] = exprToJson(k.launch.ctasPerSmExpr);
    else if (k.launch.ctasPerSm != 1)
      launch["ctas_per_sm"] = k.launch.ctasPerSm;
    json::Object out{{"name", k.name},
                     {"params", std::move(params)},
                     {"where", exprList(k.constraints)},
                     {"launch", std::move(launch)},
                     {"body", block(k.body)}};
    if (!k.space.empty())
      out["space"] = spaceToJson(k.space);
    if (comments_) {
      json::Object c;
      if (index < comments_->kernelBefore.size() && !comments_->kernelBefore[index].empty())
        c["before"] = lines(comments_->kernelBefore[index]);
      if (index < comments_->kernelOpen.size() && !comments_->kernelOpen[index].empty())
        c["open"] = comments_->kernelOpen[index];
      if (index < comments_->kernelBodyEnd.size() && !comments_->kernelBodyEnd[index].empty())
        c["body_end"] = lines(comments_->kernelBodyEnd[index]);
      if (!c.empty())
        out["comments"] = std::move(c);
    }
    return out;
  }

private:
  const Comments *comments_;

  template <typename Map, typename Key>
  const typename Map::mapped_type *find(const Map &m, const Key &k) {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  }

  void addComments(const StmtNode *node, json::Object &out) {
    if (!comments_)
      return;
    json::Object c;
    if (auto *v = find(comments_->before, node); v && !v->empty())
      c["before"] = lines(*v);
    if (auto *v = find(comments_->endOfLine, node))
      c["end_of_line"] = *v;
    if (auto *v = find(comments_->afterClose, node))
      c["after_close"] = *v;
    if (auto *v = find(comments_->elseLine, node))
      c["else_line"] = *v;
    if (auto *v = find(comments_->beforeClose, std::make_pair(node, 0)); v && !v->empty())
      c["before_close"] = lines(*v);
    if (auto *v = find(comments_->beforeClose, std::make_pair(node, 1)); v && !v->empty())
      c["before_else_close"] = lines(*v);
    if (!c.empty())
      out["comments"] = std::move(c);
  }

  json::Object stmt(const Stmt &s) {
    json::Object out = stmtFields(s);
    addComments(s.get(), out);
    return out;
  }

  json::Object stmtFields(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::BufferDecl: {
      const auto &b = as<BufferDecl>(s);
      json::Object o{{"stmt", "buffer"},
                     {"scope", std::string(memScopeName(b.scope))},
                     {"name", b.name},
                     {"dtype", std::string(dtypeName(b.dtype))},
                     {"shape", exprList(b.shape)}};
      if (b.layout)
        o["layout"] = layoutToJson(*b.layout);
      return o;
    }
    case StmtKind::BarrierDecl: {
      const auto &b = as<BarrierDecl>(s);
      json::Object o{{"stmt", "mbarrier"}, {"name", b.name}};
      if (b.arraySize)
        o["size"] = exprToJson(b.arraySize);
      if (b.count)
        o["count"] = exprToJson(b.count);
      return o;
    }
    case StmtKind::Let: {
      const auto &l = as<Let>(s);
      return json::Object{{"stmt", "let"}, {"name", l.name}, {"value", exprToJson(l.value)}};
    }
    case StmtKind::For: {
      const auto &f = as<For>(s);
      return json::Object{{"stmt", "for"},
                          {"var", f.var},
                          {"begin", exprToJson(f.begin)},
                          {"end", exprToJson(f.end)},
                          {"step", exprToJson(f.step)},
                          {"unroll", f.unroll},
                          {"pipelined", f.pipelineStages},
                          {"body", block(f.body)}};
    }
    case StmtKind::If: {
      const auto &i = as<If>(s);
      return json::Object{{"stmt", "if"},
                          {"cond", exprToJson(i.cond)},
                          {"then", block(i.thenBody)},
                          {"else", block(i.elseBody)}};
    }
    case StmtKind::Store: {
      const auto &st = as<Store>(s);
      return json::Object{
          {"stmt", "store"}, {"target", exprToJson(st.target)}, {"value", exprToJson(st.value)}};
    }
    case StmtKind::CallStmt: {
      const auto &c = as<CallStmt>(s);
      json::Array args;
      for (const CallArg &a : c.args) {
        json::Object o{{"value", exprToJson(a.value)}};
        if (!a.keyword.empty())
          o["key"] = a.keyword;
        args.push_back(std::move(o));
      }
      return json::Object{{"stmt", "call"},
                          {"scope", std::string(execScopePrefix(c.scope))},
                          {"callee", c.callee},
                          {"args", std::move(args)}};
    }
    }
    return json::Object{};
  }
};

} // namespace

json::Value exprToJson(const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return json::Object{{"int", as<IntImm>(e).value}};
  case ExprKind::FloatImm:
    return json::Object{{"float", as<FloatImm>(e).value}};
  case ExprKind::BoolImm:
    return json::Object{{"bool", as<BoolImm>(e).value}};
  case ExprKind::StringImm:
    return json::Object{{"string", as<StringImm>(e).value}};
  case ExprKind::Var:
    return json::Object{{"var", as<Var>(e).name}};
  case ExprKind::Builtin:
    return json::Object{{"builtin", std::string(builtinName(as<Builtin>(e).which))}};
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    return json::Object{{"unary", u.op == UnaryOp::Neg ? "-" : "!"},
                        {"operand", exprToJson(u.operand)}};
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    return json::Object{{"binary", std::string(binaryOpSpelling(b.op))},
                        {"lhs", exprToJson(b.lhs)},
                        {"rhs", exprToJson(b.rhs)}};
  }
  case ExprKind::Call: {
    const auto &c = as<Call>(e);
    return json::Object{{"call", c.callee}, {"args", exprList(c.args)}};
  }
  case ExprKind::Index: {
    const auto &x = as<Index>(e);
    json::Array subs;
    for (const Subscript &s : x.subscripts)
      subs.push_back(subscriptToJson(s));
    return json::Object{{"index", exprToJson(x.base)}, {"subscripts", std::move(subs)}};
  }
  }
  return nullptr;
}

json::Value moduleToJson(const Module &module) {
  Writer w(module.comments.get());
  json::Array kernels;
  for (size_t i = 0; i < module.kernels.size(); ++i)
    kernels.push_back(w.kernel(module.kernels[i], i));
  json::Object out{{"kernels", std::move(kernels)}};
  if (module.comments && !module.comments->fileEnd.empty())
    out["file_end_comments"] = lines(module.comments->fileEnd);
  return out;
}

} // namespace tilescope
