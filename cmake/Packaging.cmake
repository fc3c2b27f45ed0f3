# Install rules and the Debian package: `cmake --install` puts the executables in bin and the
# desktop file, icons and AppStream metadata under share; `cpack -G DEB` in the build folder (or
# scripts/package.sh) makes nopescope_<version>_<arch>.deb from the same rules.
include(GNUInstallDirs)

install(TARGETS nopescope-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET nopescope)
    install(TARGETS nopescope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    set(resources ${PROJECT_SOURCE_DIR}/resources)
    install(FILES ${resources}/nopescope.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
    install(FILES ${resources}/io.github.nopescope.NoPEScope.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
    install(FILES ${resources}/icons/nopescope.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
    foreach(size 16 24 32 48 64 128 256)
        install(FILES ${resources}/icons/hicolor/${size}x${size}/apps/nopescope.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
    endforeach()
endif()

# The man pages (app/CMakeLists.txt generates them from the programs' help) and the user guide,
# which the window's Help menu opens from here when it is installed.
install(FILES ${PROJECT_BINARY_DIR}/man/nopescope-cli.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(TARGET nopescope)
    install(FILES ${PROJECT_BINARY_DIR}/man/nopescope.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/nopescope)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/nopescope/docs
    FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

set(CPACK_PACKAGE_NAME nopescope)
set(CPACK_PACKAGE_VENDOR NoPEScope)
set(CPACK_PACKAGE_CONTACT "NoPEScope maintainers <dev@nopescope.invalid>" CACHE STRING
    "The Debian package's Maintainer field")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "position information in transformers without positional encodings")
set(CPACK_PACKAGE_DESCRIPTION
    "NoPEScope trains small nanoGPT-style causal transformers without positional encodings\n\
on synthetic tasks and shows, live, the self-cosine-similarity heatmaps of their hidden\n\
states, the adjacency score of every layer over training and position probes. The package\n\
holds the window (nopescope) and the command line tool (nopescope-cli).")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # nopescope_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The libraries the executables link (LibTorch, oneDNN, Qt 6, QCustomPlot...) with their versions,
# found by dpkg-shlibdeps (packages dpkg-dev and file). LibTorch's BLAS is an alternative
# (libblas.so.3) that dpkg-shlibdeps cannot see: OpenBLAS with OpenMP makes its matrix products
# 20 times faster than the reference BLAS, so it is a dependency of its own.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-openmp, libqt6printsupport6")
include(CPack)
