#include "gui/meta_types.h"

namespace nope::gui {

void registerMetaTypes() {
    qRegisterMetaType<nope::gui::ModelOrigin>("nope::gui::ModelOrigin");
    qRegisterMetaType<nope::gui::ModelReady>("nope::gui::ModelReady");
    qRegisterMetaType<nope::Snapshot>("nope::Snapshot");
    qRegisterMetaType<nope::PromptAnalysis>("nope::PromptAnalysis");
    qRegisterMetaType<nope::RunSpec>("nope::RunSpec");
    qRegisterMetaType<nope::ProbeReport>("nope::ProbeReport");
    qRegisterMetaType<nope::ProbeConfig>("nope::ProbeConfig");
}

}  // namespace nope::gui
