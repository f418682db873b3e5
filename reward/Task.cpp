#include "reward/Task.h"

#include "ir/Dtype.h"
#include "ir/DtypeNames.h"
#include "ir/JsonText.h"
#include "ir/Suggest.h"

#include <llvm/Support/Error.h>

#include <fmt/format.h>

#include <limits>

namespace tilescope {
namespace json = llvm::json;

namespace {

// The line and column of byte `offset` of `text`.
JsonInputError at(llvm::StringRef text, size_t offset, std::string message) {
  JsonInputError e;
  e.message = std::move(message);
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++e.line;
      e.column = 1;
    } else {
      ++e.column;
    }
  }
  return e;
}

// Where KEY is written in TEXT: the first `"KEY"` followed by a colon (the
// tree keeps no positions; a string value equal to the key may come first in
// odd documents, which only moves the column). The start when not found.
// The offset of the first `"KEY"` followed by a colon at or after `from`, or
// npos.
size_t keyOffset(llvm::StringRef text, llvm::StringRef key, size_t from = 0) {
  std::string quoted = fmt::format("\"{}\"", key.str());
  for (;;) {
    size_t found = text.find(quoted, from);
    if (found == llvm::StringRef::npos)
      return found;
    llvm::StringRef rest = text.drop_front(found + quoted.size()).ltrim();
    if (rest.startswith(":"))
      return found;
    from = found + 1;
  }
}

JsonInputError atKey(llvm::StringRef text, llvm::StringRef key, std::string message) {
  size_t found = keyOffset(text, key);
  return at(text, found == llvm::StringRef::npos ? 0 : found, std::move(message));
}

// Where KEY is written inside the object of the key OUTER (a parameter of
// "dtypes", not the same name among "tolerances"); at OUTER, or the start,
// when not found.
JsonInputError atInnerKey(llvm::StringRef text, llvm::StringRef outer, llvm::StringRef key,
                          std::string message) {
  size_t object = keyOffset(text, outer);
  if (object == llvm::StringRef::npos)
    return at(text, 0, std::move(message));
  size_t found = keyOffset(text, key, object + outer.size() + 2);
  return at(text, found == llvm::StringRef::npos ? object : found, std::move(message));
}

// TEXT as JSON; on a syntax error, `error` at the parser's position.
std::optional<json::Value> parseJson(llvm::StringRef text, JsonInputError &error) {
  llvm::Expected<json::Value> parsed = parseJsonText(text);
  if (parsed)
    return std::move(*parsed);
  // json::ParseError prints "[LINE:COL, byte=OFFSET]: MESSAGE".
  std::string log = llvm::toString(parsed.takeError());
  unsigned line = 0, column = 0;
  size_t offset = 0;
  int used = 0;
  if (std::sscanf(log.c_str(), "[%u:%u, byte=%zu]: %n", &line, &column, &offset, &used) >= 3 &&
      used > 0) {
    // The parser's offset is one past the character it stopped at.
    error = at(text, offset > 0 ? offset - 1 : 0, "not JSON: " + log.substr(size_t(used)));
  } else {
    error = at(text, 0, "not JSON: " + log);
  }
  return std::nullopt;
}

// A non-negative integer that fits the options' uint64_t.
std::optional<uint64_t> nonNegative(const json::Value &v) {
  llvm::Optional<int64_t> i = v.getAsInteger();
  if (!i || *i < 0)
    return std::nullopt;
  return uint64_t(*i);
}

// The task keys shared by --task and batch lines. Returns true when KEY is
// one of them (and was applied or reported in `error`).
bool applyTaskKey(llvm::StringRef text, llvm::StringRef key, const json::Value &value,
                  RewardOptions &o, std::optional<JsonInputError> &error) {
  auto wrongType = [&](const char *expected) {
    error = atKey(text, key, fmt::format("task key \"{}\" must be {}", key.str(), expected));
  };
  if (key == "problem" || key == "kernel" || key == "machine" || key == "set") {
    if (auto s = value.getAsString())
      (key == "problem" ? o.problem
       : key == "kernel" ? o.kernel
       : key == "set"    ? o.point
                         : o.machine) = s->str();
    else
      wrongType("a string");
    return true;
  }
  if (key == "performance_sizes") {
    if (auto s = value.getAsString()) {
      o.performanceSizes = s->str();
      return true;
    }
    const json::Object *set = value.getAsObject();
    std::string one;
    for (const auto &[name, v] : set ? *set : json::Object{}) {
      llvm::Optional<int64_t> n = v.getAsInteger();
      if (!n || *n <= 0 || *n > (int64_t{1} << 40)) {
        error =
            atKey(text, name, fmt::format("size '{}' must be an integer in [1, 2^40]", name.str()));
        return true;
      }
      one += fmt::format("{}{}={}", one.empty() ? "" : ",", name.str(), *n);
    }
    if (one.empty())
      wrongType("\"auto\", a string such as \"M=8192,N=8192,K=8192\" or an object such as "
                "{\"M\": 8192}");
    else
      o.performanceSizes = one;
    return true;
  }
  if (key == "seed") {
    if (auto s = nonNegative(value))
      o.seed = *s;
    else
      wrongType("a non-negative integer");
    return true;
  }
  if (key == "tolerances") {
    const json::Object *outputs = value.getAsObject();
    if (!outputs) {
      wrongType("an object such as {\"C\": {\"rtol\": 0.01, \"atol\": 1e-5}}");
      return true;
    }
    for (const auto &[output, t] : *outputs) {
      const json::Object *pair = t.getAsObject();
      RewardTolerance tolerance;
      bool ok = pair != nullptr;
      for (const auto &[name, v] : pair ? *pair : json::Object{}) {
        auto number = v.getAsNumber();
        if ((name != "rtol" && name != "atol") || !number)
          ok = false;
        else
          (name == "rtol" ? tolerance.rtol : tolerance.atol) = *number;
      }
      if (!ok) {
        error = atKey(text, output,
                      fmt::format("tolerance for '{}' must be an object such as {{\"rtol\": "
                                  "0.01, \"atol\": 1e-5}} (numbers; a missing one is 0)",
                                  output.str()));
        return true;
      }
      o.tolerances[output.str()] = tolerance;
    }
    return true;
  }
  if (key == "dtypes") {
    const json::Object *params = value.getAsObject();
    if (!params) {
      wrongType("an object such as {\"A\": \"bf16\", \"C\": \"f32\"}");
      return true;
    }
    for (const auto &[param, dtype] : *params) {
      auto name = dtype.getAsString();
      if (!name) {
        error = atInnerKey(text, key, param,
                           fmt::format("the type of '{}' must be a string such as \"bf16\"",
                                       param.str()));
        return true;
      }
      // An unknown name is the task's error, at its key (it was reported at
      // the kernel's `FILE:0:0` when the reward checked the options).
      if (!dtypeFromName(*name)) {
        error = atInnerKey(text, key, param,
                           fmt::format("the type '{}' of '{}' is no element type (f32, bf16, f16, "
                                       "f8e4m3, ...){}",
                                       name->str(), param.str(),
                                       didYouMean(*name, dtypeNames())));
        return true;
      }
      o.dtypes[param.str()] = name->str();
    }
    return true;
  }
  if (key != "sizes")
    return false;
  if (auto s = value.getAsString()) {
    o.sizes = s->str();
    return true;
  }
  const json::Array *sets = value.getAsArray();
  if (!sets || sets->empty()) {
    wrongType("\"auto\", a string such as \"M=128,N=128;M=256,N=64\", or a non-empty list of "
              "objects such as {\"M\": 128}");
    return true;
  }
  std::string all;
  for (const json::Value &set : *sets) {
    const json::Object *s = set.getAsObject();
    if (!s || s->empty()) {
      wrongType("a list of non-empty objects such as {\"M\": 128}");
      return true;
    }
    std::string one;
    for (const auto &[name, v] : *s) {
      // Up to 2^40, as layout extents (LLVM's reader saturates larger
      // integers to 2^63 - 1, which must not pass as a size).
      llvm::Optional<int64_t> n = v.getAsInteger();
      if (!n || *n <= 0 || *n > (int64_t{1} << 40)) {
        error =
            atKey(text, name, fmt::format("size '{}' must be an integer in [1, 2^40]", name.str()));
        return true;
      }
      one += fmt::format("{}{}={}", one.empty() ? "" : ",", name.str(), *n);
    }
    all += (all.empty() ? "" : ";") + one;
  }
  o.sizes = all;
  return true;
}

} // namespace

std::string JsonInputError::str(llvm::StringRef file) const {
  return fmt::format("{}:{}:{}: error: {}", file.str(), line, column, message);
}

namespace {

// The keys a task file takes (applyTaskKey's), in the order messages list them.
const std::vector<std::string_view> &taskKeys() {
  static const std::vector<std::string_view> keys = {
      "problem", "sizes", "seed", "kernel", "set", "tolerances", "dtypes", "performance_sizes",
      "machine"};
  return keys;
}

// A batch line's keys: its own and a task's.
const std::vector<std::string_view> &lineKeys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> k = {"id", "source", "path"};
    k.insert(k.end(), taskKeys().begin(), taskKeys().end());
    return k;
  }();
  return keys;
}

} // namespace

bool readTask(llvm::StringRef text, RewardOptions &options, JsonInputError &error) {
  std::optional<json::Value> task = parseJson(text, error);
  if (!task)
    return false;
  const json::Object *object = task->getAsObject();
  if (!object) {
    error = at(text, 0, "the task must be a JSON object");
    return false;
  }
  RewardOptions o = options;
  for (const auto &[key, value] : *object) {
    std::optional<JsonInputError> bad;
    if (!applyTaskKey(text, key, value, o, bad))
      bad = atKey(text, key,
                  fmt::format("unknown task key '{}' ({}){}", key.str(),
                              fmt::join(taskKeys(), ", "), didYouMean(key.str(), taskKeys())));
    if (bad) {
      error = std::move(*bad);
      return false;
    }
  }
  options = std::move(o);
  return true;
}

bool readBatchLine(llvm::StringRef line, const RewardOptions &defaults, BatchCandidate &candidate,
                   JsonInputError &error) {
  candidate = BatchCandidate();
  candidate.options = defaults;
  std::optional<json::Value> parsed = parseJson(line, error);
  if (!parsed)
    return false;
  const json::Object *object = parsed->getAsObject();
  if (!object) {
    error = at(line, 0, "not a JSON object");
    return false;
  }
  if (const json::Value *id = object->get("id"))
    candidate.id = *id;
  bool hasId = false, hasSource = false, hasPath = false;
  for (const auto &[key, value] : *object) {
    std::optional<JsonInputError> bad;
    if (key == "id") {
      hasId = value.kind() != json::Value::Null;
      if (!hasId)
        bad = atKey(line, key, "\"id\" must not be null");
    } else if (key == "source" || key == "path") {
      auto s = value.getAsString();
      if (!s) {
        bad = atKey(line, key, fmt::format("\"{}\" must be a string", key.str()));
      } else if (key == "source") {
        hasSource = true;
        candidate.source = s->str();
      } else if (s->empty()) {
        bad = atKey(line, key, "\"path\" must not be empty");
      } else {
        hasPath = true;
        candidate.path = s->str();
      }
    } else if (!applyTaskKey(line, key, value, candidate.options, bad)) {
      bad = atKey(line, key,
                  fmt::format("unknown key '{}' (id, source, path, problem, sizes, seed, "
                              "kernel, set){}",
                              key.str(),
                              didYouMean(key.str(), lineKeys())));
    }
    if (bad) {
      error = std::move(*bad);
      return false;
    }
  }
  if (!hasId) {
    error = at(line, 0, "no \"id\"");
    return false;
  }
  if (hasSource == hasPath) {
    error = at(line, 0,
               hasSource ? "both \"source\" and \"path\"; give one"
                         : "neither \"source\" nor \"path\"");
    return false;
  }
  return true;
}

} // namespace tilescope
