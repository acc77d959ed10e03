# native-cuda/host/: the GPU-free half of the CUDA executor (execution
# schedules, stand-in kernel sizes, calibrated profiles, run reports). Built
# in every configuration, WASM included, so the suite tests it without a GPU;
# native-cuda/CMakeLists.txt adds the CUDA half when SCHEDLAB_BUILD_CUDA is on.
file(GLOB SCHEDLAB_GPU_HOST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/host/*.cpp)
add_library(schedlab_gpu_host STATIC ${SCHEDLAB_GPU_HOST_SOURCES})
target_link_libraries(schedlab_gpu_host PUBLIC schedlab_core)
target_compile_options(schedlab_gpu_host PRIVATE ${SCHEDLAB_WARNINGS})
