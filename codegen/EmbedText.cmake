# Writes OUTPUT, a C++ file defining `const char *FUNCTION()` in
# tilescope::codegen that returns the text of INPUT, so that tilescope carries
# its CUDA sources (the device-scale runtime, the preludes of codegen/prelude)
# without the source tree. Leading lines starting with "//!" describe the file
# and are not copied; every other byte is.
file(READ ${INPUT} text)
string(REGEX REPLACE "^(//![^\n]*\n)+" "" text "${text}")
file(RELATIVE_PATH source ${SOURCE_DIR} ${INPUT})
set(body "// Generated from ${source} by codegen/EmbedText.cmake. Do not edit.\n")
string(APPEND body "#include \"codegen/RuntimeHeader.h\"\n\nnamespace tilescope::codegen {\n")
string(APPEND body "const char *${FUNCTION}() {\n  return R\"ts_text(${text})ts_text\";\n}\n")
string(APPEND body "} // namespace tilescope::codegen\n")
file(WRITE ${OUTPUT} "${body}")
