// Not compiled: input of scope-enum.test, a second memory-scope enum (the
// dynamic race detector's before it took MemScope).
enum class RaceSpace : uint8_t { Shared, Global, Tmem };
