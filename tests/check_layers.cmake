# Fails when a core folder below the orchestrator includes it: the formulas (training/,
# compute/, serving/, rl/), the model and hardware below them, plan/ and the writers of
# results (report/, export/) read the result types from result/result.h, never
# estimate/estimate.h (issue 22: "six includes run upward"). Only the folders that run whole
# estimates (estimate/ itself, whatif/, search/) and the programs above the core include it.
set(below base model hardware kernels ops plan result training compute serving rl report export io)
set(bad)
set(n 0)
foreach(dir IN LISTS below)
  file(GLOB_RECURSE found "${ROOT}/core/${dir}/*.h" "${ROOT}/core/${dir}/*.cpp")
  foreach(f IN LISTS found)
    math(EXPR n "${n} + 1")
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"estimate/")
    if(lines)
      list(APPEND bad "${f}: ${lines}")
    endif()
  endforeach()
endforeach()
if(bad)
  list(JOIN bad "\n  " report)
  message(FATAL_ERROR "a core folder below estimate/ includes it (use result/result.h):\n  ${report}")
endif()
message(STATUS "includes run downward: ${n} files in ${below}")
