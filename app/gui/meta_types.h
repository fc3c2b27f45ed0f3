// The value types that cross from the training thread to the window by queued signals.
#pragma once

#include <QMetaType>

#include "run/run_spec.h"
#include "run/snapshot.h"

namespace nope::gui {

// Where the worker's current model came from: the window reacts to each differently (a loaded
// model brings its own settings to the form).
enum class ModelOrigin { Initialized, Checkpoint, SavedModel };

}  // namespace nope::gui

Q_DECLARE_METATYPE(nope::gui::ModelOrigin)
Q_DECLARE_METATYPE(nope::Snapshot)
Q_DECLARE_METATYPE(nope::PromptAnalysis)
Q_DECLARE_METATYPE(nope::RunSpec)
Q_DECLARE_METATYPE(nope::ProbeReport)
Q_DECLARE_METATYPE(nope::ProbeConfig)

namespace nope::gui {

// Call once before the first queued connection.
void registerMetaTypes();

}  // namespace nope::gui
