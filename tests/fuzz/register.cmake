# The hardening tests (issue: nothing hangs, nothing explodes), registered in
# the native build when SCHEDLAB_HARDENING_TESTS is ON:
#   adversarial           tests/adversarial/run.py against this build's CLI: every
#                         hostile input's exit code and message, huge shapes
#                         bounded by a timeout (their times are bench lines)
#   sanitize_build        a clang ASan+UBSan sub-build (suite, CLI, fuzzers)
#   sanitized_suite       the Catch2 suite under the sanitizers
#   sanitized_adversarial the corpus's small cases against the sanitized CLI
#   hostile               issue 30's corpus (tests/hostile: profiles, measured
#                         files, folder walks, generators' limits, the output
#                         policy), each case bounded in time and resident memory
#   sanitized_hostile     the same against the sanitized CLI (but the cases that
#                         need an address-space limit, which ASan cannot run in)
#   fuzz_loader/fuzz_plan each libFuzzer target for SCHEDLAB_FUZZ_SECONDS on a
#                         generated seed corpus
#   fuzz_profile/fuzz_measured/fuzz_trace the profile, measured-file and measured-trace readers, for
#                         SCHEDLAB_FUZZ_READER_SECONDS each
find_program(SCHEDLAB_CLANGXX NAMES clang++ clang++-14 REQUIRED)
find_program(SCHEDLAB_CLANG NAMES clang clang-14 REQUIRED)
find_program(SCHEDLAB_PYTHON3_H python3 REQUIRED)
set(SCHEDLAB_FUZZ_SECONDS 45 CACHE STRING "Seconds each fuzz target runs in ctest")
set(SCHEDLAB_FUZZ_READER_SECONDS 30 CACHE STRING "Seconds each reader fuzz target (profiles, measured files) runs in ctest")
set(SCHEDLAB_SANITIZE_DIR "${CMAKE_BINARY_DIR}/sanitize")
set(SCHEDLAB_SANITIZER_ENV "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1" "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")

add_test(NAME adversarial COMMAND ${SCHEDLAB_PYTHON3_H} ${CMAKE_SOURCE_DIR}/tests/adversarial/run.py
                                  --cli $<TARGET_FILE:schedlab> --timeout 60)
set_tests_properties(adversarial PROPERTIES TIMEOUT 1200)

add_test(NAME sanitize_build COMMAND ${CMAKE_COMMAND} -E env CC=${SCHEDLAB_CLANG} CXX=${SCHEDLAB_CLANGXX}
         ${CMAKE_SOURCE_DIR}/tests/fuzz/build-sanitized.sh ${CMAKE_SOURCE_DIR} ${SCHEDLAB_SANITIZE_DIR})
set_tests_properties(sanitize_build PROPERTIES FIXTURES_SETUP sanitize TIMEOUT 2400 PROCESSORS 2)  # a -j2 build: both of ctest -j2's slots

add_test(NAME sanitized_suite COMMAND ${CMAKE_COMMAND} -E env ${SCHEDLAB_SANITIZER_ENV}
                                      ${SCHEDLAB_SANITIZE_DIR}/schedlab_tests --use-colour no)
set_tests_properties(sanitized_suite PROPERTIES FIXTURES_REQUIRED sanitize TIMEOUT 1800)

add_test(NAME sanitized_adversarial COMMAND ${CMAKE_COMMAND} -E env ${SCHEDLAB_SANITIZER_ENV}
         ${SCHEDLAB_PYTHON3_H} ${CMAKE_SOURCE_DIR}/tests/adversarial/run.py --cli ${SCHEDLAB_SANITIZE_DIR}/schedlab
         --no-scale --timeout 60)
set_tests_properties(sanitized_adversarial PROPERTIES FIXTURES_REQUIRED sanitize TIMEOUT 900)

# Issue 30's corpus: time and resident memory bounded per case (ASan's
# shadow memory counts in the sanitized run's resident size).
add_test(NAME hostile COMMAND ${SCHEDLAB_PYTHON3_H} ${CMAKE_SOURCE_DIR}/tests/adversarial/run.py --set hostile
                              --cli $<TARGET_FILE:schedlab> --timeout 60 --max-rss-mb 512)
set_tests_properties(hostile PROPERTIES TIMEOUT 900)
add_test(NAME sanitized_hostile COMMAND ${CMAKE_COMMAND} -E env ${SCHEDLAB_SANITIZER_ENV}
         ${SCHEDLAB_PYTHON3_H} ${CMAKE_SOURCE_DIR}/tests/adversarial/run.py --set hostile --sanitized
         --cli ${SCHEDLAB_SANITIZE_DIR}/schedlab --timeout 120 --max-rss-mb 1024)
set_tests_properties(sanitized_hostile PROPERTIES FIXTURES_REQUIRED sanitize TIMEOUT 1200)

foreach(target fuzz_loader fuzz_plan)
  add_test(NAME ${target} COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run-fuzzer.sh ${SCHEDLAB_SANITIZE_DIR}/${target}
                                  ${CMAKE_SOURCE_DIR}/tests/data ${CMAKE_BINARY_DIR}/fuzz-${target} ${SCHEDLAB_FUZZ_SECONDS})
  set_tests_properties(${target} PROPERTIES FIXTURES_REQUIRED sanitize TIMEOUT 900)
endforeach()

foreach(pair fuzz_profile:profile fuzz_measured:measured fuzz_trace:trace)
  string(REPLACE ":" ";" pair ${pair})
  list(GET pair 0 target)
  list(GET pair 1 seeds)
  add_test(NAME ${target} COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run-fuzzer.sh ${SCHEDLAB_SANITIZE_DIR}/${target}
                                  ${CMAKE_SOURCE_DIR}/tests/data ${CMAKE_BINARY_DIR}/fuzz-${target} ${SCHEDLAB_FUZZ_READER_SECONDS} ${seeds})
  set_tests_properties(${target} PROPERTIES FIXTURES_REQUIRED sanitize TIMEOUT 600)
endforeach()
