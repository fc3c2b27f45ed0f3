#include "meta_types.h"

namespace nope::gui {

void registerMetaTypes() {
    qRegisterMetaType<nope::Snapshot>("nope::Snapshot");
    qRegisterMetaType<nope::RunSpec>("nope::RunSpec");
}

}  // namespace nope::gui
