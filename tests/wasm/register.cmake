# The WASM and browser tests, registered in the NATIVE build (included by the
# root CMakeLists.txt when SCHEDLAB_WEB_TESTS is ON), so one `ctest` runs the
# native suite, the same suite compiled to WASM under node, the WASM/native
# byte-for-byte check and the browser tests:
#   wasm_build      builds the WASM targets (incremental) into SCHEDLAB_WASM_BUILD_DIR
#   web_build       writes the playground into <build>/web-site (scripts/build-web.sh)
#   wasm_suite      node <wasm>/schedlab_tests.js: the Catch2 suite under node
#   wasm_parity     tests/wasm/plan-parity.js: WASM plan == CLI plan on every fixture (+ bench)
#   web_browser     tests/web/playground.test.js: the page and the widget in headless Chromium (+ bench)
#   web_workbench   tests/web/workbench.test.js: comm passes, cancel, keyboard, layouts, CORS, memory
#                   and timeline views, search, trace, URL state, accessibility (+ 100k-node bench)
#   web_evidence    tests/web/evidence.test.js: measurements beside the plan, one truth about memory,
#                   will it fit, honest pass statistics, the first visit, keyboard and scale (issue 28)
find_program(SCHEDLAB_NODE node REQUIRED)
set(SCHEDLAB_WASM_BUILD_DIR "${CMAKE_BINARY_DIR}/wasm" CACHE PATH "Build directory of the WASM targets (scripts/build-wasm.sh)")
set(SCHEDLAB_WEB_SITE_DIR "${CMAKE_BINARY_DIR}/web-site")

# Only what the tests use: the Embind module and the suite (not the WASM CLI).
add_test(NAME wasm_build COMMAND ${CMAKE_SOURCE_DIR}/scripts/build-wasm.sh ${SCHEDLAB_WASM_BUILD_DIR} schedlab_wasm schedlab_tests)
set_tests_properties(wasm_build PROPERTIES FIXTURES_SETUP wasm TIMEOUT 1800 PROCESSORS 2)  # a -j2 build: both of ctest -j2's slots

add_test(NAME web_build COMMAND ${CMAKE_COMMAND} -E env WASM_BUILD_DIR=${SCHEDLAB_WASM_BUILD_DIR}
                                ${CMAKE_SOURCE_DIR}/scripts/build-web.sh ${SCHEDLAB_WEB_SITE_DIR})
set_tests_properties(web_build PROPERTIES FIXTURES_SETUP web FIXTURES_REQUIRED wasm TIMEOUT 600)

add_test(NAME wasm_suite COMMAND ${SCHEDLAB_NODE} ${SCHEDLAB_WASM_BUILD_DIR}/schedlab_tests.js --use-colour no)
set_tests_properties(wasm_suite PROPERTIES FIXTURES_REQUIRED wasm TIMEOUT 900)

add_test(NAME wasm_parity COMMAND ${SCHEDLAB_NODE} ${CMAKE_SOURCE_DIR}/tests/wasm/plan-parity.js
                                  --cli $<TARGET_FILE:schedlab> --wasm ${SCHEDLAB_WASM_BUILD_DIR} --data ${CMAKE_SOURCE_DIR}/tests/data)
set_tests_properties(wasm_parity PROPERTIES FIXTURES_REQUIRED wasm TIMEOUT 600)

add_test(NAME web_browser COMMAND ${SCHEDLAB_NODE} ${CMAKE_SOURCE_DIR}/tests/web/playground.test.js
                                  --site ${SCHEDLAB_WEB_SITE_DIR} --cli $<TARGET_FILE:schedlab> --shots ${CMAKE_BINARY_DIR}/web-shots)
# The browser tests run alone: each drives a Chromium whose page plans in a
# worker, and beside another test on a 2-core machine their waits on what the
# page shows while planning race the planner (seen: an example planned
# while the last one's details were still read).
set_tests_properties(web_browser PROPERTIES FIXTURES_REQUIRED web TIMEOUT 600 RUN_SERIAL ON)

add_test(NAME web_workbench COMMAND ${SCHEDLAB_NODE} ${CMAKE_SOURCE_DIR}/tests/web/workbench.test.js
                                    --site ${SCHEDLAB_WEB_SITE_DIR} --cli $<TARGET_FILE:schedlab> --shots ${CMAKE_BINARY_DIR}/web-shots)
set_tests_properties(web_workbench PROPERTIES FIXTURES_REQUIRED web TIMEOUT 900 RUN_SERIAL ON)

add_test(NAME web_evidence COMMAND ${SCHEDLAB_NODE} ${CMAKE_SOURCE_DIR}/tests/web/evidence.test.js
                                   --site ${SCHEDLAB_WEB_SITE_DIR} --cli $<TARGET_FILE:schedlab> --shots ${CMAKE_BINARY_DIR}/web-shots)
set_tests_properties(web_evidence PROPERTIES FIXTURES_REQUIRED web TIMEOUT 900 RUN_SERIAL ON)
