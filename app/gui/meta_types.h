// The value types that cross from the training thread to the window by queued signals.
#pragma once

#include <QMetaType>
#include <QString>

#include "run/run_spec.h"
#include "run/snapshot.h"

namespace nope::gui {

// Where the worker's current model came from: the window reacts to each differently (a loaded
// model brings its own settings to the form).
enum class ModelOrigin { Initialized, Checkpoint, SavedModel };

// What the worker says once a model is ready: its settings, where it came from and its step.
struct ModelReady {
    RunSpec spec;  // a loaded model's own settings, which replace the form's
    QString message;
    ModelOrigin origin = ModelOrigin::Initialized;
    QString path;  // the checkpoint or model file read; empty for an initialized model
    int step = 0;  // the weights' optimizer steps; -1 when a model file does not say
};

}  // namespace nope::gui

Q_DECLARE_METATYPE(nope::gui::ModelOrigin)
Q_DECLARE_METATYPE(nope::gui::ModelReady)
Q_DECLARE_METATYPE(nope::Snapshot)
Q_DECLARE_METATYPE(nope::PromptAnalysis)
Q_DECLARE_METATYPE(nope::RunSpec)
Q_DECLARE_METATYPE(nope::ProbeReport)
Q_DECLARE_METATYPE(nope::ProbeConfig)

namespace nope::gui {

// Call once before the first queued connection.
void registerMetaTypes();

}  // namespace nope::gui
