# The packages a user installs (issue 29), each built, installed in a fresh
# environment and used from outside the checkout:
#   python_wheel  tests/package/wheel-smoke.sh: the wheel built in one fresh
#                 venv (offline, reusing this build tree), installed in
#                 another; the CLI, the bindings, the exporter and apply
if(TARGET schedlab_python AND SCHEDLAB_PYTHON3)
  add_test(NAME python_wheel COMMAND ${CMAKE_SOURCE_DIR}/tests/package/wheel-smoke.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(python_wheel PROPERTIES ENVIRONMENT "PYTHON=${SCHEDLAB_PYTHON3}" TIMEOUT 900)
endif()
