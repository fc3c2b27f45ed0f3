// Stands in for a LibTorch header when widgets/ is compiled (widgets/CMakeLists.txt puts this
// folder first on the include path): a panel draws value types from core and never includes
// LibTorch, directly or through a core header that does (see CONTRIBUTING.md, "Layers").
#error "widgets/ must not include LibTorch: panels draw value types from core"
