// `tilescope mma --target T --inst NAME --a A.npy --b B.npy [--c C.npy]
//  [--scale-a SA.npy --scale-b SB.npy] [-o D.npy] [--json]`: one tensor-core
// instruction, D = A x B + C, under the simulator's numerics (simulator/Mma.h).
//
// Operands are whole matrices, row-major: A is M x K, B is K x N, C and D are
// M x N. A and B hold either raw codes ('<u2' for bf16/f16, '|u1' for fp8, fp6,
// fp4; f16 may also be '<f2') or '<f4' values, each of which must be exactly
// representable in the operand's format. C is '<f4' (or '<u4' f32 bits) and
// defaults to zeros. Block scales are ue8m0 codes ('|u1'), M x K/block for A and
// K/block x N for B. D is written as '<f4'.
//
// Exit: 0 evaluated; 1 the instruction exists but its numerics are unknown;
// 2 usage or input error.
#include "simulator/Mma.h"
#include "simulator/Npy.h"
#include "tools/Command.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand mmaCommand("mma", "Evaluate one tensor-core MMA instruction under the simulator's "
                                 "numerics");
cl::opt<std::string> targetName("target", cl::desc("Target: sm_80, sm_90a or sm_100a"),
                                cl::value_desc("T"), cl::Required, cl::sub(mmaCommand));
cl::opt<std::string> instName("inst", cl::desc("Instruction, e.g. wgmma.m64n8k16.f32.bf16.bf16"),
                              cl::value_desc("NAME"), cl::Required, cl::sub(mmaCommand));
cl::opt<std::string> aPath("a", cl::desc("A, M x K (.npy)"), cl::value_desc("FILE"), cl::Required,
                           cl::sub(mmaCommand));
cl::opt<std::string> bPath("b", cl::desc("B, K x N (.npy)"), cl::value_desc("FILE"), cl::Required,
                           cl::sub(mmaCommand));
cl::opt<std::string> cPath("c", cl::desc("C, M x N float32 (.npy); zeros when absent"),
                           cl::value_desc("FILE"), cl::sub(mmaCommand));
cl::opt<std::string> scaleAPath("scale-a", cl::desc("ue8m0 block scales of A, M x K/block"),
                                cl::value_desc("FILE"), cl::sub(mmaCommand));
cl::opt<std::string> scaleBPath("scale-b", cl::desc("ue8m0 block scales of B, K/block x N"),
                                cl::value_desc("FILE"), cl::sub(mmaCommand));
cl::opt<std::string> outPath("o", cl::desc("Write D, M x N float32 (.npy)"), cl::value_desc("FILE"),
                             cl::sub(mmaCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(mmaCommand));

int usageError(const llvm::Twine &message) {
  llvm::errs() << "tilescope mma: error: " << message << "\n";
  return kInputError;
}

int fileError(llvm::StringRef path, const llvm::Twine &message) {
  llvm::errs() << path << ": error: " << message << "\n";
  return kInputError;
}

// Shortest decimal that reads back as the same f32.
std::string exact(float value) {
  char buffer[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, double(value));
    if (std::isnan(value) || std::strtof(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string_view statusName(mma::ModelStatus s) {
  switch (s) {
  case mma::ModelStatus::Measured:
    return "measured";
  case mma::ModelStatus::Reported:
    return "reported";
  case mma::ModelStatus::Unknown:
    return "unknown";
  }
  return "?";
}

// Reads one operand file into codes of `type` (f32 bits for f32), checking its
// shape and element type. Returns false after printing a diagnostic.
bool readOperand(const std::string &path, const char *what, Dtype type, int64_t rows, int64_t cols,
                 std::vector<uint32_t> &codes) {
  auto parsed = npy::readFile(path);
  if (!parsed) {
    llvm::handleAllErrors(parsed.takeError(), [&](const npy::NpyError &e) {
      fileError(path, "byte " + llvm::Twine(e.offset()) + ": " + e.what());
    });
    return false;
  }
  const npy::Array &array = *parsed;
  if (array.shape != std::vector<int64_t>{rows, cols}) {
    fileError(path, llvm::Twine("shape ") + shapeText(array.shape) + ", but " + instName +
                        " takes " + what + " as " + shapeText({rows, cols}));
    return false;
  }
  const numerics::FloatFormat &format = *numerics::floatFormat(type);
  const std::string typeName(mma::ptxTypeName(type));
  const bool isF32 = type == Dtype::f32;
  const int codeBits = format.codeBits();
  auto at = [&](size_t i) {
    return "element [" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "]";
  };
  codes.resize(array.elementCount());
  for (size_t i = 0; i < codes.size(); ++i) {
    uint32_t bits = array.bitsAt(i);
    switch (array.type) {
    case npy::ElementType::F32: {
      float value = numerics::floatOf(bits);
      if (isF32) {
        codes[i] = bits;
      } else if (!numerics::isRepresentable(value, format)) {
        fileError(path, at(i) + " = " + exact(value) + " is not exactly representable in " +
                            typeName + " (pass values that are, or raw " + typeName + " codes)");
        return false;
      } else {
        codes[i] = numerics::encode(value, format);
      }
      continue;
    }
    case npy::ElementType::U32:
      if (isF32) {
        codes[i] = bits;
        continue;
      }
      break;
    case npy::ElementType::F16:
      if (type == Dtype::f16) {
        codes[i] = bits;
        continue;
      }
      break;
    case npy::ElementType::U16:
      if (codeBits == 16) {
        codes[i] = bits;
        continue;
      }
      break;
    case npy::ElementType::U8:
      if (codeBits <= 8) {
        if (codeBits < 8 && bits >> codeBits) {
          fileError(path, at(i) + " = " + std::to_string(bits) + " is not a " + typeName +
                              " code (" + std::to_string(codeBits) + " bits)");
          return false;
        }
        codes[i] = bits;
        continue;
      }
      break;
    default:
      break;
    }
    std::string accepted = isF32            ? "'<f4' or '<u4' (f32 bits)"
                           : codeBits == 16 ? "'<u2' raw codes" +
                                                  std::string(type == Dtype::f16 ? ", '<f2'" : "") +
                                                  " or '<f4' exact values"
                           : codeBits <= 8 ? "'|u1' raw codes or '<f4' exact values"
                                           : "'<f4' exact values";
    fileError(path, "dtype '" + std::string(npy::descr(array.type)) + "' cannot hold " + typeName +
                        " operands (use " + accepted + ")");
    return false;
  }
  return true;
}

void printJson(const mma::MmaInstruction &inst, TargetKind target, const mma::MmaResult *result,
               const std::string &unknownReason) {
  llvm::json::OStream out(llvm::outs(), 2);
  const auto &row = *inst.row;
  out.object([&] {
    out.attribute("instruction", mma::instructionName(row, inst.n));
    out.attribute("target", std::string(targetInfo(target).name));
    out.attribute("m", inst.m);
    out.attribute("n", inst.n);
    out.attribute("k", inst.k);
    out.attributeObject("model", [&] {
      out.attribute("status", std::string(statusName(row.status)));
      if (row.status != mma::ModelStatus::Unknown) {
        out.attribute("alignBits", row.params.alignBits);
        out.attribute("outputMantissaBits", row.params.outputMantissaBits);
      }
      out.attribute("note", std::string(row.note));
    });
    if (!result) {
      out.attribute("error", unknownReason);
      return;
    }
    if (!outPath.empty())
      out.attribute("output", outPath);
    out.attributeArray("d", [&] {
      for (int i = 0; i < inst.m; ++i)
        out.array([&] {
          for (int j = 0; j < inst.n; ++j) {
            float v = numerics::floatOf(result->d[i * inst.n + j]);
            if (std::isfinite(v))
              out.value(double(v));
            else
              out.value(nullptr);
          }
        });
    });
    out.attributeArray("dBits", [&] {
      for (int i = 0; i < inst.m; ++i)
        out.array([&] {
          for (int j = 0; j < inst.n; ++j)
            {
            // "0x" and 8 hex digits (snprintf: llvm::formatv's integer
            // formatter draws a false -Wmaybe-uninitialized from gcc 12).
            char bits[16];
            std::snprintf(bits, sizeof bits, "0x%08x", result->d[i * inst.n + j]);
            out.value(bits);
          }
        });
    });
  });
  llvm::outs() << "\n";
}

int runMma() {
  auto target = targetFromName(targetName);
  if (!target)
    return usageError("unknown target '" + targetName + "' (known: sm_80, sm_90a, sm_100a)");
  std::string error;
  auto inst = mma::findInstruction(*target, instName, &error);
  if (!inst) {
    llvm::errs() << "tilescope mma: error: " << error << "\n";
    llvm::errs() << "tilescope mma: note: instructions of " << targetName << ":\n";
    for (const auto &row : mma::instructionTable())
      if (row.target == *target)
        llvm::errs() << "  " << mma::instructionPattern(row) << "\n";
    return kInputError;
  }
  const auto &row = *inst->row;
  if (row.status == mma::ModelStatus::Unknown) {
    std::string reason = "the numerics of " + mma::instructionName(row, inst->n) + " on " +
                         targetName + " are unknown (" + std::string(row.note) + ")";
    if (json)
      printJson(*inst, *target, nullptr, reason);
    else
      llvm::outs() << "unknown: " << reason << "\n";
    return kFindings;
  }
  if (row.scale && (scaleAPath.empty() || scaleBPath.empty()))
    return usageError(instName + " is block-scaled: give --scale-a and --scale-b");
  if (!row.scale && (!scaleAPath.empty() || !scaleBPath.empty()))
    return usageError(instName + " takes no block scales");

  const int64_t M = inst->m, N = inst->n, K = inst->k;
  std::vector<uint32_t> a, b, c(M * N, 0), scaleA, scaleB;
  if (!readOperand(aPath, "A", row.a, M, K, a) || !readOperand(bPath, "B", row.b, K, N, b))
    return kInputError;
  if (!cPath.empty() && !readOperand(cPath, "C", Dtype::f32, M, N, c))
    return kInputError;
  if (row.scale) {
    const int64_t blocks = K / row.scaleBlock;
    if (!readOperand(scaleAPath, "the scale of A", *row.scale, M, blocks, scaleA) ||
        !readOperand(scaleBPath, "the scale of B", *row.scale, blocks, N, scaleB))
      return kInputError;
  }

  mma::MmaResult result = mma::evaluate(*inst, {a, b, c, scaleA, scaleB});
  if (!result.ok)
    return usageError(result.error);
  if (!outPath.empty()) {
    npy::Array d = npy::fromBits(npy::ElementType::F32, {M, N}, result.d);
    if (auto err = npy::writeFile(outPath, d))
      return usageError(llvm::toString(std::move(err)));
  }
  if (json) {
    printJson(*inst, *target, &result, "");
    return kClean;
  }
  llvm::outs() << mma::instructionName(row, inst->n) << " on " << targetName << ": model "
               << statusName(row.status) << ", n = " << row.params.alignBits << ", "
               << row.params.outputMantissaBits << "-bit output mantissa\n";
  if (!outPath.empty()) {
    llvm::outs() << "D (" << M << " x " << N << ") written to " << outPath << "\n";
    return kClean;
  }
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      uint32_t bits = result.d[i * N + j];
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", bits);
      llvm::outs() << (j ? "  " : "") << hex << " " << exact(numerics::floatOf(bits));
    }
    llvm::outs() << "\n";
  }
  return kClean;
}

CommandRegistration registration(mmaCommand, runMma);
} // namespace
} // namespace tilescope::tool
