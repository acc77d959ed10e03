# The packages a user installs (issue 29), each built, installed in a fresh
# environment and used from outside the checkout:
#   python_wheel  tests/package/wheel-smoke.sh: the wheel built in one fresh
#                 venv (offline, reusing this build tree), installed in
#                 another; the CLI, the bindings, the exporter and apply
#   npm_package   tests/package/npm-package.test.js: `npm pack ./web`,
#                 `npm install` of the tarball in a scratch project; node,
#                 tsc and Chromium use it (with the web tests: needs the WASM
#                 build, node, npm, Chromium, node-typescript)
if(TARGET schedlab_python AND SCHEDLAB_PYTHON3)
  add_test(NAME python_wheel COMMAND ${CMAKE_SOURCE_DIR}/tests/package/wheel-smoke.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(python_wheel PROPERTIES ENVIRONMENT "PYTHON=${SCHEDLAB_PYTHON3}" TIMEOUT 900)
endif()
if(SCHEDLAB_WEB_TESTS AND TARGET schedlab)
  add_test(NAME npm_package COMMAND ${SCHEDLAB_NODE} ${CMAKE_SOURCE_DIR}/tests/package/npm-package.test.js
                                    --wasm-build ${SCHEDLAB_WASM_BUILD_DIR} --cli $<TARGET_FILE:schedlab>)
  set_tests_properties(npm_package PROPERTIES FIXTURES_REQUIRED wasm TIMEOUT 600)
endif()
