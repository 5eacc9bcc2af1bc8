# SPDX-License-Identifier: GPL-3.0-or-later
# cmake --install: the C++ library (the echo canceller, the engine, the CPU filters and, when built, the GPU
# kernels) with its public headers, as a CMake package (find_package(Quell): Quell::aec, Quell::dsp,
# Quell::kernels) and a pkg-config file (quell). Static archives: the project's own programs link them so.
set_target_properties(quell PROPERTIES EXPORT_NAME aec)
set_target_properties(quell_dsp PROPERTIES EXPORT_NAME dsp)
set(quell_library_targets quell quell_dsp quell_warnings)
if(QUELL_CUDA)
  set_target_properties(quell_kernels PROPERTIES EXPORT_NAME kernels)
  list(APPEND quell_library_targets quell_kernels)
endif()
# quell_warnings is linked privately (link-only for static archives): exported, it carries nothing to a
# consumer's compile.
install(TARGETS ${quell_library_targets} EXPORT QuellTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quell)
foreach(layer IN ITEMS aec dsp engine io)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/Source/${layer} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quell
    FILES_MATCHING PATTERN "*.h")
endforeach()
if(QUELL_CUDA)
  foreach(family IN ITEMS common rls iir fir kalman)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/Kernels/${family} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quell
      FILES_MATCHING PATTERN "*.h")
  endforeach()
endif()

set(quell_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Quell)
install(EXPORT QuellTargets NAMESPACE Quell:: DESTINATION ${quell_cmake_dir})
include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/QuellConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/QuellConfig.cmake INSTALL_DESTINATION ${quell_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/QuellConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/QuellConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/QuellConfigVersion.cmake
  DESTINATION ${quell_cmake_dir})

# pkg-config: the archives in link order, then what they need.
set(QUELL_PC_LIBS "-lquell")
set(QUELL_PC_CFLAGS "")
if(QUELL_CUDA)
  get_filename_component(quell_cuda_libdir ${QUELL_CUDART_STATIC_LIBRARY} DIRECTORY)
  string(APPEND QUELL_PC_LIBS " -lquell_kernels")
  set(quell_pc_cuda " -L${quell_cuda_libdir} -Wl,-rpath,${quell_cuda_libdir} -lcufft -lcudart_static -ldl -lrt")
  set(QUELL_PC_CFLAGS " -DQUELL_HAS_CUDA=1")
endif()
string(APPEND QUELL_PC_LIBS " -lquell_dsp${quell_pc_cuda} -pthread")
# Relocatable: the prefix is found from where the .pc file lies (cmake --install --prefix anywhere).
file(RELATIVE_PATH QUELL_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" QUELL_PC_TO_PREFIX "${QUELL_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/quell.pc.in ${CMAKE_CURRENT_BINARY_DIR}/quell.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/quell.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
