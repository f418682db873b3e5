# Writes OUTPUT, a C++ file holding INPUT (codegen/runtime/ts_devices.cuh) as
# a string, so `tilescope lower --verify-ptx` can compile devices kernels
# without the source tree.
file(READ ${INPUT} text)
set(body "// Generated from codegen/runtime/ts_devices.cuh by codegen/EmbedRuntime.cmake. Do not edit.\n")
string(APPEND body "#include \"codegen/RuntimeHeader.h\"\n\nnamespace tilescope::codegen {\n")
string(APPEND body "const char *deviceRuntimeHeader() {\n  return R\"ts_runtime(${text})ts_runtime\";\n}\n")
string(APPEND body "} // namespace tilescope::codegen\n")
file(WRITE ${OUTPUT} "${body}")
