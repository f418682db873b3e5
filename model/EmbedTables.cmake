# Writes OUTPUT, a C++ file holding every tuning table of INPUTS
# ('|'-separated) as a string (model/TuningTable.h reads them).
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "// Generated from model/tables/*.json by model/EmbedTables.cmake. Do not edit.\n")
string(APPEND body "#include \"model/MachineData.h\"\n\nnamespace tilescope::model {\n")
string(APPEND body "const std::vector<BundledTable> &bundledTables() {\n")
string(APPEND body "  static const std::vector<BundledTable> files = {\n")
foreach(path ${INPUTS})
  get_filename_component(name ${path} NAME)
  file(READ ${path} text)
  string(APPEND body "    {\"${name}\", R\"ts_table(${text})ts_table\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n} // namespace tilescope::model\n")
file(WRITE ${OUTPUT} "${body}")
