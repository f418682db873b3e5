# tilescope_embed_files(VAR GLOB pattern HEADER h NAMESPACE ns FUNCTION f TYPE t
#                       KEY NAME|TARGET COMMENT text)
# Compiles every file matching GLOB into the build as a string (see
# cmake/EmbedFileList.cmake) and sets VAR to the generated source, so that the
# tools carry their data (kernels, machine descriptions, tuning tables)
# without the source tree and cannot drift from it.
function(tilescope_embed_files var)
  cmake_parse_arguments(E "" "GLOB;HEADER;NAMESPACE;FUNCTION;TYPE;KEY;COMMENT" "" ${ARGN})
  file(GLOB files CONFIGURE_DEPENDS ${E_GLOB})
  string(REPLACE ";" "|" file_list "${files}")
  file(RELATIVE_PATH source_desc ${CMAKE_SOURCE_DIR} ${E_GLOB})
  set(output ${CMAKE_CURRENT_BINARY_DIR}/Embedded_${E_FUNCTION}.cpp)
  set(script ${CMAKE_SOURCE_DIR}/cmake/EmbedFileList.cmake)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} "-DINPUTS=${file_list}" -DHEADER=${E_HEADER}
            -DNAMESPACE=${E_NAMESPACE} -DFUNCTION=${E_FUNCTION} -DTYPE=${E_TYPE} -DKEY=${E_KEY}
            -DSOURCE_DESC=${source_desc} -P ${script}
    DEPENDS ${files} ${script}
    COMMENT "${E_COMMENT}"
    VERBATIM)
  set(${var} ${output} PARENT_SCOPE)
endfunction()
