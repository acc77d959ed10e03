# Settings for the WebAssembly build (emcmake cmake; see scripts/build-wasm.sh),
# included by the root CMakeLists.txt before any target exists so that every
# object file (core, tests, bindings) is compiled the same way.
#
# Emscripten must never see the host's /usr/include (its libc headers break the
# build), so the two header-only libraries are found on the host and exposed
# through build-local folders that hold nothing but them (three: CLI11 too).

function(schedlab_host_header_dir out_var header)
  get_filename_component(top "${header}" DIRECTORY)  # "nlohmann" for nlohmann/json.hpp
  find_path(_found "${header}" PATHS /usr/include /usr/local/include NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(NOT _found)
    message(FATAL_ERROR "WASM build: ${header} not found on the host (apt-get install nlohmann-json3-dev catch2 libcli11-dev)")
  endif()
  set(dir "${CMAKE_BINARY_DIR}/host-headers/${top}")
  file(MAKE_DIRECTORY "${dir}")
  if(NOT EXISTS "${dir}/${top}")
    file(CREATE_LINK "${_found}/${top}" "${dir}/${top}" SYMBOLIC)
  endif()
  unset(_found CACHE)
  set(${out_var} "${dir}" PARENT_SCOPE)
endfunction()

schedlab_host_header_dir(SCHEDLAB_NLOHMANN_DIR nlohmann/json.hpp)
schedlab_host_header_dir(SCHEDLAB_CATCH2_DIR catch2/catch.hpp)
schedlab_host_header_dir(SCHEDLAB_CLI11_DIR CLI/CLI.hpp)

add_library(nlohmann_json INTERFACE)
target_include_directories(nlohmann_json SYSTEM INTERFACE "${SCHEDLAB_NLOHMANN_DIR}")
add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)
add_library(CLI11 INTERFACE)
target_include_directories(CLI11 SYSTEM INTERFACE "${SCHEDLAB_CLI11_DIR}")
add_library(CLI11::CLI11 ALIAS CLI11)

# Native WebAssembly exceptions: the core reports bad input by throwing, and
# Emscripten's JS-emulated exceptions would route every call that may unwind
# through a JS trampoline (several times slower). Node 20 and current Chromium
# run them natively.
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions -sALLOW_MEMORY_GROWTH=1)
