// QCustomPlot 2.1's header uses Qt's lower-case keywords (signals, foreach), which this project
// turns off (QT_NO_KEYWORDS: LibTorch uses the name `slots`). Include it through this file.
#pragma once

#ifdef QT_NO_KEYWORDS
#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach
#else
#include <qcustomplot.h>
#endif
