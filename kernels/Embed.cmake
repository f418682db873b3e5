# Writes OUTPUT, a C++ file holding every file of INPUTS ('|'-separated) as a
# string.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "// Generated from kernels/*.tile by kernels/Embed.cmake. Do not edit.\n")
string(APPEND body "#include \"kernels/BundledKernels.h\"\n\nnamespace tilescope {\n")
string(APPEND body "const std::vector<BundledKernelFile> &bundledKernelFiles() {\n")
string(APPEND body "  static const std::vector<BundledKernelFile> files = {\n")
foreach(path ${INPUTS})
  get_filename_component(name ${path} NAME)
  file(READ ${path} text)
  string(APPEND body "    {\"${name}\", R\"tilescope_kernel(${text})tilescope_kernel\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n} // namespace tilescope\n")
file(WRITE ${OUTPUT} "${body}")
