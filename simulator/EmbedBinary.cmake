# Writes OUTPUT, a C++ file holding the bytes of INPUT as the array SYMBOL
# (and its size as SYMBOLSize).
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" chars)
math(EXPR bytes "${chars} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT} by simulator/EmbedBinary.cmake. Do not edit.\n"
     "extern const unsigned char ${SYMBOL}[];\nextern const unsigned long ${SYMBOL}Size;\n"
     "const unsigned char ${SYMBOL}[] = {${body}};\n"
     "const unsigned long ${SYMBOL}Size = ${bytes};\n")
