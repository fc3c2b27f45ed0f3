// The value types that cross from the training thread to the window by queued signals.
#pragma once

#include <QMetaType>

#include "run/run_spec.h"
#include "run/snapshot.h"

Q_DECLARE_METATYPE(nope::Snapshot)
Q_DECLARE_METATYPE(nope::RunSpec)
Q_DECLARE_METATYPE(nope::ProbeReport)
Q_DECLARE_METATYPE(nope::ProbeConfig)

namespace nope::gui {

// Call once before the first queued connection.
void registerMetaTypes();

}  // namespace nope::gui
