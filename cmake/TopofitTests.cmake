# Helpers so that each directory turns its *_test.cc files into one doctest binary whose test cases
# CTest lists one by one (so the closing line counts real test cases), and its *_perftest.cc files
# into Google Benchmark binaries (built, not run by the tests).
include(${doctest_DIR}/doctest.cmake)

# unit_tests: every binary `ctest -L unit` runs (CI's sanitized build builds this target, not the tools).
add_custom_target(unit_tests)

add_library(topofit_doctest_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/../test/doctest_main.cc)
target_link_libraries(topofit_doctest_main PUBLIC doctest::doctest)

# topofit_add_test_binary(NAME <name> SOURCES <files...> LIBS <libs...> [LABELS <labels...>])
function(topofit_add_test_binary)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_SOURCES)
    message(FATAL_ERROR "topofit_add_test_binary(${T_NAME}): no sources")
  endif()
  # CTest splits a discovered name at ';' and then runs filters that match no test case: such a
  # test would pass without running.
  foreach(src ${T_SOURCES})
    file(STRINGS ${src} semicolon_names REGEX "TEST_CASE\\(\"[^\"]*;")
    if(semicolon_names)
      message(FATAL_ERROR "${src}: a TEST_CASE name contains ';', which CTest cannot run: ${semicolon_names}")
    endif()
  endforeach()
  add_executable(${T_NAME} ${T_SOURCES} $<TARGET_OBJECTS:topofit_doctest_main>)
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} doctest::doctest)
  target_compile_definitions(${T_NAME} PRIVATE
    TOPOFIT_FIXTURES_DIR="${TOPOFIT_FIXTURES_DIR}"
    TOPOFIT_TRACES_DIR="${TOPOFIT_TRACES_DIR}"
    TOPOFIT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if("unit" IN_LIST T_LABELS)
    add_dependencies(unit_tests ${T_NAME})
  endif()
  doctest_discover_tests(${T_NAME} TEST_PREFIX "${T_NAME}: " PROPERTIES LABELS "${T_LABELS}")
endfunction()

# topofit_add_perftest(<dir>/<name>_perftest.cc LIBS <libs...>): a Google Benchmark binary <name>_perftest.
function(topofit_add_perftest src)
  cmake_parse_arguments(P "" "" "LIBS" ${ARGN})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE ${P_LIBS} benchmark::benchmark benchmark::benchmark_main)
endfunction()
