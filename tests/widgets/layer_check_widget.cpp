// Compiled as if it were a panel (widgets_layer_check in tests/CMakeLists.txt): a panel that
// includes a core header which includes LibTorch must not build. The `layers` test passes when
// this file fails to compile with the layer rule's message.
#include "model/gpt.h"
