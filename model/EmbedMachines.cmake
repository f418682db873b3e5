# Writes OUTPUT, a C++ file holding every machine description of INPUTS
# ('|'-separated) as a string, keyed by the target its file name starts with
# (h100_sxm.json -> "h100").
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "// Generated from model/machines/*.json by model/EmbedMachines.cmake. Do not edit.\n")
string(APPEND body "#include \"model/MachineData.h\"\n\nnamespace tilescope::model {\n")
string(APPEND body "const std::vector<BundledMachine> &bundledMachines() {\n")
string(APPEND body "  static const std::vector<BundledMachine> files = {\n")
foreach(path ${INPUTS})
  get_filename_component(name ${path} NAME_WE)
  string(REGEX REPLACE "_.*" "" target "${name}")
  file(READ ${path} text)
  string(APPEND body "    {\"${target}\", R\"ts_machine(${text})ts_machine\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n} // namespace tilescope::model\n")
file(WRITE ${OUTPUT} "${body}")
