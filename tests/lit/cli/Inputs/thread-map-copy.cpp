// Not compiled: input of thread-map.test, the shapes of a thread-index map
// written again outside ir/ThreadIndex.h.
int64_t leaf(BuiltinKind b, int64_t t) {
  switch (b) {
  case BuiltinKind::laneid:
    return t % 32;
  default:
    return 0;
  }
}
bool sameWarp(int64_t x, int64_t t) { return x / 32 == t / 32; }
std::string name(int64_t t) { return fmt::format("thread {} (warp {}, lane {})", t, 0, 0); }
