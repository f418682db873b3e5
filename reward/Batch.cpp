#include "reward/Batch.h"

#include "ir/JsonText.h"
#include "ir/TimeSlack.h"
#include "proof/QueryDeadline.h"
#include "reward/Json.h"
#include "reward/RewardCache.h"
#include "reward/Task.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TILESCOPE_BATCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TILESCOPE_BATCH_SANITIZED 1
#endif
#endif

namespace tilescope {

#ifdef TILESCOPE_BATCH_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

namespace {
using Clock = std::chrono::steady_clock;

bool writeAll(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    data += w;
    n -= size_t(w);
  }
  return true;
}

bool readAll(int fd, char *data, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, data, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    data += r;
    n -= size_t(r);
  }
  return true;
}

// A message is its length (8 bytes) and its bytes.
bool sendMessage(int fd, const std::string &text) {
  uint64_t n = text.size();
  return writeAll(fd, reinterpret_cast<const char *>(&n), sizeof n) &&
         writeAll(fd, text.data(), text.size());
}

std::optional<std::string> receiveMessage(int fd) {
  uint64_t n = 0;
  if (!readAll(fd, reinterpret_cast<char *>(&n), sizeof n) || n > (uint64_t{1} << 34))
    return std::nullopt;
  std::string text(n, '\0');
  if (!readAll(fd, text.data(), n))
    return std::nullopt;
  return text;
}

std::string oneLine(llvm::json::Value v) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << v;
  os.flush();
  return out;
}

// The result line of a candidate that has no reward: verdict "error" (exit
// code 2) or "budget" (4).
std::string errorLine(const llvm::json::Value &id, size_t index, const std::string &verdict,
                      const std::string &message) {
  return oneLine(llvm::json::Object{{"id", id},
                                    {"index", int64_t(index)},
                                    {"verdict", verdict},
                                    {"exit_code", verdict == "budget" ? 4 : 2},
                                    {"score", 0.0},
                                    {"error", message}});
}

// The exit status of a worker that OverrunExit ended (a Z3 query ran on past
// its deadline) after it had sent its candidate's budget line: the
// coordinator may already have handed it the next candidate, which then goes
// to a fresh worker.
constexpr int kOverranStatus = 87;

// Runs the reward of one input line (in a worker).
std::string rewardLine(const std::string &line, size_t index, const BatchOptions &o,
                       RewardCache &cache, int toCoordinator) {
  BatchCandidate c;
  JsonInputError bad;
  if (!readBatchLine(line, o.reward, c, bad))
    return errorLine(
        c.id, index, "error",
        fmt::format("input line {}, column {}: {}", index + 1, bad.column, bad.message));
  RewardOptions options = c.options;
  options.cache = &cache;
  std::string source = c.source;
  if (!c.path.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(c.path);
    if (!buffer)
      return errorLine(c.id, index, "error",
                       fmt::format("input line {}: cannot read '{}': {}", index + 1, c.path,
                                   buffer.getError().message()));
    source = (*buffer)->getBuffer().str();
    options.fileName = c.path;
  } else {
    options.fileName = c.id.kind() == llvm::json::Value::String
                           ? "<" + c.id.getAsString()->str() + ">"
                           : "<" + oneLine(c.id) + ">";
  }
  const llvm::json::Value &id = c.id;
  // A Z3 query that ignores its deadline ends this worker a second past it
  // (proof/QueryDeadline.h): the candidate's result is `budget`, sent first;
  // the coordinator gives the next candidate to a fresh worker.
  OverrunExit overrun([&](const Budget &b) {
    sendMessage(toCoordinator, errorLine(id, index, "budget", b.message()));
    return kOverranStatus;
  });
  llvm::json::Object out = reward_detail::resultJson(reward(source, options));
  out["id"] = id;
  out["index"] = int64_t(index);
  return oneLine(std::move(out));
}

// The exit status of a worker whose allocation failed under its address-space
// limit: its operator new handler ends it with this status (instead of the
// tool's input-error status 2), so that the coordinator can name the limit.
constexpr int kOutOfMemoryStatus = 86;

[[noreturn]] void workerOutOfMemory() {
  static const char text[] = "tilescope reward: a batch worker ran out of its memory limit\n";
  (void)!::write(2, text, sizeof text - 1);
  ::_exit(kOutOfMemoryStatus);
}

[[noreturn]] void workerLoop(int in, int out, const BatchOptions &o) {
  // Not under AddressSanitizer: its shadow memory is reserved address space
  // (terabytes), so any such limit made every worker fail at its first
  // mmap and the batch respawn them without end (the suite under ASan,
  // 2026-11-26). There the coordinator's watch of the worker's resident
  // memory (residentMb) is the cap; it runs in every build.
  if (o.workerMemoryMb > 0 && !kSanitized) {
    rlimit limit{rlim_t(o.workerMemoryMb) << 20, rlim_t(o.workerMemoryMb) << 20};
    setrlimit(RLIMIT_AS, &limit);
    std::set_new_handler(workerOutOfMemory);
  }
  RewardCache cache(o.cacheDir);
  while (auto message = receiveMessage(in)) {
    size_t newline = message->find('\n');
    size_t index = std::stoull(message->substr(0, newline));
    std::string result = rewardLine(message->substr(newline + 1), index, o, cache, out);
    if (!sendMessage(out, result))
      break;
  }
  ::_exit(0);
}

struct Worker {
  pid_t pid = -1;
  int toWorker = -1, fromWorker = -1;
  bool busy = false;
  size_t task = 0;
  Clock::time_point started;
};

struct Task {
  size_t index;
  std::string line;
  llvm::json::Value id;
};

// The id of an input line as JSON text (for --resume), or "" when it has none.
std::string idKey(const std::string &line) {
  auto parsed = parseJsonText(line);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return "";
  }
  const llvm::json::Object *o = parsed->getAsObject();
  const llvm::json::Value *id = o ? o->get("id") : nullptr;
  return id && id->kind() != llvm::json::Value::Null ? oneLine(*id) : "";
}

std::string describeDeath(int status, uint64_t memoryMb) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return fmt::format(
        "the worker was ended by signal {} ({}){}", sig, strsignal(sig),
        sig == SIGABRT || sig == SIGSEGV || sig == SIGKILL
            ? fmt::format("; it may have run out of its memory limit of {} MiB", memoryMb)
            : "");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kOutOfMemoryStatus)
    return fmt::format("an allocation failed: the worker ran out of its memory limit of {} MiB "
                       "(--worker-memory-mb)",
                       memoryMb);
  if (WIFEXITED(status))
    return fmt::format("the worker exited with status {}", WEXITSTATUS(status));
  return "the worker ended";
}

// The resident memory of a process in MiB (the second field of
// /proc/PID/statm, in pages); nullopt where it cannot be read (the process
// has just ended, or no /proc).
std::optional<double> residentMb(pid_t pid) {
  std::ifstream statm(fmt::format("/proc/{}/statm", pid));
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident))
    return std::nullopt;
  static const double pageMb = double(::sysconf(_SC_PAGESIZE)) / double(1 << 20);
  return double(resident) * pageMb;
}

// How often the coordinator reads a busy worker's resident memory. The
// address-space limit stops an allocation before it happens; this watch
// stops a worker within one period after it passes its limit, by at most
// what it can touch in that time (a few hundred MiB at memset speed). It is
// the only cap in sanitized builds, which set no address-space limit.
constexpr int kMemoryWatchMs = 20;

} // namespace

bool runBatch(const BatchOptions &o, BatchSummary &summary, std::string &error) {
  auto started = Clock::now();
  auto cpuSeconds = [](int who) {
    rusage u{};
    ::getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  const double selfBefore = cpuSeconds(RUSAGE_SELF), childrenBefore = cpuSeconds(RUSAGE_CHILDREN);
  std::ifstream in(o.input);
  if (!in) {
    error = fmt::format("{}: cannot open the batch input", o.input);
    return false;
  }
  std::set<std::string> done;
  if (o.resume) {
    std::ifstream previous(o.output);
    std::string line;
    while (std::getline(previous, line))
      if (std::string key = idKey(line); !key.empty())
        done.insert(key);
  }
  std::ofstream out(o.output, o.resume ? std::ios::app : std::ios::trunc);
  if (!out) {
    error = fmt::format("{}: cannot open the batch output", o.output);
    return false;
  }
  std::deque<Task> pending;
  std::vector<size_t> order; // indices to write, in input order
  {
    std::string line;
    size_t index = 0;
    for (; std::getline(in, line); ++index) {
      ++summary.lines;
      if (o.shardCount > 1 && index % o.shardCount != o.shardIndex)
        continue;
      if (line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      ++summary.inShard;
      std::string key = idKey(line);
      if (!key.empty() && done.count(key)) {
        ++summary.skipped;
        continue;
      }
      llvm::json::Value id = nullptr;
      if (!key.empty())
        if (auto v = parseJsonText(key))
          id = std::move(*v);
      pending.push_back({index, line, std::move(id)});
      order.push_back(index);
    }
  }
  unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  double limitMs = o.candidateTimeoutMs > 0 ? o.candidateTimeoutMs : 4 * o.reward.timeoutMs + 30000;
  // Counted with the sanitized build's time slack, as the budgets count every
  // time limit (ir/TimeSlack.h); messages give the limit as set. Without it a
  // sanitized worker at load ran past 4 s of wall time before reaching its
  // memory limit (reward_batch's `oom` line under the preset `asan`).
  const double countedLimitMs =
      double(budgetLimitNs(int64_t(std::clamp(limitMs, 0.0, 1e12)))) / 1e6;
  std::map<size_t, std::string> results;
  std::vector<Task> tasks(pending.begin(), pending.end());
  pending.assign(tasks.begin(), tasks.end());
  size_t nextToWrite = 0;
  auto flush = [&]() {
    while (nextToWrite < order.size() && results.count(order[nextToWrite])) {
      out << results[order[nextToWrite]] << "\n";
      results.erase(order[nextToWrite]);
      ++nextToWrite;
    }
    out.flush();
  };

  auto oldPipe = std::signal(SIGPIPE, SIG_IGN);
  std::vector<Worker> workers;
  auto spawn = [&]() -> bool {
    int down[2], up[2];
    if (::pipe(down) != 0)
      return false;
    if (::pipe(up) != 0) {
      ::close(down[0]);
      ::close(down[1]);
      return false;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      for (int fd : {down[0], down[1], up[0], up[1]})
        ::close(fd);
      return false;
    }
    if (pid == 0) {
      for (const Worker &w : workers) {
        ::close(w.toWorker);
        ::close(w.fromWorker);
      }
      ::close(down[1]);
      ::close(up[0]);
      workerLoop(down[0], up[1], o);
    }
    ::close(down[0]);
    ::close(up[1]);
    Worker w;
    w.pid = pid;
    w.toWorker = down[1];
    w.fromWorker = up[0];
    workers.push_back(w);
    return true;
  };
  auto retire = [&](size_t i) {
    ::close(workers[i].toWorker);
    ::close(workers[i].fromWorker);
    workers.erase(workers.begin() + long(i));
  };
  auto taskOf = [&](size_t index) -> const Task & {
    return *std::find_if(tasks.begin(), tasks.end(),
                         [&](const Task &t) { return t.index == index; });
  };

  while (!pending.empty() ||
         std::any_of(workers.begin(), workers.end(), [](const Worker &w) { return w.busy; })) {
    // Hand out work, starting workers up to `jobs`.
    while (!pending.empty()) {
      auto idle =
          std::find_if(workers.begin(), workers.end(), [](const Worker &w) { return !w.busy; });
      if (idle == workers.end()) {
        if (workers.size() >= jobs || !spawn())
          break;
        idle = workers.end() - 1;
      }
      const Task &t = pending.front();
      if (!sendMessage(idle->toWorker, fmt::format("{}\n{}", t.index, t.line))) {
        int status = 0;
        ::kill(idle->pid, SIGKILL);
        ::waitpid(idle->pid, &status, 0);
        retire(size_t(idle - workers.begin()));
        continue; // the task stays pending for a fresh worker
      }
      idle->busy = true;
      idle->task = t.index;
      idle->started = Clock::now();
      pending.pop_front();
    }
    if (workers.empty()) {
      error = "cannot start a worker process";
      std::signal(SIGPIPE, oldPipe);
      return false;
    }
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    int waitMs = o.workerMemoryMb > 0 ? kMemoryWatchMs : 1000;
    auto now = Clock::now();
    for (size_t i = 0; i < workers.size(); ++i)
      if (workers[i].busy) {
        fds.push_back({workers[i].fromWorker, POLLIN, 0});
        which.push_back(i);
        double left = countedLimitMs -
                      std::chrono::duration<double, std::milli>(now - workers[i].started).count();
        waitMs = std::clamp(int(left) + 1, 1, waitMs);
      }
    int ready = ::poll(fds.data(), fds.size(), waitMs);
    if (ready < 0 && errno != EINTR)
      break;
    std::vector<size_t> dead;
    now = Clock::now();
    for (size_t f = 0; f < fds.size(); ++f) {
      Worker &w = workers[which[f]];
      double ranMs = std::chrono::duration<double, std::milli>(now - w.started).count();
      // Ends the worker's candidate with an error or budget result, its
      // message made from the worker's exit status: the worker is reaped
      // (killed first unless it has ended) and retired.
      auto fail = [&](bool kill, const std::string &verdict, auto message,
                      std::optional<int> reaped = std::nullopt) {
        int status = reaped.value_or(0);
        if (kill)
          ::kill(w.pid, SIGKILL);
        if (!reaped)
          ::waitpid(w.pid, &status, 0);
        results[w.task] = errorLine(taskOf(w.task).id, w.task, verdict, message(status));
        ++(verdict == "budget" ? summary.timedOut : summary.crashed);
        ++summary.done;
        dead.push_back(which[f]);
      };
      if (fds[f].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (auto message = receiveMessage(w.fromWorker)) {
          results[w.task] = std::move(*message);
          w.busy = false;
          ++summary.done;
          continue;
        }
        int status = 0;
        ::waitpid(w.pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == kOverranStatus) {
          pending.push_front(taskOf(w.task)); // never begun: a fresh worker's
          dead.push_back(which[f]);
          continue;
        }
        fail(
            false, "error",
            [&](int status) {
              return fmt::format("the candidate crashed its worker: {}",
                                 describeDeath(status, o.workerMemoryMb));
            },
            status);
      } else if (std::optional<double> resident =
                     o.workerMemoryMb > 0 ? residentMb(w.pid) : std::nullopt;
                 resident && *resident > double(o.workerMemoryMb)) {
        summary.peakWorkerMb = std::max(summary.peakWorkerMb, *resident);
        fail(true, "error", [&](int) {
          return fmt::format("the candidate crashed its worker: its resident memory reached "
                             "{:.0f} MiB, over its memory limit of {} MiB (--worker-memory-mb), "
                             "and it was killed",
                             *resident, o.workerMemoryMb);
        });
      } else if (ranMs > countedLimitMs) {
        fail(true, "budget", [&](int) {
          return fmt::format("the candidate ran past the batch's wall-time limit of {:.0f} ms "
                             "per candidate and was killed",
                             limitMs);
        });
      }
    }
    std::sort(dead.rbegin(), dead.rend());
    for (size_t i : dead)
      retire(i);
    flush();
  }
  for (Worker &w : workers) {
    ::close(w.toWorker);
    ::close(w.fromWorker);
    int status = 0;
    rusage usage{};
    ::wait4(w.pid, &status, 0, &usage);
    summary.peakWorkerMb = std::max(summary.peakWorkerMb, double(usage.ru_maxrss) / 1024.0);
  }
  flush();
  std::signal(SIGPIPE, oldPipe);
  summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  summary.coordinatorCpuSeconds = cpuSeconds(RUSAGE_SELF) - selfBefore;
  summary.workersCpuSeconds = cpuSeconds(RUSAGE_CHILDREN) - childrenBefore;
  return true;
}

bool mergeShards(const std::string &output, const std::vector<std::string> &inputs, size_t &lines,
                 std::string &error) {
  std::map<int64_t, std::string> byIndex;
  std::set<std::string> ids;
  std::vector<std::string> withoutIndex;
  for (const std::string &path : inputs) {
    std::ifstream in(path);
    if (!in) {
      error = fmt::format("{}: cannot open a shard output", path);
      return false;
    }
    std::string line;
    size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      auto parsed = parseJsonText(line);
      const llvm::json::Object *o = parsed ? parsed->getAsObject() : nullptr;
      if (!o) {
        if (!parsed)
          llvm::consumeError(parsed.takeError());
        error = fmt::format("{}:{}: not a result line (a JSON object)", path, number);
        return false;
      }
      auto index = o->getInteger("index");
      if (!index) {
        error = fmt::format("{}:{}: a result line without \"index\"", path, number);
        return false;
      }
      std::string id = o->get("id") ? oneLine(*o->get("id")) : "null";
      if (id != "null" && !ids.insert(id).second)
        continue; // the same candidate in two shards (a resumed run): first wins
      if (!byIndex.emplace(*index, line).second && id == "null")
        continue;
    }
  }
  std::ofstream out(output, std::ios::trunc);
  if (!out) {
    error = fmt::format("{}: cannot open the merged output", output);
    return false;
  }
  lines = 0;
  for (const auto &[index, line] : byIndex) {
    out << line << "\n";
    ++lines;
  }
  return true;
}

} // namespace tilescope
