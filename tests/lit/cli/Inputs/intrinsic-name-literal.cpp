// A pass that compares a call's name with a string (what the count rejects).
bool isFence(const CallStmt &c) {
  return c.callee == "wgmma.fence"; // the literal counts; "tma.load" in this comment does not
}
