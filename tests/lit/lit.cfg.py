# lit configuration for the tilescope command-line tests.
import os
import lit.formats

config.name = "tilescope"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".tile"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.tilescope_bin), "tests", "lit-out")

config.environment["PATH"] = os.pathsep.join(
    [config.tilescope_bin, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%tilescope", os.path.join(config.tilescope_bin, "tilescope")))
# `%expect-exit N cmd...` runs cmd, passes its output through and succeeds only
# when cmd exits with status N.
config.substitutions.append(
    ("%expect-exit", os.path.join(config.test_source_root, "expect-exit.sh")))
config.substitutions.append(("%kernels", os.path.join(config.source_root, "kernels")))
config.substitutions.append(("%python", config.python))
# `%fixed-twin FILE` prints the fixed twin of a bug-corpus kernel (tests/lit/bugs/README.md).
config.substitutions.append(
    ("%fixed-twin", config.python + " " + os.path.join(config.test_source_root, "fixed-twin.py")))
