# cmake -DYAML=<native_functions.yaml> -DOUTPUT=<file> -P operator_names.cmake
# Writes the names ("add.out", "add_.Tensor") of the operators the YAML defines, one C++ string
# literal a line, for functional_variant.cpp (Note [Functional variants]). Rewrites OUTPUT only
# when the list changed, so that editing an operator's dispatch entries rebuilds nothing here.
file(STRINGS ${YAML} lines REGEX "^- func: ")
set(text "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^- func: ([A-Za-z0-9_.]+)\\(.*$" "\\1" name "${line}")
  string(APPEND text "\"${name}\",\n")
endforeach()
file(WRITE ${OUTPUT}.tmp "${text}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
