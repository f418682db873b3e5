// Control-flow graph, dominators and natural loops (Cfg.h).
#include "ptx/Cfg.h"

#include "ptx/Classify.h"

#include <algorithm>
#include <unordered_map>

namespace tilescope::ptx {

bool Loop::contains(int block) const {
  return std::binary_search(blocks.begin(), blocks.end(), block);
}

int Cfg::realLoopOf(size_t instruction) const {
  int l = loopOf(instruction);
  while (l >= 0 && loops[size_t(l)].spinWait)
    l = loops[size_t(l)].parent;
  return l;
}

bool Cfg::dominates(int a, int b) const {
  for (int x = b; x >= 0; x = idom[size_t(x)]) {
    if (x == a)
      return true;
    if (idom[size_t(x)] == x)
      break;
  }
  return false;
}

namespace {

bool endsBlock(const Instruction &in) {
  return in.opcode == "bra" || in.opcode == "brx" || in.opcode == "ret" || in.opcode == "exit" ||
         in.opcode == "trap";
}

void computeDominators(Cfg &cfg) {
  size_t n = cfg.blocks.size();
  cfg.idom.assign(n, -1);
  if (n == 0)
    return;
  // Reverse post-order by an explicit stack (no recursion).
  std::vector<int> order, rpoIndex(n, -1);
  std::vector<std::pair<int, size_t>> stack{{0, 0}};
  std::vector<bool> seen(n, false);
  seen[0] = true;
  while (!stack.empty()) {
    auto &[b, next] = stack.back();
    if (next < cfg.blocks[size_t(b)].succ.size()) {
      int s = cfg.blocks[size_t(b)].succ[next++];
      if (!seen[size_t(s)]) {
        seen[size_t(s)] = true;
        stack.push_back({s, 0});
      }
    } else {
      order.push_back(b);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    rpoIndex[size_t(order[i])] = int(i);
  cfg.idom[0] = 0;
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (rpoIndex[size_t(a)] > rpoIndex[size_t(b)])
        a = cfg.idom[size_t(a)];
      while (rpoIndex[size_t(b)] > rpoIndex[size_t(a)])
        b = cfg.idom[size_t(b)];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < order.size(); ++i) {
      int b = order[i];
      int newIdom = -1;
      for (int p : cfg.blocks[size_t(b)].pred) {
        if (rpoIndex[size_t(p)] < 0 || cfg.idom[size_t(p)] < 0)
          continue;
        newIdom = newIdom < 0 ? p : intersect(p, newIdom);
      }
      if (newIdom >= 0 && cfg.idom[size_t(b)] != newIdom) {
        cfg.idom[size_t(b)] = newIdom;
        changed = true;
      }
    }
  }
}

void findLoops(Cfg &cfg, const Function &f) {
  std::unordered_map<int, size_t> byHeader;
  for (size_t t = 0; t < cfg.blocks.size(); ++t) {
    for (int h : cfg.blocks[t].succ) {
      if (cfg.idom[t] < 0 || !cfg.dominates(h, int(t)))
        continue;
      auto [it, inserted] = byHeader.try_emplace(h, cfg.loops.size());
      if (inserted) {
        Loop l;
        l.header = h;
        cfg.loops.push_back(l);
      }
      Loop &loop = cfg.loops[it->second];
      loop.latches.push_back(int(t));
      // Blocks that reach the latch without passing the header.
      std::vector<int> work{int(t)};
      std::vector<int> &body = loop.blocks;
      if (std::find(body.begin(), body.end(), h) == body.end())
        body.push_back(h);
      while (!work.empty()) {
        int b = work.back();
        work.pop_back();
        if (std::find(body.begin(), body.end(), b) != body.end())
          continue;
        body.push_back(b);
        for (int p : cfg.blocks[size_t(b)].pred)
          work.push_back(p);
      }
    }
  }
  for (Loop &l : cfg.loops)
    std::sort(l.blocks.begin(), l.blocks.end());
  // Outer loops first: more blocks first, then by header.
  std::sort(cfg.loops.begin(), cfg.loops.end(), [](const Loop &a, const Loop &b) {
    if (a.blocks.size() != b.blocks.size())
      return a.blocks.size() > b.blocks.size();
    return a.header < b.header;
  });
  for (size_t i = 0; i < cfg.loops.size(); ++i) {
    Loop &l = cfg.loops[i];
    for (size_t j = i; j-- > 0;)
      if (cfg.loops[j].contains(l.header) && cfg.loops[j].blocks.size() > l.blocks.size()) {
        l.parent = int(j);
        l.depth = cfg.loops[j].depth + 1;
        break;
      }
    for (int b : l.blocks)
      cfg.blocks[size_t(b)].loop = int(i); // inner loops come later and overwrite
    l.firstLine = ~0u;
    bool waits = false, other = false;
    for (int b : l.blocks) {
      const BasicBlock &bb = cfg.blocks[size_t(b)];
      for (size_t k = bb.first; k < bb.last; ++k) {
        const Instruction &in = f.instructions[k];
        l.firstLine = std::min(l.firstLine, in.line);
        l.lastLine = std::max(l.lastLine, in.line);
        Classification c = classify(in);
        if (c.cls == InstrClass::Mbarrier &&
            (in.hasModifier("try_wait") || in.hasModifier("test_wait")))
          waits = true;
        else if (c.cls != InstrClass::Branch && c.cls != InstrClass::Move &&
                 c.cls != InstrClass::IntegerMath)
          other = true;
      }
    }
    if (l.firstLine == ~0u)
      l.firstLine = cfg.blocks[size_t(l.header)].line;
    l.spinWait = waits && !other && l.blocks.size() <= 3;
  }
}

} // namespace

Cfg buildCfg(const Function &f) {
  Cfg cfg;
  cfg.blockOf.assign(f.instructions.size(), -1);
  std::unordered_map<std::string, int> blockOfLabel;
  bool open = false;
  constexpr size_t kEmpty = ~size_t(0);
  auto newBlock = [&] {
    cfg.blocks.push_back({});
    cfg.blocks.back().first = cfg.blocks.back().last = kEmpty;
    open = true;
  };
  for (const Statement &s : f.body) {
    if (s.kind == Statement::Label) {
      // A label starts a block (several labels in a row share one).
      if (!open || cfg.blocks.back().first != kEmpty)
        newBlock();
      if (cfg.blocks.back().label.empty())
        cfg.blocks.back().label = f.labels[s.index];
      blockOfLabel[f.labels[s.index]] = int(cfg.blocks.size() - 1);
      continue;
    }
    if (s.kind != Statement::Instr)
      continue;
    if (!open)
      newBlock();
    BasicBlock &bb = cfg.blocks.back();
    if (bb.first == kEmpty)
      bb.first = s.index, bb.line = f.instructions[s.index].line;
    bb.last = s.index + 1;
    cfg.blockOf[s.index] = int(cfg.blocks.size() - 1);
    if (endsBlock(f.instructions[s.index]))
      open = false;
  }
  for (BasicBlock &bb : cfg.blocks)
    if (bb.first == kEmpty)
      bb.first = bb.last = f.instructions.size();
  if (cfg.blocks.empty())
    cfg.blocks.push_back({});
  for (size_t b = 0; b < cfg.blocks.size(); ++b) {
    BasicBlock &bb = cfg.blocks[b];
    bool fallsThrough = true;
    if (bb.last > bb.first) {
      const Instruction &in = f.instructions[bb.last - 1];
      if (in.opcode == "bra") {
        if (!in.operands.empty()) {
          auto it = blockOfLabel.find(in.operands[0].name);
          if (it != blockOfLabel.end())
            bb.succ.push_back(it->second);
          else
            cfg.notes.push_back("line " + std::to_string(in.line) + ": branch to unknown label '" +
                                in.operands[0].name + "'");
        }
        fallsThrough = !in.guard.empty();
      } else if (in.opcode == "brx") {
        cfg.notes.push_back("line " + std::to_string(in.line) +
                            ": indirect branch (brx.idx) not followed");
        fallsThrough = false;
      } else if (in.opcode == "ret" || in.opcode == "exit" || in.opcode == "trap") {
        fallsThrough = !in.guard.empty();
      }
    }
    if (fallsThrough && b + 1 < cfg.blocks.size())
      bb.succ.push_back(int(b + 1));
  }
  for (size_t b = 0; b < cfg.blocks.size(); ++b)
    for (int s : cfg.blocks[b].succ)
      cfg.blocks[size_t(s)].pred.push_back(int(b));
  computeDominators(cfg);
  findLoops(cfg, f);
  return cfg;
}

} // namespace tilescope::ptx
